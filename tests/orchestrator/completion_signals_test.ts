import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { mapEnv } from "../../src/io/mod.ts";
import {
  decideSignal,
  evaluateCompletionSignals,
  type SignalEdges,
  worktreeEdges,
} from "../../src/orchestrator/mod.ts";
import type { CompletionSignal } from "../../src/plan/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

Deno.test("decideSignal: path, glob and file observations give met/unmet with a reason", () => {
  const path: CompletionSignal = { kind: "path_exists", path: "src/a.ts" };
  deepStrictEqual(decideSignal(path, { kind: "path", probe: { kind: "file" } }), {
    met: true,
    reason: "src/a.ts exists (file)",
  });
  deepStrictEqual(decideSignal(path, { kind: "path", probe: { kind: "missing" } }), {
    met: false,
    reason: "src/a.ts does not exist",
  });
  deepStrictEqual(
    decideSignal(path, { kind: "path", probe: { kind: "refused", reason: "leaves" } }),
    { met: false, reason: "src/a.ts refused: leaves" },
  );
  const glob: CompletionSignal = { kind: "glob_exists", glob: "t/*.ts" };
  deepStrictEqual(
    decideSignal(glob, {
      kind: "glob",
      probe: { matches: ["t/a.ts", "t/b.ts"], refused: [], truncated: false },
    }),
    { met: true, reason: "t/*.ts matches 2 paths (first: t/a.ts)" },
  );
  deepStrictEqual(
    decideSignal(glob, {
      kind: "glob",
      probe: { matches: [], refused: ["'t/x.ts' leaves w through a symlink"], truncated: true },
    }),
    {
      met: false,
      reason:
        "t/*.ts matches nothing (1 match(es) refused: 't/x.ts' leaves w through a symlink; the search stopped at its entry limit)",
    },
  );
  const contains: CompletionSignal = { kind: "file_contains", path: "a", contains: "foo" };
  const text = (t: string, truncated = false) =>
    ({ kind: "read", probe: { ok: true, text: t, truncated } }) as const;
  strictEqual(decideSignal(contains, text("a foo b")).met, true);
  deepStrictEqual(decideSignal(contains, text("bar", true)), {
    met: false,
    reason: 'a does not contain "foo" (only the start of the file was searched)',
  });
  deepStrictEqual(
    decideSignal(contains, {
      kind: "read",
      probe: { ok: false, missing: true, reason: "not found" },
    }),
    { met: false, reason: "a does not exist" },
  );
  const regex: CompletionSignal = { kind: "file_contains", path: "a", regex: "^# Usage$" };
  strictEqual(decideSignal(regex, text("intro\n# Usage\nmore")).met, true); // multiline
  strictEqual(decideSignal(regex, text("intro # Usage")).met, false);
});

Deno.test("decideSignal: command observations", () => {
  const test: CompletionSignal = { kind: "test_passes", command: ["deno", "test"] };
  const run = (probe: Parameters<typeof decideSignal>[1] & { kind: "run" }) => probe;
  deepStrictEqual(
    decideSignal(
      test,
      run({
        kind: "run",
        timeoutMs: 1000,
        probe: { started: true, code: 0, timedOut: false, output: "" },
      }),
    ),
    { met: true, reason: "deno test passed (exit 0)" },
  );
  deepStrictEqual(
    decideSignal(
      test,
      run({
        kind: "run",
        timeoutMs: 1000,
        probe: { started: true, code: 1, timedOut: false, output: "ok 1\nFAILED 2 tests\n\n" },
      }),
    ),
    { met: false, reason: "deno test failed (exit 1): FAILED 2 tests" },
  );
  deepStrictEqual(
    decideSignal(
      test,
      run({
        kind: "run",
        timeoutMs: 2500,
        probe: { started: true, code: 143, timedOut: true, output: "" },
      }),
    ),
    { met: false, reason: "deno test timed out after 2.5s" },
  );
  deepStrictEqual(
    decideSignal(
      test,
      run({ kind: "run", timeoutMs: 1, probe: { started: false, reason: "not found" } }),
    ),
    { met: false, reason: "deno test did not start: not found" },
  );
});

Deno.test("evaluation observes every signal in order through the injected edges", async () => {
  const calls: string[] = [];
  const edges: SignalEdges = {
    inspect: (p) => (calls.push(`inspect ${p}`), Promise.resolve({ kind: "missing" })),
    readText: (
      p,
    ) => (calls.push(`read ${p}`),
      Promise.resolve({ ok: true, text: "export x", truncated: false })),
    glob: (
      g,
    ) => (calls.push(`glob ${g}`),
      Promise.resolve({ matches: ["x"], refused: [], truncated: false })),
    run: (
      c,
      t,
    ) => (calls.push(`run ${c.join(" ")} ${t}`),
      Promise.resolve({ started: true, code: 0, timedOut: false, output: "fine" })),
  };
  const report = await evaluateCompletionSignals(
    [
      { kind: "path_exists", path: "a" },
      { kind: "file_contains", path: "b", contains: "export" },
      { kind: "glob_exists", glob: "*" },
      { kind: "test_passes", command: ["t"] },
      { kind: "test_passes", command: ["u"], timeout_s: 2 },
    ],
    edges,
    { defaultTimeoutMs: 7000 },
  );
  deepStrictEqual(calls, ["inspect a", "read b", "glob *", "run t 7000", "run u 2000"]);
  strictEqual(report.met, false);
  deepStrictEqual(report.results.map((r) => [r.index, r.met]), [
    [0, false],
    [1, true],
    [2, true],
    [3, true],
    [4, true],
  ]);
  strictEqual(report.results[3].output, "fine");
  deepStrictEqual(await evaluateCompletionSignals([], edges), { met: true, results: [] });
});

async function worktree(dir: string): Promise<string> {
  const wt = join(dir, "wt");
  await Deno.mkdir(join(wt, "src", "deep"), { recursive: true });
  await Deno.mkdir(join(wt, "tests"), { recursive: true });
  await Deno.mkdir(join(wt, ".git"), { recursive: true });
  await Deno.writeTextFile(join(wt, "src", "a.ts"), "export function greet() {}\n");
  await Deno.writeTextFile(join(wt, "src", "deep", "b_test.ts"), "Deno.test\n");
  await Deno.writeTextFile(join(wt, ".git", "x_test.ts"), "");
  await Deno.writeTextFile(join(dir, "secret.txt"), "TOP SECRET export function\n");
  await Deno.mkdir(join(dir, "outside"));
  await Deno.writeTextFile(join(dir, "outside", "c_test.ts"), "");
  await Deno.symlink(join(dir, "secret.txt"), join(wt, "src", "leak.ts"));
  await Deno.symlink(join(dir, "outside"), join(wt, "tests", "linked"));
  await Deno.symlink(join(wt, "src", "a.ts"), join(wt, "src", "alias.ts"));
  return wt;
}

Deno.test("real worktree: path_exists, glob_exists and file_contains, with symlink escapes refused", async () => {
  await withTempDir(async (dir) => {
    const wt = await worktree(dir);
    const edges = worktreeEdges(wt, { env: mapEnv({ PATH }) });
    const report = await evaluateCompletionSignals([
      { kind: "path_exists", path: "src/a.ts" },
      { kind: "path_exists", path: "src/deep" },
      { kind: "path_exists", path: "src/missing.ts" },
      { kind: "path_exists", path: "src/alias.ts" },
      { kind: "path_exists", path: "src/leak.ts" },
      { kind: "glob_exists", glob: "src/**/*_test.ts" },
      { kind: "glob_exists", glob: "**/x_test.ts" },
      { kind: "glob_exists", glob: "tests/linked/*.ts" },
      { kind: "glob_exists", glob: "src/*.ts" },
      { kind: "file_contains", path: "src/a.ts", contains: "export function greet" },
      { kind: "file_contains", path: "src/a.ts", regex: "^export function \\w+\\(" },
      { kind: "file_contains", path: "src/leak.ts", contains: "SECRET" },
      { kind: "file_contains", path: "src/deep", contains: "x" },
    ], edges);
    const got = report.results.map((r) => [r.met, r.reason]);
    deepStrictEqual(got.slice(0, 4), [
      [true, "src/a.ts exists (file)"],
      [true, "src/deep exists (directory)"],
      [false, "src/missing.ts does not exist"],
      [true, "src/alias.ts exists (file)"],
    ]);
    strictEqual(got[4][0], false);
    ok(String(got[4][1]).includes("through a symlink"), String(got[4][1]));
    deepStrictEqual(got[5], [true, "src/**/*_test.ts matches 1 path (first: src/deep/b_test.ts)"]);
    deepStrictEqual(got[6], [false, "**/x_test.ts matches nothing"]); // .git is never searched
    strictEqual(got[7][0], false);
    ok(String(got[7][1]).includes("through a symlink"), String(got[7][1]));
    // src/leak.ts is a match by name but leaves the worktree: it is not counted.
    deepStrictEqual(got[8], [true, "src/*.ts matches 2 paths (first: src/a.ts)"]);
    deepStrictEqual(got[9], [true, 'src/a.ts contains "export function greet"']);
    deepStrictEqual(got[10], [true, "src/a.ts matches /^export function \\w+\\(/"]);
    strictEqual(got[11][0], false);
    ok(String(got[11][1]).includes("through a symlink"), String(got[11][1]));
    ok(!String(got[11][1]).includes("TOP SECRET"));
    deepStrictEqual(got[12], [false, "src/deep cannot be read: not a regular file"]);
    strictEqual(report.met, false);
  });
});

Deno.test("real worktree: paths with '..' or absolute paths are refused before touching the disk", async () => {
  await withTempDir(async (dir) => {
    const wt = await worktree(dir);
    const edges = worktreeEdges(wt, { env: mapEnv({ PATH }) });
    strictEqual((await edges.inspect("../secret.txt")).kind, "refused");
    strictEqual((await edges.inspect("/etc/passwd")).kind, "refused");
    strictEqual((await edges.readText("../secret.txt")).ok, false);
    ok((await edges.glob("../*")).invalid?.includes("'..' segment"));
    ok((await edges.glob("src/[a")).invalid?.includes("unclosed"));
  });
});

Deno.test("file_contains searches only the first maxReadBytes of a big file", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "big.txt"), "a".repeat(100) + "NEEDLE");
    const edges = worktreeEdges(dir, { env: mapEnv({}), maxReadBytes: 50 });
    const report = await evaluateCompletionSignals([
      { kind: "file_contains", path: "big.txt", contains: "NEEDLE" },
    ], edges);
    deepStrictEqual(
      report.results[0].reason,
      'big.txt does not contain "NEEDLE" (only the start of the file was searched)',
    );
  });
});

Deno.test("glob_exists walks at most maxGlobEntries entries, skips .git, and sorts its matches", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".git"));
    await Deno.writeTextFile(join(dir, ".git", "a.ts"), "");
    for (const name of ["c.ts", "a.ts", "b.ts"]) await Deno.writeTextFile(join(dir, name), "");
    const all = await worktreeEdges(dir, { env: mapEnv({}) }).glob("*.ts");
    deepStrictEqual(all, { matches: ["a.ts", "b.ts", "c.ts"], refused: [], truncated: false });
    const capped = await worktreeEdges(dir, { env: mapEnv({}), maxGlobEntries: 2 }).glob("*.ts");
    strictEqual(capped.truncated, true);
    ok(capped.matches.length <= 2, String(capped.matches));
  });
});

Deno.test("test_passes runs a real argv command in the worktree with a deadline", async () => {
  await withTempDir(async (dir) => {
    const wt = await worktree(dir);
    await Deno.writeTextFile(join(wt, "check.sh"), "#!/bin/sh\necho checking; pwd >&2; exit 0\n");
    await Deno.chmod(join(wt, "check.sh"), 0o755);
    await Deno.writeTextFile(join(dir, "evil.sh"), "#!/bin/sh\nexit 0\n");
    await Deno.chmod(join(dir, "evil.sh"), 0o755);
    await Deno.symlink(join(dir, "evil.sh"), join(wt, "evil.sh"));
    const edges = worktreeEdges(wt, { env: mapEnv({ PATH }) });
    const report = await evaluateCompletionSignals([
      { kind: "test_passes", command: ["true"] },
      {
        kind: "test_passes",
        command: ["sh", "-c", "echo compiling; echo '3 tests failed' >&2; exit 3"],
      },
      { kind: "test_passes", command: ["sleep", "5"], timeout_s: 0.3 },
      { kind: "test_passes", command: ["./check.sh"] },
      { kind: "test_passes", command: ["./evil.sh"] },
      { kind: "test_passes", command: ["no-such-program-bernstein"] },
      { kind: "test_passes", command: ["test", "-f", "src/a.ts"] },
    ], edges);
    const got = report.results.map((r) => [r.met, r.reason]);
    deepStrictEqual(got[0], [true, "true passed (exit 0)"]);
    deepStrictEqual(got[1], [
      false,
      "sh -c echo compiling; echo '3 tests failed' >&2; exit 3 failed (exit 3): 3 tests failed",
    ]);
    deepStrictEqual(got[2], [false, "sleep 5 timed out after 0.3s"]);
    deepStrictEqual(got[3], [true, "./check.sh passed (exit 0)"]);
    ok(report.results[3].output?.includes(wt), report.results[3].output); // ran in the worktree
    strictEqual(got[4][0], false);
    ok(String(got[4][1]).includes("through a symlink"), String(got[4][1]));
    strictEqual(got[5][0], false);
    ok(String(got[5][1]).startsWith("no-such-program-bernstein did not start"), String(got[5][1]));
    deepStrictEqual(got[6], [true, "test -f src/a.ts passed (exit 0)"]); // cwd is the worktree
  });
});

Deno.test("test_passes commands see only the allowlisted environment", async () => {
  await withTempDir(async (dir) => {
    const env = mapEnv({ PATH, SECRET_TOKEN: "s3cret", HOME: dir });
    const script = 'test -z "$SECRET_TOKEN" && test -n "$PATH" && test "$HOME" = "$1"';
    const hidden = await evaluateCompletionSignals([
      { kind: "test_passes", command: ["sh", "-c", script, "sh", dir] },
    ], worktreeEdges(dir, { env }));
    strictEqual(hidden.met, true, hidden.results[0].reason);
    const shown = await evaluateCompletionSignals([
      { kind: "test_passes", command: ["sh", "-c", 'test "$SECRET_TOKEN" = s3cret'] },
    ], worktreeEdges(dir, { env, envAllowlist: ["PATH", "SECRET_TOKEN"] }));
    strictEqual(shown.met, true, shown.results[0].reason);
  });
});
