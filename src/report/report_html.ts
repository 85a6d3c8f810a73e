// The run report: one self-contained HTML file (inline CSS, SVG and a few lines of script; no
// request leaves the page — its Content-Security-Policy allows nothing external and only the
// inline script whose hash it names).
import { toBase64 } from "../canonical/mod.ts";
import { sha256 } from "../crypto/mod.ts";
import { VERSION } from "../meta/mod.ts";
import baseCss from "./assets/base.css" with { type: "text" };
import reportScript from "./assets/report.js" with { type: "text" };
import { clockTime, esc } from "./_html.ts";
import { taskGraphSvg } from "./graph_svg.ts";
import type { RunModel } from "./model.ts";
import {
  attachmentsTable,
  attemptsTable,
  costTable,
  gatesTable,
  headline,
  noticesList,
  refusedList,
  tasksTable,
  verificationList,
} from "./sections.ts";
import { timelineLegend, timelineSvg } from "./timeline_svg.ts";

/** The CSP `'sha256-…'` source of an inline script or style. */
export function cspHash(text: string): string {
  return `'sha256-${toBase64(sha256(new TextEncoder().encode(text)))}'`;
}

function section(id: string, title: string, body: string): string {
  return `<section id="${id}" aria-labelledby="${id}-h"><h2 id="${id}-h">${
    esc(title)
  }</h2>\n${body}\n</section>`;
}

/**
 * The report of one run as a complete HTML document.
 *
 * @example
 * ```ts ignore
 * const html = renderReportHtml(buildRunModel(records, { nowMs: Date.now() }));
 * await Deno.writeTextFile("run.html", html);
 * ```
 */
export function renderReportHtml(model: RunModel): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspHash(baseCss)}`,
    `script-src ${cspHash(reportScript)}`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const r = model.run;
  const body = [
    `<div class="headline-wrap">${headline(model)}</div>`,
    section(
      "verification",
      "Verification (computed " + clockTime(model.generated_at) + " UTC)",
      verificationList(model),
    ),
    section(
      "timeline",
      "Timeline",
      `${timelineLegend()}<div class="figure">${timelineSvg(model)}</div>`,
    ),
    section("refused", "Refused merges", refusedList(model)),
    section("tasks", "Tasks", tasksTable(model, { anchors: true })),
    section("graph", "Task graph", `<div class="figure graph-wrap">${taskGraphSvg(model)}</div>`),
    `<div class="grid">${section("cost", "Cost and tokens per adapter", costTable(model))}${
      section("notices", "Notices", noticesList(model))
    }</div>`,
    section("attempts", "Attempts", attemptsTable(model)),
    section("gates", "Gate results", gatesTable(model)),
    section("attachments", "Attachments", attachmentsTable(model)),
  ].join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<meta name="generator" content="bernstein ${esc(VERSION)}">
<title>bernstein run ${esc(r.run_id)} — ${esc(r.health.toLowerCase())}</title>
<style>${baseCss}</style>
</head>
<body>
<a class="skip" href="#main">Skip to the report</a>
<header class="top"><span class="brand">bernstein · run report</span><span class="meta">generated ${
    esc(model.generated_at)
  } · bernstein ${esc(VERSION)}</span></header>
<main id="main">
${body}
</main>
<script>${reportScript}</script>
</body>
</html>
`;
}
