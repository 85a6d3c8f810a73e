// The dashboard's files, embedded in the module graph as text imports so `deno compile` puts
// them in the binary without any `--include` (tests/scripts/compile_test.ts checks they are
// there). Hand-written; no build step.
import baseCss from "./assets/base.css" with { type: "text" };
import dashboardCss from "./assets/dashboard.css" with { type: "text" };
import dashboardJs from "./assets/dashboard.js" with { type: "text" };
import { DASHBOARD_ASSET_PATHS } from "./dashboard_html.ts";

/** One served file. */
export interface DashboardAsset {
  /** `content-type` header. */
  contentType: string;
  /** The file's text. */
  body: string;
}

/** The dashboard's files by URL path. */
export const DASHBOARD_ASSETS: Readonly<Record<string, DashboardAsset>> = {
  [DASHBOARD_ASSET_PATHS.css]: {
    contentType: "text/css; charset=utf-8",
    body: `${baseCss}\n${dashboardCss}`,
  },
  [DASHBOARD_ASSET_PATHS.js]: {
    contentType: "text/javascript; charset=utf-8",
    body: dashboardJs,
  },
};
