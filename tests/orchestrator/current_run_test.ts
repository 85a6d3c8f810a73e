import { equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  type CurrentRun,
  readCurrentRun,
  writeCurrentRun,
} from "../../src/orchestrator/current_run.ts";
import { withTempDir } from "../_helpers/temp.ts";

const RUN: CurrentRun = {
  run_id: "brave-otter-3fa9c2",
  status: "running",
  pid: 42,
  host: "h",
  started_at: "2026-12-01T00:00:00Z",
  branch: "main",
  source: { kind: "plan", path: "plan.yaml" },
  goal: null,
  attempt: 1,
  choices: { plan_cli: null, cli: null, model: null, max_agents: 4 },
};

Deno.test("the current run's record round-trips through writeCurrentRun and readCurrentRun", async () => {
  await withTempDir(async (root) => {
    const sdd = join(root, ".sdd");
    await writeCurrentRun(sdd, RUN);
    const back = await readCurrentRun(sdd);
    equal(JSON.stringify(back), JSON.stringify(RUN));
  });
});

Deno.test("a hand-edited record of the current run (session.json) is refused naming the file and the field, not cast", async () => {
  await withTempDir(async (root) => {
    const sdd = join(root, ".sdd");
    await writeCurrentRun(sdd, RUN);
    const path = join(sdd, "runtime", "session.json");
    const cases: [Record<string, unknown>, string][] = [
      [{ ...RUN, run_id: "../../etc" }, "run_id"],
      [{ ...RUN, attempt: "2" }, "attempt"],
      [{ ...RUN, status: "paused" }, "status"],
      [{ ...RUN, source: { kind: "plan" } }, "source.path"],
      [{ ...RUN, choices: { ...RUN.choices, max_agents: null } }, "choices.max_agents"],
    ];
    for (const [value, field] of cases) {
      await Deno.writeTextFile(path, JSON.stringify(value));
      await rejects(readCurrentRun(sdd), (e: unknown) => {
        const err = e as { code?: string; message: string };
        equal(err.code, "run.session_corrupt");
        ok(err.message.startsWith(`${path}: ${field}: `), err.message);
        return true;
      });
    }
    await Deno.writeTextFile(path, "{not json");
    await rejects(
      readCurrentRun(sdd),
      (e: unknown) => (e as { code?: string }).code === "run.session_corrupt",
    );
  });
});

Deno.test("an agent session file that parses but holds no session is refused naming the field; a torn one is skipped", async () => {
  const { listSessionFiles, saveSessionFile } = await import("../../src/orchestrator/run_state.ts");
  await withTempDir(async (root) => {
    const sdd = join(root, ".sdd");
    const file = {
      session: "t-1-a1-3fa9c2",
      task_id: "t-1",
      adapter: "scripted",
      model: null,
      agent_id: "a",
      worktree: join(sdd, "worktrees", "t-1-a1-3fa9c2"),
      branch: "agent/t-1-a1-3fa9c2",
      base_sha: "0".repeat(40),
      pid: 7,
      started_at: "2026-12-01T00:00:00Z",
      state: "running",
      attachment_digests: [],
    };
    await saveSessionFile(sdd, file);
    equal((await listSessionFiles(sdd)).length, 1);
    const dir = join(sdd, "runtime", "sessions");
    await Deno.writeTextFile(join(dir, "torn.json"), '{"session": "t-2');
    equal((await listSessionFiles(sdd)).length, 1);
    const bad = join(dir, "bad.json");
    await Deno.writeTextFile(bad, JSON.stringify({ ...file, session: "../x", pid: "7" }));
    await rejects(listSessionFiles(sdd), (e: unknown) => {
      const err = e as { code?: string; message: string };
      equal(err.code, "run.session_corrupt");
      ok(err.message.startsWith(`${bad}: session: `), err.message);
      return true;
    });
  });
});
