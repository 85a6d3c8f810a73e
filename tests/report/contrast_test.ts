// The report's and the dashboard's colours meet WCAG 2.1 AA contrast (4.5:1 for text) in the
// light and the dark scheme: every text colour on every background it is drawn on.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";

function variables(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of block.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6})\s*;/gi)) {
    out.set(m[1], m[2].toLowerCase());
  }
  return out;
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Text colour → the backgrounds it is drawn on. */
const PAIRS: [string, string[]][] = [
  ["fg", ["bg", "panel", "lane", "lane-odd"]],
  ["muted", ["bg", "panel", "lane", "lane-odd"]],
  ["link", ["bg", "panel"]],
  ["ok-fg", ["ok-bg", "bg", "panel"]],
  ["bad-fg", ["bad-bg", "bg", "panel"]],
  ["run-fg", ["run-bg", "bg", "panel"]],
  ["check-fg", ["check-bg"]],
  ["warn-fg", ["warn-bg", "bg", "panel"]],
  ["idle-fg", ["idle-bg"]],
];

/** Timeline bars carry white labels. */
const BARS = ["ph-spawn", "ph-work", "ph-gate", "ph-merge"];

Deno.test("contrast: every text colour meets 4.5:1 on its backgrounds, light and dark", async () => {
  const css = await Deno.readTextFile(join(REPO_ROOT, "src", "report", "assets", "base.css"));
  const darkAt = css.indexOf("@media (prefers-color-scheme: dark)");
  assert.ok(darkAt > 0, "no dark scheme");
  const light = variables(css.slice(0, darkAt));
  // The dark scheme's :root block ends at the first "}" after the media query opens.
  const dark = new Map([...light, ...variables(css.slice(darkAt, css.indexOf("}", darkAt)))]);
  const problems: string[] = [];
  for (const [scheme, vars] of [["light", light], ["dark", dark]] as const) {
    const get = (name: string) => {
      const value = vars.get(name);
      assert.ok(value, `${scheme}: --${name} is not defined`);
      return value;
    };
    for (const [text, backgrounds] of PAIRS) {
      for (const bg of backgrounds) {
        const ratio = contrast(get(text), get(bg));
        if (ratio < 4.5) problems.push(`${scheme}: --${text} on --${bg} is ${ratio.toFixed(2)}:1`);
      }
    }
    for (const bar of BARS) {
      const ratio = contrast("#ffffff", get(bar));
      if (ratio < 4.5) problems.push(`${scheme}: white on --${bar} is ${ratio.toFixed(2)}:1`);
    }
  }
  assert.deepEqual(problems, []);
});
