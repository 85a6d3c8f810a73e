// `bernstein task …` as a whole binary (main.ts under the `bernstein` permission set) against
// a real task server in this process.
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { openJsonlTaskStore, type Task } from "../../src/tasks/mod.ts";
import { runBernstein, spawnBernstein } from "../_helpers/cli.ts";
import { startTestServer, type TestServer } from "../server/_server.ts";

const OP = { actor: "test", reason: "setup" };

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function agentEnv(s: TestServer, taskId: string): Promise<Record<string, string>> {
  const issued = await s.tokens.issueAgentToken({
    session: `s-${taskId}`,
    agent_id: `a-${taskId}`,
    task_ids: [taskId],
    can_create_tasks: false,
  });
  return { BERNSTEIN_SERVER_URL: s.server.url, BERNSTEIN_TASK_TOKEN: issued.token };
}

Deno.test("task CLI: complete, progress, fail, block report through the server", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany(
      ["c", "p", "f", "b"].map((id) => ({ id, title: id, role: "dev" })),
      OP,
    );
    for (const id of ["c", "p", "f", "b"]) {
      await s.store.claim(id, { agent: `a-${id}`, expectedVersion: 1 });
    }
    const cwd = s.root;
    const done = await runBernstein(["task", "complete", "c", "--summary", "added the parser"], {
      cwd,
      env: await agentEnv(s, "c"),
    });
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /^c completed \(status done, version 4\)\n$/);
    const c = await s.store.get("c");
    assert.equal(c?.status, "done");
    assert.equal(c?.result_summary, "added the parser");

    const pEnv = await agentEnv(s, "p");
    const prog = await runBernstein(
      ["task", "progress", "p", "--message", "tests written", "--percent", "60", "--json"],
      { cwd, env: pEnv },
    );
    assert.equal(prog.code, 0, prog.stderr);
    assert.equal((JSON.parse(prog.stdout).task as Task).id, "p");
    assert.deepEqual(s.sink.events.at(-1)?.details, { message: "tests written", percent: 60 });
    const badPct = await runBernstein([
      "task",
      "progress",
      "p",
      "--message",
      "x",
      "--percent",
      "120",
    ], {
      cwd,
      env: pEnv,
    });
    assert.equal(badPct.code, 2);
    assert.match(badPct.stderr, /--percent must be from 0 to 100/);

    const fail = await runBernstein(["task", "fail", "f", "--reason", "no such API"], {
      cwd,
      env: await agentEnv(s, "f"),
    });
    assert.equal(fail.code, 0, fail.stderr);
    assert.equal((await s.store.get("f"))?.terminal_reason, "no such API");
    const block = await runBernstein(["task", "block", "b", "--reason", "needs a key"], {
      cwd,
      env: await agentEnv(s, "b"),
    });
    assert.equal(block.code, 0, block.stderr);
    assert.equal((await s.store.get("b"))?.status, "blocked");
  } finally {
    await s.stop();
  }
});

Deno.test("task CLI: a refusal exits 1 with the server's error code; a missing flag exits 2", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany([{ id: "t", title: "t", role: "dev" }, {
      id: "u",
      title: "u",
      role: "dev",
    }], OP);
    const env = await agentEnv(s, "t");
    const notClaimed = await runBernstein(["task", "complete", "t", "--summary", "x"], {
      cwd: s.root,
      env,
    });
    assert.equal(notClaimed.code, 1);
    assert.match(
      notClaimed.stderr,
      /^error\[task\.claim_lost\]: agent '\S+' does not hold task 't'/,
    );
    const forbidden = await runBernstein(["task", "complete", "u", "--summary", "x"], {
      cwd: s.root,
      env,
    });
    assert.equal(forbidden.code, 1);
    assert.match(
      forbidden.stderr,
      /^error\[auth\.forbidden\]: this token is not scoped to task 'u'/,
    );
    const badToken = await runBernstein(["task", "complete", "t", "--summary", "x"], {
      cwd: s.root,
      env: { ...env, BERNSTEIN_TASK_TOKEN: "bag_forged" },
    });
    assert.equal(badToken.code, 1);
    assert.match(badToken.stderr, /^error\[auth\.invalid_token\]/);
    const noSummary = await runBernstein(["task", "complete", "t"], { cwd: s.root, env });
    assert.equal(noSummary.code, 2);
    assert.match(noSummary.stderr, /error\[cli\.missing_flag\]: --summary is required/);
    assert.equal((await s.store.get("t"))?.status, "open");
  } finally {
    await s.stop();
  }
});

Deno.test("task CLI: no token anywhere exits 3; no server address exits 1", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    const noToken = await runBernstein(["task", "complete", "t", "--summary", "x"], {
      cwd: dir,
      env: { BERNSTEIN_SERVER_URL: "http://127.0.0.1:9" },
    });
    assert.equal(noToken.code, 3);
    assert.match(noToken.stderr, /^error\[server\.token_missing\]/);
    const noServer = await runBernstein(["task", "complete", "t", "--summary", "x"], { cwd: dir });
    assert.equal(noServer.code, 1);
    assert.match(noServer.stderr, /^error\[server\.not_found\]/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task CLI: retries while the server refuses connections, then succeeds", async () => {
  const port = freePort();
  const root = await Deno.realPath(await Deno.makeTempDir());
  let server: TestServer | undefined;
  try {
    // The token exists before the server: the run loop issues it at spawn.
    const first = await startTestServer({ root });
    await first.store.create({ id: "t", title: "t", role: "dev" }, OP);
    await first.store.claim("t", { agent: "a-t", expectedVersion: 1 });
    const env = await agentEnv(first, "t");
    const snapshot = await first.store.list();
    await first.server.close();
    const store = first.store;

    const cli = spawnBernstein(["task", "progress", "t", "--message", "still here"], {
      cwd: root,
      env: {
        ...env,
        BERNSTEIN_SERVER_URL: `http://127.0.0.1:${port}`,
        BERNSTEIN_CONFIG_OVERRIDE:
          "tuning: {server: {client_connect_attempts: 30, client_retry_base_ms: 100}}",
      },
    });
    // The server comes up once the CLI has been refused and said it retries, however long
    // its start-up took.
    await cli.stderr.waitFor(/refused the connection; retrying/, "the first retry");
    // The refused attempts changed nothing. Checked before the server is back: from then on the
    // CLI's next attempt may land at any moment (it did, between the start and this check).
    assert.deepEqual(await store.list(), snapshot);
    server = await startTestServer({ root, store, server: { port } });
    const result = await cli.result;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /refused the connection; retrying in 100 ms \(1\/29\)/);
    assert.equal((await store.get("t"))?.status, "claimed");
    assert.equal((await store.get("t"))?.version, 3);
  } finally {
    await server?.stop();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});

Deno.test("task CLI: gives up after client_connect_attempts and exits 1", async () => {
  const port = freePort();
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    const r = await runBernstein(["task", "complete", "t", "--summary", "x"], {
      cwd: dir,
      env: {
        BERNSTEIN_SERVER_URL: `http://127.0.0.1:${port}`,
        BERNSTEIN_TASK_TOKEN: "bag_x",
        BERNSTEIN_CONFIG_OVERRIDE:
          "tuning: {server: {client_connect_attempts: 3, client_retry_base_ms: 20}}",
      },
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /retrying in 20 ms \(1\/2\)/);
    assert.match(r.stderr, /retrying in 40 ms \(2\/2\)/);
    assert.match(r.stderr, /error\[server\.unreachable\]: .* refused the connection 3 times/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task CLI: list and show through the server, found from a worktree folder", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany([
      { id: "a", title: "Write parser", role: "dev", priority: 1 },
      { id: "b", title: "Review", role: "qa" },
    ], OP);
    await s.store.transition("b", "cancelled", OP);
    const worktree = join(s.root, ".sdd", "worktrees", "s1");
    await Deno.mkdir(worktree, { recursive: true });
    const human = await runBernstein(["task", "list"], { cwd: worktree, env: s.operatorEnv });
    assert.equal(human.code, 0, human.stderr);
    assert.deepEqual(human.stdout.trimEnd().split("\n"), [
      "ID  STATUS     PRI  ROLE  AGENT  TITLE",
      "a   open       1    dev   -      Write parser",
      "b   cancelled  2    qa    -      Review",
    ]);
    const json = await runBernstein(["task", "list", "--status", "open", "--json"], {
      cwd: worktree,
      env: s.operatorEnv,
    });
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout);
    assert.equal(body.source, s.server.url);
    assert.deepEqual(body.tasks.map((t: Task) => t.id), ["a"]);
    const show = await runBernstein(["task", "show", "a", "--json"], {
      cwd: worktree,
      env: s.operatorEnv,
    });
    assert.equal(JSON.parse(show.stdout).task.title, "Write parser");
    const missing = await runBernstein(["task", "show", "zzz"], {
      cwd: worktree,
      env: s.operatorEnv,
    });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error\[task\.not_found\]/);
    const badStatus = await runBernstein(["task", "list", "--status", "opne"], {
      cwd: worktree,
      env: s.operatorEnv,
    });
    assert.equal(badStatus.code, 2);
    assert.match(badStatus.stderr, /did you mean 'open'\?/);
  } finally {
    await s.stop();
  }
});

Deno.test("task CLI: list and show read the task log when no server is running", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const runtime = join(root, ".sdd", "runtime");
    const store = await openJsonlTaskStore(join(runtime, "tasks.jsonl"), {
      clock: new FakeClock(),
      random: new SeededRandom(1),
      defaults: { priority: 2, max_retries: 2 },
      compactMinRecords: 100,
    });
    await store.createMany([{ id: "a", title: "A", role: "dev" }, {
      id: "b",
      title: "B",
      role: "qa",
    }], OP);
    await store.close();
    const r = await runBernstein(["task", "list", "--role", "qa"], { cwd: join(root) });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no task server answered; read .*tasks\.jsonl/);
    assert.match(r.stdout, /^ID\s+STATUS/);
    assert.match(r.stdout, /\nb\s+open\s+2\s+qa\s+-\s+B\n$/);
    const show = await runBernstein(["task", "show", "a", "--json"], { cwd: root });
    assert.equal(show.code, 0, show.stderr);
    const body = JSON.parse(show.stdout);
    assert.equal(body.source, join(runtime, "tasks.jsonl"));
    assert.equal(body.task.title, "A");
    const empty = join(root, "elsewhere");
    await Deno.mkdir(empty);
    await Deno.rename(runtime, join(root, "moved"));
    const none = await runBernstein(["task", "list"], { cwd: empty });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^error\[task\.no_store\]/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("task CLI: create makes a child of the agent's own task; a bad draft is refused before any request", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany([{ id: "mgr", title: "plan", role: "manager" }], OP);
    await s.store.claim("mgr", { agent: "a-mgr", expectedVersion: 1 });
    const issued = await s.tokens.issueAgentToken({
      session: "a-mgr",
      agent_id: "a-mgr",
      task_ids: ["mgr"],
      can_create_tasks: true,
    });
    const env = {
      BERNSTEIN_SERVER_URL: s.server.url,
      BERNSTEIN_TASK_TOKEN: issued.token,
      BERNSTEIN_TASK_ID: "mgr",
    };
    const made = await runBernstein(
      [
        "task",
        "create",
        "--title",
        "Write the parser",
        "--role",
        "backend",
        "--file",
        "src/parse.ts",
        "--json",
      ],
      { cwd: s.root, env },
    );
    assert.equal(made.code, 0, made.stderr);
    const child = JSON.parse(made.stdout).task as Task;
    assert.equal(child.parent_task_id, "mgr");
    assert.deepEqual(child.owned_files, ["src/parse.ts"]);
    const bad = await runBernstein(["task", "create", "--title", "x", "--scope", "huge"], {
      cwd: s.root,
      env: { ...env, BERNSTEIN_SERVER_URL: "http://127.0.0.1:9" },
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error\[task\.invalid\]: scope: /);
    assert.equal((await s.store.list({})).length, 2, "nothing else was created");
  } finally {
    await s.stop();
  }
});
