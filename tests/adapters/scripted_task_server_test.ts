// The scripted agent reporting to the REAL task server (src/server) with a scoped agent token:
// the `bernstein task complete|fail|progress` semantics over HTTP, end to end.
import assert from "node:assert/strict";
import { AGENT_SERVER_ENV } from "../../src/adapters/mod.ts";
import { SERVER_URL_ENV, TASK_TOKEN_ENV, TASK_TOKEN_FILE_ENV } from "../../src/server/mod.ts";
import { runScriptedAgent } from "../_helpers/scripted.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { startTestServer, type TestServer } from "../server/_server.ts";

const OP = { actor: "test", reason: "setup" };

async function claimedTask(s: TestServer, id: string): Promise<void> {
  await s.store.createMany([{ id, title: `task ${id}`, role: "dev" }], OP);
  await s.store.claim(id, { agent: `agent-${id}`, expectedVersion: 1 });
}

async function tokenFor(s: TestServer, id: string): Promise<{ token: string; path: string }> {
  const issued = await s.tokens.issueAgentToken({
    session: `sess-${id}`,
    agent_id: `agent-${id}`,
    task_ids: [id],
    can_create_tasks: false,
  });
  // As the executor hands it over: a 0600 file in the agent's private HOME.
  const path = `${s.root}/sess-${id}.token`;
  await Deno.writeTextFile(path, issued.token, { mode: 0o600 });
  return { token: issued.token, path };
}

Deno.test("the agent env names are the ones the task server's client reads", () => {
  assert.equal(AGENT_SERVER_ENV.server_url, SERVER_URL_ENV);
  assert.equal(AGENT_SERVER_ENV.token, TASK_TOKEN_ENV);
  assert.equal(AGENT_SERVER_ENV.token_file, TASK_TOKEN_FILE_ENV);
});

Deno.test("scripted agent completes its task on the real server with a token file", async () => {
  const s = await startTestServer();
  try {
    await claimedTask(s, "t1");
    const issued = await tokenFor(s, "t1");
    await withTempDir(async (root) => {
      const run = await runScriptedAgent(
        root,
        "@agent write out.txt x\n@agent progress halfway\n@agent summary wrote out.txt",
        {
          extra_env: {
            [AGENT_SERVER_ENV.server_url]: s.server.url,
            [AGENT_SERVER_ENV.token_file]: issued.path,
            [AGENT_SERVER_ENV.task_id]: "t1",
          },
        },
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.result.ok, true);
    });
    const task = await s.store.get("t1");
    assert.equal(task?.status, "done");
    assert.equal(task?.result_summary, "wrote out.txt");
  } finally {
    await s.stop();
  }
});

Deno.test("scripted agent fails its task on the real server with the reason", async () => {
  const s = await startTestServer();
  try {
    await claimedTask(s, "t2");
    const issued = await tokenFor(s, "t2");
    await withTempDir(async (root) => {
      const run = await runScriptedAgent(root, "@agent fail the schema is ambiguous", {
        extra_env: {
          [AGENT_SERVER_ENV.server_url]: s.server.url,
          [AGENT_SERVER_ENV.token]: issued.token,
          [AGENT_SERVER_ENV.task_id]: "t2",
        },
      });
      assert.equal(run.code, 1);
    });
    const task = await s.store.get("t2");
    assert.equal(task?.status, "failed");
  } finally {
    await s.stop();
  }
});

Deno.test("a token scoped to another task is refused (403) and the agent run fails", async () => {
  const s = await startTestServer();
  try {
    await claimedTask(s, "mine");
    await claimedTask(s, "theirs");
    const issued = await tokenFor(s, "mine");
    await withTempDir(async (root) => {
      const run = await runScriptedAgent(root, "@agent summary sneaky", {
        extra_env: {
          [AGENT_SERVER_ENV.server_url]: s.server.url,
          [AGENT_SERVER_ENV.token]: issued.token,
          [AGENT_SERVER_ENV.task_id]: "theirs",
        },
      });
      assert.equal(run.code, 1);
      assert.match(run.result.error ?? "", /^server refused complete: HTTP 403/);
    });
    assert.equal((await s.store.get("theirs"))?.status, "claimed");
  } finally {
    await s.stop();
  }
});
