// Big and hostile configuration files: duplicate keys, alias bombs, oversized files, bytes
// that are not UTF-8, floods of the same problem. Each is one clear line, never a crash.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { BufferSink, main, Output } from "../../src/cli/mod.ts";
import {
  decodeConfigBytes,
  loadConfig,
  MAX_CONFIG_BYTES,
  MAX_PROBLEMS_PER_KIND,
  parseYamlLayer,
  resolveConfig,
} from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { readPlanFile } from "../../src/plan/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

async function cli(argv: string[], cwd: string) {
  const stdout = new BufferSink();
  const stderr = new BufferSink();
  const code = await main(argv, { out: new Output(stdout, stderr), env: mapEnv({}), cwd });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const ALIAS_BOMB = [
  "a: &a [x, x, x, x, x, x, x, x, x, x]",
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]",
  "",
].join("\n");

Deno.test("a duplicate key is a syntax error at the repeat, naming the first", () => {
  const r = parseYamlLayer("max_agents: 2\ncli: claude\nmax_agents: 5\n", "bernstein.yaml");
  deepStrictEqual(r.problems, [{
    severity: "error",
    code: "config.yaml_syntax",
    message: "duplicate key 'max_agents' (first at bernstein.yaml:1:1)",
    location: "bernstein.yaml:3:1",
  }]);
  const nested = parseYamlLayer(
    "tuning:\n  agent:\n    max_turns: 1\n    max_turns: 2\n",
    "b.yaml",
  );
  strictEqual(nested.problems[0].location, "b.yaml:4:5");
});

Deno.test("an alias bomb is config.yaml_syntax at its first alias; commands exit 2, not internal", async () => {
  const r = parseYamlLayer(ALIAS_BOMB, "bernstein.yaml");
  strictEqual(r.problems.length, 1);
  strictEqual(r.problems[0].code, "config.yaml_syntax");
  strictEqual(r.problems[0].location, "bernstein.yaml:2:8");
  ok(r.problems[0].message.includes("alias bomb"));
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), ALIAS_BOMB);
    const get = await cli(["config", "get", "max_agents"], dir);
    strictEqual(get.code, 2);
    ok(get.stderr.startsWith("error[config.yaml_syntax]: bernstein.yaml:2:8: "), get.stderr);
    const run = await cli(["run", "--dry-run", "--goal", "x"], dir);
    strictEqual(run.code, 2);
    ok(run.stderr.includes("error[config.yaml_syntax]: bernstein.yaml:2:8"), run.stderr);
    ok(!run.stderr.includes("internal"), run.stderr);
  });
});

Deno.test("a file over the cap is refused unread with one line", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const big = "# padding\n".repeat(Math.ceil((MAX_CONFIG_BYTES + 10) / 10));
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), big);
    const r = await cli(["config", "validate"], dir);
    strictEqual(r.code, 1);
    strictEqual(
      r.stderr,
      `error[config.too_large]: bernstein.yaml: ${big.length} bytes is over the ` +
        `${MAX_CONFIG_BYTES}-byte limit of a configuration or plan file; refused unread\n`,
    );
  });
});

Deno.test("non-UTF-8 bytes are refused with their byte offset, in config, overlay and plan files", async () => {
  const bytes = new Uint8Array([...new TextEncoder().encode("goal: caf"), 0xe9, 0x0a]);
  const decoded = decodeConfigBytes(bytes, "bernstein.yaml");
  ok("problem" in decoded);
  strictEqual(decoded.problem.code, "config.not_utf8");
  ok(decoded.problem.message.startsWith("byte offset 9 is not valid UTF-8"));
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeFile(join(dir, "bernstein.yaml"), bytes);
    const loaded = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(loaded.config, undefined, "nothing of the file is used");
    strictEqual(loaded.problems[0].code, "config.not_utf8");
    strictEqual(loaded.problems[0].location, "bernstein.yaml");
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    await Deno.writeFile(join(dir, ".git", "bernstein-overlay.yaml"), bytes);
    const overlay = await loadConfig({ cwd: dir, env: mapEnv({}) });
    strictEqual(overlay.problems[0].code, "config.not_utf8");
    await Deno.writeFile(join(dir, "plan.yaml"), bytes);
    const plan = await readPlanFile(join(dir, "plan.yaml"), { shownAs: "plan.yaml" }).then(
      () => undefined,
      (e: { problems: { code: string; message: string; location: string }[] }) => e.problems[0],
    );
    strictEqual(plan?.code, "plan.not_utf8");
    strictEqual(plan?.location, "plan.yaml");
    ok(plan?.message.startsWith("byte offset 9"));
  });
});

Deno.test("the same problem in fifty list items is one line with a count", () => {
  const items = Array.from({ length: 50 }, (_, i) => `  - {name: c${i}, colour: red}`).join("\n");
  const layer = parseYamlLayer(`cells:\n${items}\n`, "bernstein.yaml").layer;
  const r = resolveConfig({ layers: [layer], env: mapEnv({}) });
  const unknown = r.problems.filter((p) => p.code === "config.unknown_key");
  deepStrictEqual(unknown.map((p) => [p.location, p.message]), [
    ["bernstein.yaml:2:16", "unknown key 'colour' in cells.*; ignored (50 times)"],
  ]);
});

Deno.test("a flood of distinct problems shows the first few and counts the rest", () => {
  const keys = Array.from({ length: 500 }, (_, i) => `junk_${i}: 1`).join("\n");
  const r = resolveConfig({
    layers: [parseYamlLayer(keys, "bernstein.yaml", "bernstein.yaml").layer],
    env: mapEnv({}),
  });
  strictEqual(r.problems.length, MAX_PROBLEMS_PER_KIND + 1);
  deepStrictEqual(r.problems.at(-1), {
    severity: "warning",
    code: "config.unknown_key",
    message: `… and ${500 - MAX_PROBLEMS_PER_KIND} more like these`,
    location: "bernstein.yaml",
  });
});
