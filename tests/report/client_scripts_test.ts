// The dashboard's and the report's hand-written browser scripts are plain JavaScript served as
// they are (no build step); this type-checks them against the DOM, strictly, in a program of
// their own (the DOM's types must not leak into the Deno code's check).
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const SCRIPTS = ["dashboard.js", "report.js"];

async function check(dir: string, files: string[]): Promise<{ code: number; text: string }> {
  const config = join(dir, "deno.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      compilerOptions: { checkJs: true, strict: true, lib: ["dom", "dom.iterable", "esnext"] },
    }),
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["check", "-q", "--no-lock", `--config=${config}`, ...files],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, text };
}

Deno.test("client scripts: dashboard.js and report.js type-check against the DOM", async () => {
  await withTempDir(async (dir) => {
    const files = SCRIPTS.map((f) => join(REPO_ROOT, "src", "report", "assets", f));
    const result = await check(dir, files);
    assert.equal(result.code, 0, result.text);
  });
});

Deno.test("client scripts: the check fails on a script with a type error", async () => {
  await withTempDir(async (dir) => {
    const bad = join(dir, "bad.js");
    await Deno.writeTextFile(bad, 'document.getElementById("x").textContent = 3;\n');
    const result = await check(dir, [bad]);
    assert.notEqual(result.code, 0);
    assert.match(result.text, /TS\d+/);
  });
});
