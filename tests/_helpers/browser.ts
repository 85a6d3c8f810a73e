// Browser tests' set-up: the system Chromium (tests are ignored, with the reason in their
// name, where it is missing), one browser per test on a throw-away profile, and screenshots
// written where a person can look at them ($BERNSTEIN_TEST_ARTIFACTS, else a temp dir).
import { join } from "node:path";
import { Browser, findChromium, type Page } from "../../scripts/cdp.ts";

/** The system Chromium, if installed. */
export const CHROMIUM: string | undefined = findChromium();

/** Why browser tests are ignored here (empty when they run). */
export const BROWSER_IGNORED_REASON = CHROMIUM === undefined
  ? "ignored: no chromium (apt-get install chromium; .ci/setup-services installs it)"
  : "";

/** A test name with the reason it is ignored appended when Chromium is missing. */
export function browserTestName(name: string): string {
  return BROWSER_IGNORED_REASON ? `${name} (${BROWSER_IGNORED_REASON})` : name;
}

let artifactDir: string | undefined;

/** Where screenshots go: $BERNSTEIN_TEST_ARTIFACTS, else one temp dir per test process. */
export async function artifactsDir(): Promise<string> {
  if (artifactDir !== undefined) return artifactDir;
  const given = Deno.env.get("BERNSTEIN_TEST_ARTIFACTS");
  const dir = given ?? await Deno.makeTempDir({ prefix: "bernstein-artifacts-" });
  await Deno.mkdir(dir, { recursive: true });
  if (given === undefined) console.log(`browser test screenshots: ${dir}`);
  artifactDir = dir;
  return dir;
}

/** Writes a screenshot artefact and returns its path. */
export async function saveScreenshot(page: Page, name: string, fullPage = true): Promise<string> {
  const path = join(await artifactsDir(), `${name}.png`);
  await Deno.writeFile(path, await page.screenshot({ fullPage }));
  return path;
}

/** Runs `fn` with a fresh browser on a temp profile; always closes it. */
export async function withBrowser<T>(fn: (browser: Browser) => Promise<T>): Promise<T> {
  if (CHROMIUM === undefined) throw new Error(BROWSER_IGNORED_REASON);
  const profile = await Deno.makeTempDir({ prefix: "bernstein-chromium-" });
  const browser = await Browser.launch(CHROMIUM, profile);
  try {
    return await fn(browser);
  } finally {
    await browser.close();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/** Requests that left the origin(s) a page may use (`data:` and `about:` are local). */
export function externalRequests(page: Page, allowedPrefixes: readonly string[]): string[] {
  return page.requests.filter((url) =>
    !url.startsWith("data:") && !url.startsWith("about:") &&
    !allowedPrefixes.some((prefix) => url.startsWith(prefix))
  );
}
