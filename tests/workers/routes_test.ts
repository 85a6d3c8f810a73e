// The orchestrator's side of workers over real HTTP on loopback: worker tokens (401 and an audit
// event for a wrong one, 403 for another worker's name, nothing on the task routes), the
// assignment handshake, 409 for a result about a session the worker does not hold, and the git
// endpoint's push rules. Hostile callers are the point: each refusal is checked.
import assert from "node:assert/strict";
import { join } from "node:path";
import { MemoryAuditSink } from "../../src/audit/mod.ts";
import { scripted } from "../../src/adapters/mod.ts";
import { FakeClock, mapEnv, SeededRandom } from "../../src/io/mod.ts";
import { ensureAgentSigner, lineagePaths } from "../../src/lineage/store/mod.ts";
import { type Execution, Git } from "../../src/orchestrator/mod.ts";
import {
  GitRemote,
  mintWorkerToken,
  WorkerPool,
  WorkerRoutes,
  WorkerTokens,
} from "../../src/workers/mod.ts";
import { startTestServer, type TestServer } from "../server/_server.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

const env = mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/nonexistent" });

interface Setup {
  t: TestServer;
  pool: WorkerPool;
  clock: FakeClock;
  audit: MemoryAuditSink;
  token: (name: string) => Promise<string>;
  base: string;
  repo: string;
}

async function setUp(dir: string): Promise<Setup> {
  await Deno.mkdir(join(dir, "repo"));
  const repo = await makeRepo(join(dir, "repo"));
  const t = await startTestServer({ root: repo });
  const sdd = join(repo, ".sdd");
  const audit = new MemoryAuditSink();
  const tokens = await WorkerTokens.open(sdd);
  const projectGit = new Git(repo, { env, transport: ["file"] });
  const late: { pool?: WorkerPool } = {};
  const clock = new FakeClock();
  const remote = await GitRemote.open(t.runtimeDir, projectGit, env, {
    worker: (token) => tokens.authenticate(token),
    pushRefs: (w) => late.pool?.pushRefs(w) ?? [],
    refused: (address, reason) => void late.pool?.refused(address, reason),
  });
  const pool = late.pool = new WorkerPool({
    runId: "calm-otter-0a1b2c",
    sdd,
    git: projectGit,
    remote,
    store: t.store,
    audit,
    clock,
    localSlots: 0,
    agentServerUrl: "http://127.0.0.1:9",
    heartbeatIntervalS: 1,
    lostAfterS: 60,
    pollWaitS: 1,
    startTimeoutS: 30,
    signTimeoutS: 30,
  });
  t.server.mount(new WorkerRoutes(pool, tokens));
  t.server.mount(remote);
  const random = new SeededRandom(11);
  return {
    t,
    pool,
    clock,
    audit,
    repo,
    base: t.server.url,
    token: async (name) => (await mintWorkerToken(sdd, name, random, new Date())).token,
  };
}

/** The exit a worker reports for an agent that finished its task in one turn. */
const OK_EXIT = {
  ok: true,
  summary: "done",
  turns: 1,
  tokens: null,
  cost_usd: null,
  error: null,
  subtype: null,
  session_id: null,
  exit_code: 0,
  timed_out: false,
  signal: null,
};

const REGISTER = (name: string) => ({
  name,
  capacity: 2,
  adapters: [{ name: "scripted", version: null }],
  host: "test-host",
  version: "0.1.0",
});

async function withSetup(fn: (s: Setup) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const s = await setUp(dir);
    try {
      await fn(s);
    } finally {
      await s.pool.close();
      await s.t.stop();
    }
  });
}

Deno.test("worker routes: a wrong token is 401 and audited; another worker's name is 403; task routes do not know worker tokens", async () => {
  await withSetup(async ({ t, audit, token }) => {
    const none = await t.call("POST", "/workers/register", { body: REGISTER("w1") });
    assert.equal(none.status, 401);
    const wrong = await t.call("POST", "/workers/register", {
      token: "bwk_not-a-real-token",
      body: REGISTER("w1"),
    });
    assert.equal(wrong.status, 401);
    const refused = audit.ofType("worker.auth_refused");
    assert.equal(refused.length, 1, "one record per address per minute, the rest counted");
    assert.equal(refused[0].actor, "address:127.0.0.1");
    const w1 = await token("w1");
    const other = await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w2") });
    assert.equal(other.status, 403);
    assert.match(
      String((other.json.error as { message: string }).message),
      /belongs to worker 'w1'/,
    );
    // A worker token can claim and report as a worker, nothing else.
    for (const [method, path] of [["GET", "/tasks"], ["GET", "/status"], ["POST", "/tasks"]]) {
      const r = await t.call(method, path, { token: w1, body: method === "POST" ? {} : undefined });
      assert.equal(r.status, 401, `${method} ${path}`);
    }
    const list = await t.call("GET", "/workers/", { token: w1 });
    assert.equal(list.status, 403, "listing and cordoning are the operator's");
    const ok = await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.worker, "w1");
    const listed = await t.call("GET", "/workers/", { token: t.operator });
    assert.deepEqual((listed.json.workers as { name: string }[]).map((w) => w.name), ["w1"]);
  });
});

function request(session: string, baseSha: string) {
  return {
    session,
    taskId: "t1",
    title: "Task one",
    agentId: `scripted:${session}`,
    cli: { adapter: scripted, executable: "deno", auto: false },
    max_turns: 5,
    prompt: "do it",
    env: { BERNSTEIN_TASK_ID: "t1" },
    deadlineMs: 60_000,
    killGraceMs: 1000,
    isRoot: false,
    baseSha,
  };
}

Deno.test("worker routes: an assignment goes to the polling worker; a result for a session it does not hold is 409 and audited", async () => {
  await withSetup(async ({ t, pool, audit, token, repo }) => {
    const w1 = await token("w1");
    const w2 = await token("w2");
    for (const [name, tok] of [["w1", w1], ["w2", w2]]) {
      assert.equal(
        (await t.call("POST", "/workers/register", { token: tok, body: REGISTER(name) })).status,
        200,
      );
    }
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    const started = pool.start(request("t1-a1-0a1b2c", base));
    // The pool picks the worker with the most free slots (ties by name): w1.
    const poll = await t.call("POST", "/workers/w1/poll", {
      token: w1,
      body: { free: 2, wait_ms: 0 },
    });
    assert.equal(poll.status, 200, poll.text);
    const assignments = poll.json.assignments as {
      session: string;
      base_sha: string;
      env: Record<string, string>;
    }[];
    assert.equal(assignments.length, 1);
    assert.equal(assignments[0].base_sha, base);
    assert.equal(assignments[0].env.BERNSTEIN_SERVER_URL, "http://127.0.0.1:9");
    const ack = await t.call("POST", "/workers/w1/sessions/t1-a1-0a1b2c/started", {
      token: w1,
      body: { pid: 4242, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    assert.equal(ack.status, 200, ack.text);
    const execution: Execution = await started;
    assert.equal(execution.host, "w1");
    assert.equal(execution.pid, 4242);
    const result = {
      exit: OK_EXIT,
      head: null,
      card: {
        agent_id: "scripted:t1-a1-0a1b2c",
        kid: "0123456789abcdef",
        public_key_pem: "-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----\n",
        protocol_version: "a2a/1.0",
      },
    };
    const stolen = await t.call("POST", "/workers/w2/sessions/t1-a1-0a1b2c/result", {
      token: w2,
      body: result,
    });
    assert.equal(stolen.status, 409);
    assert.equal((stolen.json.error as { code: string }).code, "workers.session_not_held");
    const never = await t.call("POST", "/workers/w1/sessions/never-given/result", {
      token: w1,
      body: result,
    });
    assert.equal(never.status, 409);
    const refusals = audit.ofType("worker.result_refused");
    assert.deepEqual(refusals.map((r) => [r.actor, r.details.session]), [
      ["worker:w2", "t1-a1-0a1b2c"],
      ["worker:w1", "never-given"],
    ]);
  });
});

Deno.test("git endpoint: a worker may only create the agent branches of sessions it holds", async () => {
  await withSetup(async ({ t, pool, token, repo, base }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    const started = pool.start(request("s-held", head));
    await t.call("POST", "/workers/w1/poll", { token: w1, body: { free: 2, wait_ms: 0 } });
    await t.call("POST", "/workers/w1/sessions/s-held/started", {
      token: w1,
      body: { pid: 1, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    await started;
    const url = `${base}/git/remote.git`;
    const clone = join(repo, "..", "clone");
    await Deno.mkdir(clone);
    await git(clone, "init", "-q");
    const auth = (tok: string) => ["-c", `http.extraHeader=Authorization: Bearer ${tok}`];
    await git(clone, ...auth(w1), "fetch", "-q", url, head);
    await git(clone, "checkout", "-q", "-b", "work", head);
    await Deno.writeTextFile(join(clone, "x.txt"), "x\n");
    await git(clone, "add", "x.txt");
    await git(clone, "commit", "-q", "-m", "x");
    const push = (ref: string, tok = w1) =>
      git(clone, ...auth(tok), "push", "-q", url, `HEAD:${ref}`).then(() => "ok", (e) => String(e));
    assert.match(await push("refs/heads/main"), /not a branch of a session w1 holds/);
    assert.match(await push("refs/heads/agent/s-other"), /not a branch of a session w1 holds/);
    assert.equal(await push("refs/heads/agent/s-held"), "ok");
    // Never an update: a second, different push to the same branch is refused.
    await Deno.writeTextFile(join(clone, "y.txt"), "y\n");
    await git(clone, "add", "y.txt");
    await git(clone, "commit", "-q", "-m", "y");
    assert.match(await push("refs/heads/agent/s-held"), /exists; branches are never updated/);
    assert.match(
      await push("refs/heads/agent/s-held", "bwk_wrong"),
      /401|Authentication|could not read/,
    );
    const anonymous = await git(clone, "fetch", "-q", url, head).then(() => "ok", (e) => String(e));
    assert.notEqual(anonymous, "ok", "no token, no fetch");
  });
});

Deno.test("worker pool: a worker that registers again gives back the claims of the sessions it forgot; they run again instead of failing", async () => {
  await withSetup(async ({ t, pool, token, repo }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    await t.store.create({ id: "t1", title: "Task one", role: "dev" }, { actor: "test" });
    const claimed = await t.store.claim("t1", {
      agent: "t1-a1-0a1b2c",
      expectedVersion: 1,
      actor: "orchestrator",
    });
    await t.store.transition("t1", "in_progress", {
      actor: "orchestrator",
      reason: "started",
      expectedVersion: claimed.version,
    });
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    const started = pool.start(request("t1-a1-0a1b2c", base));
    await t.call("POST", "/workers/w1/poll", { token: w1, body: { free: 1, wait_ms: 0 } });
    await t.call("POST", "/workers/w1/sessions/t1-a1-0a1b2c/started", {
      token: w1,
      body: { pid: 7, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    const execution = await started;
    // The worker restarted (or came back after being lost) and knows nothing of its session.
    const again = await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    assert.equal(again.status, 200);
    const exit = await execution.exit;
    assert.equal(exit.result.ok, false);
    assert.match(exit.result.error ?? "", /registered again/);
    const task = await t.store.get("t1");
    assert.equal(task?.status, "open", "released, not failed");
    assert.equal(task?.assigned_agent, null);
    assert.equal(task?.retry_count, 0, "no retry spent");
  });
});

Deno.test("worker pool: starts made at once never take more slots than the workers have", async () => {
  await withSetup(async ({ t, pool, token, repo }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    // Three at once on a worker with 2 slots: each start publishes the base commit (git work)
    // before it queues; the slot is taken before that, so the third finds none.
    const starts = ["a", "b", "c"].map((x) => pool.start(request(`t1-${x}1-0a1b2c`, base)));
    let refused: { code?: string } | undefined;
    starts[2].catch((e) => (refused = e));
    // Every start ends queued (a held poll returns at each: the fake clock never ends its wait)
    // or refused.
    const sessions: string[] = [];
    while (sessions.length + (refused === undefined ? 0 : 1) < 3) {
      const poll = await t.call("POST", "/workers/w1/poll", {
        token: w1,
        body: { free: 5, wait_ms: 1000 },
      });
      const reply = poll.json as unknown as { assignments: { session: string }[] };
      sessions.push(...reply.assignments.map((a) => a.session));
    }
    assert.deepEqual(sessions.sort(), ["t1-a1-0a1b2c", "t1-b1-0a1b2c"]);
    assert.equal(refused?.code, "workers.no_slot");
    for (const s of starts.slice(0, 2)) s.catch(() => {}); // ended by close()
  });
});

Deno.test("worker pool: a worker silent past the timeout is lost; its sessions' claims go back at once", async () => {
  await withSetup(async ({ t, pool, clock, token, repo }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    await t.store.create({ id: "t1", title: "Task one", role: "dev" }, { actor: "test" });
    await t.store.claim("t1", { agent: "t1-a1-0a1b2c", expectedVersion: 1, actor: "orchestrator" });
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    const started = pool.start(request("t1-a1-0a1b2c", base));
    await t.call("POST", "/workers/w1/poll", { token: w1, body: { free: 1, wait_ms: 0 } });
    await t.call("POST", "/workers/w1/sessions/t1-a1-0a1b2c/started", {
      token: w1,
      body: { pid: 7, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    const execution = await started;
    clock.advance(61_000); // lostAfterS is 60
    assert.equal(pool.list()[0].state, "lost");
    const exit = await execution.exit;
    assert.equal(exit.result.ok, false);
    assert.match(exit.result.error ?? "", /was lost/);
    const task = await t.store.get("t1");
    assert.equal(task?.status, "open", "released at once, not left to the store's expiry");
    assert.equal(task?.retry_count, 0, "no retry spent");
    // What it reports later is refused: it does not hold the session any more.
    const late = await t.call("POST", "/workers/w1/heartbeat", {
      token: w1,
      body: { sessions: [] },
    });
    assert.equal(late.status, 409);
  });
});

Deno.test("worker pool: a worker lost after its agent reported done itself: the exit says the work is lost (the run fails the task, it never completes a branch that never came)", async () => {
  await withSetup(async ({ t, pool, clock, token, repo }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    await t.store.create({ id: "t1", title: "Task one", role: "dev" }, { actor: "test" });
    const claimed = await t.store.claim("t1", {
      agent: "t1-a1-0a1b2c",
      expectedVersion: 1,
      actor: "orchestrator",
    });
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    const started = pool.start(request("t1-a1-0a1b2c", base));
    await t.call("POST", "/workers/w1/poll", { token: w1, body: { free: 1, wait_ms: 0 } });
    await t.call("POST", "/workers/w1/sessions/t1-a1-0a1b2c/started", {
      token: w1,
      body: { pid: 7, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    const execution = await started;
    // The worker dies; its orphaned agent reports done straight to the task server.
    const running = await t.store.transition("t1", "in_progress", {
      actor: "orchestrator",
      reason: "started",
      expectedVersion: claimed.version,
    });
    await t.store.transition("t1", "done", {
      actor: "agent:t1-a1-0a1b2c",
      reason: "agent reported completion",
      expectedVersion: running.version,
    });
    clock.advance(61_000); // lostAfterS is 60
    assert.equal(pool.list()[0].state, "lost");
    const exit = await execution.exit;
    assert.equal(exit.result.ok, false);
    assert.match(exit.workLost ?? "", /was lost/, "the agent's branch never reached the project");
    assert.equal(
      (await t.store.get("t1"))?.status,
      "done",
      "the pool leaves the verdict to the run",
    );
  });
});

Deno.test("worker pool: a draining worker is let go only once the run is done with its finished sessions (their merge may still ask it to sign)", async () => {
  await withSetup(async ({ t, pool, clock, token, repo }) => {
    const w1 = await token("w1");
    await t.call("POST", "/workers/register", { token: w1, body: REGISTER("w1") });
    const base = (await git(repo, "rev-parse", "HEAD")).trim();
    const session = "t1-a1-0a1b2c";
    const started = pool.start(request(session, base));
    await t.call("POST", "/workers/w1/poll", { token: w1, body: { free: 1, wait_ms: 0 } });
    await t.call("POST", `/workers/w1/sessions/${session}/started`, {
      token: w1,
      body: { pid: 7, argv0: "deno", prompt_channel: "stdin", notes: [] },
    });
    const execution = await started;
    const drained = await t.call("POST", "/workers/w1/drain", { token: t.operator });
    assert.equal(drained.status, 200, drained.text);
    // The worker's own lineage key for the agent; its card travels with the result.
    const signer = await withTempDir((keys) =>
      ensureAgentSigner(lineagePaths(keys), `scripted:${session}`, {
        random: new SeededRandom(5),
      })
    );
    const result = await t.call("POST", `/workers/w1/sessions/${session}/result`, {
      token: w1,
      body: {
        exit: OK_EXIT,
        head: null,
        card: signer.card,
      },
    });
    assert.equal(result.status, 200, result.text);
    await execution.exit;
    // Its agent is done, but the run has not ended the session (a merge would ask the worker
    // to sign): the worker must stay.
    // A held poll (called directly: its wait is on the fake clock from the first call on).
    const held = pool.poll("w1", { free: 1, wait_ms: 1000 }, new AbortController().signal);
    clock.advance(1000);
    assert.equal((await held).exit, false, "told to leave before its work was merged");
    assert.ok(execution.lineageSigner !== undefined);
    execution.release?.();
    const last = await t.call("POST", "/workers/w1/poll", {
      token: w1,
      body: { free: 1, wait_ms: 1000 },
    });
    assert.equal(last.json.exit, true, "drained and idle: it may go");
  });
});
