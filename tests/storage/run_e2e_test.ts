// Whole runs (real git, the scripted agent, the real task server, `bernstein` under its own
// permission set) on the shared stores: a plan runs to HEALTHY with its tasks in PostgreSQL,
// the password appears in no output, no audit record and no agent's environment, and a second
// orchestrator on the same
// namespace is refused, naming the first.
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import {
  POSTGRES_MISSING,
  POSTGRES_PASSWORD,
  REDIS_MISSING,
  startPostgres,
  startRedis,
  type TestServer,
} from "../_helpers/services.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, startBernstein, step, summaryOf } from "../e2e/_run_helpers.ts";
import { freshNamespace } from "./_shared_store.ts";

const missing = POSTGRES_MISSING ?? REDIS_MISSING;
const pg: TestServer | undefined = missing === undefined ? await startPostgres() : undefined;
const redis: TestServer | undefined = missing === undefined ? await startRedis() : undefined;

function runTest(name: string, fn: (pg: TestServer, redis: TestServer) => Promise<void>): void {
  Deno.test({
    name: missing === undefined ? name : `${name} (ignored: ${missing})`,
    ignore: missing !== undefined,
    fn: () => fn(pg as TestServer, redis as TestServer),
  });
}

const PLAN = `name: shared
cli: scripted
stages:
  - name: build
    steps:
${step("Write a", ["@agent write a.txt alpha"], "        files: [a.txt]\n")}
${step("Write b", ["@agent write b.txt beta"], "        files: [b.txt]\n")}
${
  step(
    "Look around",
    ["@agent run sh -c 'env > env_seen.txt'"],
    "        files: [env_seen.txt]\n",
  )
}
  - name: use
    depends_on: [build]
    steps:
${step("Write c", ["@agent write c.txt gamma"], "        files: [c.txt]\n")}
`;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await filesUnder(path));
    else if (e.isFile) out.push(path);
  }
  return out;
}

async function assertNoPassword(dir: string, ...texts: string[]): Promise<void> {
  for (const t of texts) assert.ok(!t.includes(POSTGRES_PASSWORD), "password in output");
  for (const file of await filesUnder(join(dir, ".sdd"))) {
    const bytes = await Deno.readFile(file);
    assert.ok(
      !new TextDecoder().decode(bytes).includes(POSTGRES_PASSWORD),
      `password written to ${file}`,
    );
  }
}

async function sharedRun(server: TestServer, redisUrl?: string): Promise<void> {
  await withTempDir(async (dir) => {
    const namespace = freshNamespace("run");
    await prepareRepo(dir, PLAN, {
      storage: { backend: redisUrl === undefined ? "postgres" : "redis", namespace },
    });
    const env = {
      BERNSTEIN_DATABASE_URL: server.url,
      ...(redisUrl === undefined ? {} : { BERNSTEIN_REDIS_URL: redisUrl }),
    };
    const run = await bern(dir, ["run", "plan.yaml", "--json"], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const summary = summaryOf(run);
    assert.equal(summary.health, "HEALTHY");
    for (const [f, text] of [["a.txt", "alpha\n"], ["b.txt", "beta\n"], ["c.txt", "gamma\n"]]) {
      assert.equal(await Deno.readTextFile(join(dir, f)), text);
    }
    // A nosy agent sees neither the URL nor the password in its environment.
    const seen = await Deno.readTextFile(join(dir, "env_seen.txt"));
    assert.match(seen, /BERNSTEIN_TASK_TOKEN_FILE=/, "the dump is the agent's real environment");
    assert.ok(!seen.includes("BERNSTEIN_DATABASE_URL") && !seen.includes("BERNSTEIN_REDIS_URL"));
    assert.ok(!seen.includes(POSTGRES_PASSWORD));
    // The tasks live in PostgreSQL under the namespace and this run, not in a JSONL log.
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ id: string; status: string }[]>`
        SELECT id, status FROM bernstein.tasks
        WHERE namespace = ${namespace} AND run_id = ${String(summary.run_id)} ORDER BY id`;
      assert.deepEqual(rows.map((r) => r.status), ["closed", "closed", "closed", "closed"]);
      const owners = await sql`SELECT * FROM bernstein.owners WHERE namespace = ${namespace}`;
      assert.equal(owners.length, 0, "the namespace is released when the run ends");
    } finally {
      await sql.end();
    }
    assert.equal(
      await Deno.stat(join(dir, ".sdd", "runtime", "tasks.jsonl")).then(() => true, () => false),
      false,
    );
    const status = await bern(dir, ["status", "--json"], env);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(JSON.parse(status.stdout).tasks, { total: 4, closed: 4 });
    const audit = await bern(dir, ["audit", "verify"], env);
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    await assertNoPassword(dir, run.stdout, run.stderr, status.stdout, audit.stdout);
  });
}

runTest(
  "a plan runs to HEALTHY on PostgreSQL; status reads it there; no password anywhere",
  async (server) => {
    await sharedRun(server);
  },
);

runTest("a plan runs to HEALTHY on PostgreSQL + Redis", async (server, r) => {
  await sharedRun(server, r.url);
});

runTest(
  "a second orchestrator on the same namespace is refused, naming the first",
  async (server) => {
    await withTempDir(async (root) => {
      const namespace = freshNamespace("race");
      const config = { storage: { backend: "postgres", namespace, database_url: server.url } };
      const slow = `name: slow\ncli: scripted\nstages:\n  - name: s\n    steps:\n${
        step("Wait", ["@agent sleep 60000", "@agent write w.txt w"], "        files: [w.txt]\n")
      }\n`;
      const first = join(root, "first");
      const second = join(root, "second");
      await Deno.mkdir(first);
      await Deno.mkdir(second);
      await prepareRepo(first, slow, config);
      await prepareRepo(second, PLAN, config);
      const child = startBernstein(first, ["run", "plan.yaml", "--json"]);
      const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      try {
        // Wait for the first orchestrator to hold the namespace (it has spawned its agent).
        while (!seen.includes('"task.spawned"')) {
          const { value, done } = await lines.read();
          if (done) throw new Error(`first run ended early: ${seen}`);
          seen += value;
        }
        const refused = await bern(second, ["run", "plan.yaml"]);
        assert.equal(refused.code, 1, refused.stdout + refused.stderr);
        assert.match(
          refused.stderr,
          new RegExp(
            `^error\\[task\\.store_locked\\]: the task store postgres://bern:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/postgres\\?sslmode=disable \\(namespace ${namespace}\\) is open in another process \\(run \\S+ on \\S+, pid ${child.pid}, since \\S+\\)`,
          ),
        );
        assert.ok(!refused.stderr.includes(POSTGRES_PASSWORD));
        const sql = postgres(server.url, { max: 1, onnotice: () => {} });
        try {
          const [{ count }] = await sql<{ count: string }[]>`
          SELECT count(*) FROM bernstein.tasks WHERE namespace = ${namespace}`;
          assert.equal(Number(count), 1, "the refused run created no task");
        } finally {
          await sql.end();
        }
      } finally {
        child.kill("SIGKILL");
        await child.status;
        await lines.cancel().catch(() => {});
        await child.stderr.cancel().catch(() => {});
        // The agent the first run started is in its own process group: stop it too.
        await killAgents(first);
      }
    });
  },
);

runTest(
  "an orchestrator whose namespace another took over while its lock's session was down stops its agents and ends store-lock-lost, writing nothing more",
  async (server) => {
    await withTempDir(async (dir) => {
      const namespace = freshNamespace("lost");
      const config = { storage: { backend: "postgres", namespace, database_url: server.url } };
      // The agent waits for a file nobody writes: only the orchestrator can end it.
      const hold = `@agent run sh -c "while [ ! -e ${join(dir, "never")} ]; do sleep 0.05; done"`;
      const plan = `name: lost\ncli: scripted\nstages:\n  - name: s\n    steps:\n${
        step("Wait", [hold, "@agent write w.txt w"], "        files: [w.txt]\n")
      }\n`;
      await prepareRepo(dir, plan, config);
      const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
      const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      const key = `bernstein:namespace:${namespace}`;
      const thief = postgres(server.url, { max: 1, onnotice: () => {} });
      const admin = postgres(server.url, { max: 1, onnotice: () => {} });
      try {
        while (!seen.includes('"task.spawned"')) {
          const { value, done } = await stdout.read();
          if (done) throw new Error(`the run ended early: ${seen}`);
          seen += value;
        }
        // End the session holding the lock and take the namespace before the orchestrator
        // takes it back (it re-takes a free lock at its next tick: then end it again).
        let taken = false;
        for (let round = 0; !taken; round++) {
          assert.ok(round < 50, "the namespace could not be taken over");
          const ended = await admin<{ pid: number }[]>`
            SELECT pid, pg_terminate_backend(pid) FROM pg_locks
            WHERE locktype = 'advisory' AND objsubid = 1
              AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(${key}, 0)`;
          for (const { pid } of ended) {
            for (;;) {
              const [row] = await admin<{ gone: boolean }[]>`
                SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}) AS gone`;
              if (row.gone) break;
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
          const [lock] = await thief<{ taken: boolean }[]>`
            SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS taken`;
          taken = lock.taken;
        }
        await thief`
          UPDATE bernstein.owners SET run_id = 'thief-run', host = 'host-x', pid = 7,
            since = '2026-01-01T00:00:00.000Z' WHERE namespace = ${namespace}`;
        for (;;) {
          const { value, done } = await stdout.read();
          if (done) break;
          seen += value;
        }
        const status = await child.status;
        const stderr = await new Response(child.stderr).text();
        assert.equal(status.code, 1, seen + stderr);
        const summary = summaryOf({ code: status.code, stdout: seen, stderr });
        assert.equal(summary.end, "store-lock-lost", seen);
        assert.match(
          String(summary.reason),
          /lost the task store .* another orchestrator holds it now \(run thief-run on host-x, pid 7/,
        );
        assert.ok(!seen.includes(POSTGRES_PASSWORD) && !stderr.includes(POSTGRES_PASSWORD));
        // Its agent is gone; its task is as the loss found it (no write after the loss); the
        // new owner's row is untouched by the run's exit.
        const sessions = join(dir, ".sdd", "runtime", "sessions");
        for (const e of Deno.readDirSync(sessions)) {
          const record = JSON.parse(await Deno.readTextFile(join(sessions, e.name)));
          assert.deepEqual(await liveInGroup(record.pid), [], "the agent's process group is gone");
        }
        const rows = await admin<{ status: string }[]>`
          SELECT status FROM bernstein.tasks WHERE namespace = ${namespace}`;
        assert.deepEqual(rows.map((r) => r.status), ["in_progress"]);
        const [owner] = await admin<{ run_id: string }[]>`
          SELECT run_id FROM bernstein.owners WHERE namespace = ${namespace}`;
        assert.equal(owner?.run_id, "thief-run");
      } finally {
        try {
          child.kill("SIGKILL");
        } catch {
          // ended
        }
        await child.status;
        await stdout.cancel().catch(() => {});
        await child.stderr.cancel().catch(() => {});
        await killAgents(dir);
        await thief.end();
        await admin.end();
      }
    });
  },
);

/**
 * The live processes of process group `pgid` (zombies aside: a sandbox's inner process whose
 * parent is gone may wait for a reaper that a container's pid 1 never is).
 */
async function liveInGroup(pgid: number): Promise<string[]> {
  const ps = await new Deno.Command("ps", {
    args: ["-eo", "pgid=,stat=,pid=,args="],
    stdout: "piped",
  })
    .output();
  return new TextDecoder().decode(ps.stdout).split("\n").map((l) => l.trim().split(/\s+/))
    .filter(([group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"))
    .map((fields) => fields.slice(2).join(" "));
}

/** Kills the agent process groups a killed orchestrator left behind (its session files). */
async function killAgents(dir: string): Promise<void> {
  const sessions = join(dir, ".sdd", "runtime", "sessions");
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(sessions)].map((e) => e.name);
  } catch {
    return; // No agent was started.
  }
  for (const name of names) {
    const record = JSON.parse(await Deno.readTextFile(join(sessions, name))) as { pid?: number };
    if (typeof record.pid !== "number") continue;
    try {
      Deno.kill(-record.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
