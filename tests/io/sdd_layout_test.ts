import { equal, throws } from "node:assert/strict";
import { checkRunId, checkSessionName, runDir, runFile, sessionLayout } from "../../src/io/mod.ts";
import { runIdFromSeed, runTag } from "../../src/ledger/mod.ts";

const isCode = (code: string) => (e: unknown) => (e as { code?: string }).code === code;

Deno.test("run ids that could leave .sdd/runs/ are refused with runs.bad_id before any path is built", () => {
  for (const bad of ["", "../x", "a/b", "a..b", ".hidden", "-x", "a\\b", "x".repeat(129), "a\0b"]) {
    throws(() => checkRunId(bad), isCode("runs.bad_id"), JSON.stringify(bad));
    throws(() => runDir(".sdd", bad), isCode("runs.bad_id"), JSON.stringify(bad));
    throws(() => runFile(".sdd", bad, "summary"), isCode("runs.bad_id"), JSON.stringify(bad));
  }
  equal(
    runFile("/p/.sdd", "brave-otter-3fa9c2", "decisions"),
    "/p/.sdd/runs/brave-otter-3fa9c2/decisions.json",
  );
  equal(
    runFile("/p/.sdd", "brave-otter-3fa9c2", "tasks"),
    "/p/.sdd/runs/brave-otter-3fa9c2/tasks.jsonl",
  );
});

Deno.test("session names that could leave their folder are refused with runs.bad_session", () => {
  for (const bad of ["", "../x", "a/b", "a..b", ".git"]) {
    throws(() => checkSessionName(bad), isCode("runs.bad_session"), JSON.stringify(bad));
    throws(() => sessionLayout("/p/.sdd", bad), isCode("runs.bad_session"), JSON.stringify(bad));
  }
  const layout = sessionLayout("/p/.sdd", "t-01-a1-3fa9c2");
  equal(layout.worktree, "/p/.sdd/worktrees/t-01-a1-3fa9c2");
  equal(layout.worktreeRelative, ".sdd/worktrees/t-01-a1-3fa9c2");
  equal(layout.home, "/p/.sdd/runtime/homes/t-01-a1-3fa9c2");
  equal(layout.logPath, "/p/.sdd/runtime/t-01-a1-3fa9c2.log");
});

Deno.test("the run tag is a generated id's hex tail, and 6 hex digits for any other id", () => {
  const id = runIdFromSeed("seed");
  equal(runTag(id), id.slice(-6));
  for (const other of ["my-run", "run", "a-b-c-../x", "brave-otter-3FA9C2"]) {
    const tag = runTag(other);
    equal(/^[0-9a-f]{6}$/.test(tag), true, `${other} → ${tag}`);
    equal(runTag(other), tag, "deterministic");
  }
});
