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

/**
 * What a screen-reader or keyboard user would miss on the page: no `lang`, a landmark, figure
 * or region without a name, a section whose heading reference is broken, a column header
 * without `scope`, a focusable element without a name, a skip link that does not lead to main.
 */
export function accessibilityProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const problems = [];
    if (!document.documentElement.lang) problems.push("html has no lang");
    for (const el of document.querySelectorAll("[role=img], [role=region], [role=group], svg")) {
      const named = el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") ||
        el.closest("[aria-hidden=true]");
      if (!named) problems.push("unnamed " + (el.getAttribute("role") || el.tagName));
    }
    for (const s of document.querySelectorAll("section[aria-labelledby]")) {
      if (!document.getElementById(s.getAttribute("aria-labelledby"))) {
        problems.push("section points at a missing heading");
      }
    }
    for (const th of document.querySelectorAll("thead th")) {
      if (th.getAttribute("scope") !== "col") problems.push("th without scope");
    }
    for (const el of document.querySelectorAll("a, button, [tabindex]")) {
      const name = (el.getAttribute("aria-label") || el.textContent || "").trim();
      if (!name) problems.push("focusable " + el.tagName + " without a name");
    }
    const skip = document.querySelector("a.skip");
    const target = skip && document.querySelector(skip.getAttribute("href"));
    if (!target || target.tagName !== "MAIN") problems.push("no skip link to main");
    return problems;
  })()`);
}

/** Presses a key (keyDown + keyUp) in the page. */
export async function pressKey(page: Page, key: "Tab" | "Enter"): Promise<void> {
  const code = key === "Tab" ? 9 : 13;
  for (const type of ["keyDown", "keyUp"]) {
    await page.send("Input.dispatchKeyEvent", {
      type,
      key,
      code: key,
      windowsVirtualKeyCode: code,
      ...(key === "Enter" && type === "keyDown" ? { text: "\r" } : {}),
    });
  }
}
