// One agent session with a stand-in adapter (a shell script as the "CLI"): the adapter's
// settings reach its build, and a progress event the parser marks fatal stops the agent's
// process group at once instead of at its deadline.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Adapter, type InvocationInput } from "../../src/adapters/mod.ts";
import { getAdapter } from "../../src/adapters/mod.ts";
import { processEnv } from "../../src/io/mod.ts";
import { Git, startAgent } from "../../src/orchestrator/mod.ts";
import { liveGroupMembers } from "../_helpers/processes.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";
import { BernsteinError } from "../../src/errors/mod.ts";

/** A "CLI" that prints one JSON line, then waits far past the test's patience. */
function standIn(seen: InvocationInput[], line: string): Adapter {
  const base = getAdapter("codex");
  return {
    ...base,
    build(input) {
      seen.push(input);
      return {
        argv: ["sh", "-c", `echo '${line}'; sleep 600 & wait`],
        env: { PATH: "/usr/bin:/bin" },
        files: [],
        cwd: input.cwd,
        prompt_channel: "argv",
        notes: [],
      };
    },
  };
}

async function launch(root: string, adapter: Adapter) {
  const sdd = join(root, ".sdd");
  return await startAgent({
    session: "t1-a1",
    taskId: "t1",
    adapter,
    executable: "sh",
    max_turns: 3,
    prompt: "do it",
    extraEnv: {},
    deadlineMs: 120_000,
    killGraceMs: 500,
    isRoot: false,
    settings: { env: ["HTTPS_PROXY"], extra_args: ["--flag"] },
  }, {
    root,
    sdd,
    git: new Git(root, { env: processEnv }),
    env: processEnv,
    selfCommand: ["true"],
    now: () => performance.now(),
  });
}

Deno.test("a fatal progress event stops the agent's process group before its deadline", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const seen: InvocationInput[] = [];
    const line = '{"type":"error","message":"Reconnecting... waiting for network (refused)"}';
    const agent = await launch(dir, standIn(seen, line));
    const { result, timedOut, signal } = await agent.result;
    assert.equal(timedOut, false, "stopped by the fatal event, not the 120 s deadline");
    assert.equal(signal, "SIGTERM");
    assert.equal(result.ok, false);
    assert.match(result.error ?? "", /waiting for network/);
    // The settings of adapters.<name> reached the adapter's build.
    assert.deepEqual(seen[0].settings, { env: ["HTTPS_PROXY"], extra_args: ["--flag"] });
    assert.deepEqual(liveGroupMembers(agent.handle.pid), [], "the whole process group is gone");
  });
});

Deno.test("a branch that already has the session's name is refused and left as it was; nothing starts", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    await Deno.writeTextFile(join(dir, "other.txt"), "someone else's work\n");
    const theirs = await g.commitAll(dir, "their work");
    await git(dir, "branch", "agent/t1-a1", theirs as string);
    await git(dir, "reset", "-q", "--hard", "HEAD~1");
    const seen: InvocationInput[] = [];
    await assert.rejects(
      launch(dir, standIn(seen, "{}")),
      (e: unknown) => e instanceof BernsteinError && e.code === "run.branch_exists",
    );
    assert.equal(await g.revParse("agent/t1-a1"), theirs, "the branch is untouched");
    assert.deepEqual(seen, [], "no agent was built or started");
    const worktrees = await git(dir, "worktree", "list", "--porcelain");
    assert.equal(worktrees.match(/^worktree /gm)?.length, 1, "no worktree was added");
  });
});
