import { ok, strictEqual } from "node:assert/strict";
import { commandGate, runConfigGate } from "../../src/orchestrator/mod.ts";
import { processEnv } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("run_config gate fails on every protected path and passes on ordinary ones", () => {
  for (
    const p of [
      "bernstein.yaml",
      "bernstein.yml",
      ".bernstein/bernstein.yaml",
      ".bernstein/bernstein.yml",
      ".mcp.json",
      ".claude/mcp.json",
      ".sdd/lineage/log.jsonl",
    ]
  ) {
    const r = runConfigGate([{ status: "M", path: "src/a.ts" }, { status: "A", path: p }]);
    strictEqual(r.ok, false, p);
    ok(r.reason.includes(p));
  }
  for (const p of ["docs/bernstein.yaml", "src/mcp.json", "bernstein.yaml.bak", "my.sdd/x"]) {
    strictEqual(runConfigGate([{ status: "M", path: p }]).ok, true, p);
  }
});

Deno.test("a command gate passes on exit 0, fails with the exit code and keeps the output", async () => {
  await withTempDir(async (dir) => {
    const pass = await commandGate({
      gate: "tests",
      command: ["sh", "-c", "echo fine"],
      cwd: dir,
      timeoutS: 10,
      env: processEnv,
    });
    strictEqual(pass.ok, true);
    strictEqual(pass.output, "fine\n");
    const fail = await commandGate({
      gate: "lint",
      command: ["sh", "-c", "echo bad >&2; exit 3"],
      cwd: dir,
      timeoutS: 10,
      env: processEnv,
    });
    strictEqual(fail.ok, false);
    ok(fail.reason.endsWith("exited 3"));
    ok(fail.output?.includes("bad"));
  });
});

Deno.test("a command gate that hangs fails at its deadline; a missing binary fails clearly", async () => {
  await withTempDir(async (dir) => {
    const hang = await commandGate({
      gate: "tests",
      command: ["sleep", "30"],
      cwd: dir,
      timeoutS: 0.3,
      env: processEnv,
    });
    strictEqual(hang.ok, false);
    strictEqual(hang.reason, "timed out after 0.3s");
    const missing = await commandGate({
      gate: "tests",
      command: ["no-such-tool-xyz"],
      cwd: dir,
      timeoutS: 5,
      env: processEnv,
    });
    strictEqual(missing.ok, false);
    ok(missing.reason.startsWith("cannot run no-such-tool-xyz"));
  });
});
