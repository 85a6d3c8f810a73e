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
    assert.match(seen, /BERNSTEIN_TASK_TOKEN=/, "the dump is the agent's real environment");
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
