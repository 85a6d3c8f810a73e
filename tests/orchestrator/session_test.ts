import { equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { readSession, type SessionRecord, writeSession } from "../../src/orchestrator/session.ts";
import { withTempDir } from "../_helpers/temp.ts";

const SESSION: SessionRecord = {
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

Deno.test("a session file round-trips through writeSession and readSession", async () => {
  await withTempDir(async (root) => {
    const sdd = join(root, ".sdd");
    await writeSession(sdd, SESSION);
    const back = await readSession(sdd);
    equal(JSON.stringify(back), JSON.stringify(SESSION));
  });
});

Deno.test("a hand-edited session file is refused naming the file and the field, not cast", async () => {
  await withTempDir(async (root) => {
    const sdd = join(root, ".sdd");
    await writeSession(sdd, SESSION);
    const path = join(sdd, "runtime", "session.json");
    const cases: [Record<string, unknown>, string][] = [
      [{ ...SESSION, run_id: "../../etc" }, "run_id"],
      [{ ...SESSION, attempt: "2" }, "attempt"],
      [{ ...SESSION, status: "paused" }, "status"],
      [{ ...SESSION, source: { kind: "plan" } }, "source.path"],
      [{ ...SESSION, choices: { ...SESSION.choices, max_agents: null } }, "choices.max_agents"],
    ];
    for (const [value, field] of cases) {
      await Deno.writeTextFile(path, JSON.stringify(value));
      await rejects(readSession(sdd), (e: unknown) => {
        const err = e as { code?: string; message: string };
        equal(err.code, "run.session_corrupt");
        ok(err.message.startsWith(`${path}: ${field}: `), err.message);
        return true;
      });
    }
    await Deno.writeTextFile(path, "{not json");
    await rejects(
      readSession(sdd),
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
