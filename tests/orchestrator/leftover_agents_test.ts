// The agents a dead run left are ended by the next run's start (src/orchestrator/recovery.ts
// endLeftoverAgents), but only agents of this host: a session of a worker host records that
// host's pid (and, before this was fixed, the start time of whatever local process had the
// same number), so it is never signalled here.
import assert from "node:assert/strict";
import { join } from "node:path";
import { isProcessAlive, processStartTime } from "../../src/orchestrator/pid_liveness.ts";
import { endLeftoverAgents } from "../../src/orchestrator/recovery.ts";
import { saveSessionFile } from "../../src/orchestrator/run_state.ts";
import type { JsonObject } from "../../src/canonical/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** A process in a group of its own, as an agent is, and a session file naming it. */
async function recordedProcess(sdd: string, isolation: JsonObject) {
  const child = new Deno.Command("sleep", {
    args: ["600"],
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  await saveSessionFile(sdd, {
    session: "1.1-x-a1-0001",
    task_id: "1.1-x",
    adapter: "scripted",
    model: null,
    agent_id: "scripted:1.1-x-a1-0001",
    worktree: join(sdd, "gone"),
    branch: "agent/1.1-x-a1-0001",
    base_sha: "0".repeat(40),
    pid: child.pid,
    pid_start: await processStartTime(child.pid),
    started_at: "2026-01-01T00:00:00.000Z",
    state: "running",
    attachment_digests: [],
    isolation,
  });
  return child;
}

for (
  const [what, isolation, ended] of [
    ["a worker host's session is never signalled here", {
      isolation: "remote",
      reason: "runs on a worker host",
    }, false],
    ["this host's leftover agent is ended", { isolation: "none" }, true],
  ] as const
) {
  Deno.test({
    name: `leftover agents: ${what}`,
    ignore: Deno.build.os !== "linux", // start times come from /proc
    fn: async () => {
      await withTempDir(async (dir) => {
        const sdd = join(dir, ".sdd");
        const child = await recordedProcess(sdd, isolation);
        try {
          const out = await endLeftoverAgents(sdd);
          assert.deepEqual(out.map((a) => a.pid), ended ? [child.pid] : []);
          assert.equal(await isProcessAlive(child.pid), !ended);
        } finally {
          try {
            Deno.kill(child.pid, "SIGKILL");
          } catch {
            // Ended by the test.
          }
          await child.status;
        }
      });
    },
  });
}
