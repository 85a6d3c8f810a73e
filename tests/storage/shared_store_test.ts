// The shared stores beyond the conformance suite, on real servers: concurrent claimers in
// several processes, the versioned schema, statement timeouts, one orchestrator per namespace,
// unreachable and refused engines (never printing the password), cross-process wake-ups and
// the Redis claim locks.
import assert from "node:assert/strict";
import postgres from "postgres";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { FakeClock, SeededRandom, systemClock, systemRandom } from "../../src/io/mod.ts";
import {
  ensureSchema,
  migrate,
  type Migration,
  MIGRATIONS,
  openSharedTaskStore,
  type PostgresTaskStore,
  readSchemaVersion,
  SCHEMA_VERSION,
} from "../../src/storage/mod.ts";
import type { Task } from "../../src/tasks/mod.ts";
import {
  POSTGRES_MISSING,
  POSTGRES_PASSWORD,
  REDIS_MISSING,
  startPostgres,
  startRedis,
  type TestServer,
} from "../_helpers/services.ts";
import { freshNamespace, openTestStore } from "./_shared_store.ts";

const OP = { actor: "test", reason: "test" };
const CLAIMER = new URL("./_claimer.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

const pg: TestServer | undefined = POSTGRES_MISSING === undefined
  ? await startPostgres()
  : undefined;
const redis: TestServer | undefined = pg !== undefined && REDIS_MISSING === undefined
  ? await startRedis()
  : undefined;

function pgTest(name: string, fn: (pg: TestServer) => Promise<void>): void {
  Deno.test({
    name: pg === undefined ? `${name} (ignored: ${POSTGRES_MISSING})` : name,
    ignore: pg === undefined,
    fn: () => fn(pg as TestServer),
  });
}

function redisTest(name: string, fn: (pg: TestServer, redis: TestServer) => Promise<void>): void {
  const missing = POSTGRES_MISSING ?? REDIS_MISSING;
  Deno.test({
    name: missing === undefined ? name : `${name} (ignored: ${missing})`,
    ignore: missing !== undefined,
    fn: () => fn(pg as TestServer, redis as TestServer),
  });
}

/** A raw connection for the test's own SQL (creating databases, holding locks). */
function rawSql(url: string, database = "postgres") {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return postgres(u.href, { max: 2, onnotice: () => {} });
}

async function freshDatabase(server: TestServer): Promise<string> {
  const name = freshNamespace("db").replace(/-/g, "_");
  const admin = rawSql(server.url);
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(server.url);
  u.pathname = `/${name}`;
  return u.href;
}

async function spawnClaimer(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--frozen", `--config=${CONFIG}`, "-P=dev", CLAIMER, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes("ready\n")) {
    const { value, done } = await lines.read();
    if (done) {
      throw new Error(
        `claimer exited before it was ready: ${await new Response(child.stderr).text()}`,
      );
    }
    buffer += value;
  }
  return {
    start: () => child.stdin.close(),
    async claimed(): Promise<string[]> {
      for (;;) {
        const { value, done } = await lines.read();
        if (done) break;
        buffer += value;
      }
      const status = await child.status;
      const stderr = await new Response(child.stderr).text();
      assert.equal(status.code, 0, stderr);
      return buffer.split("\n").filter((l) => l.startsWith("claimed "));
    },
  };
}

async function concurrentClaimers(databaseUrl: string, redisUrl?: string): Promise<void> {
  const namespace = freshNamespace();
  const open = () =>
    openTestStore({ databaseUrl, redisUrl, namespace, clock: systemClock, random: systemRandom });
  const planner = await open();
  const local = await Promise.all(Array.from({ length: 5 }, open));
  try {
    await planner.createMany(
      Array.from({ length: 60 }, (_, i) => ({ title: `t${i}`, role: "dev" })),
      OP,
    );
    const children = await Promise.all(
      ["p1", "p2", "p3"].map((agent) =>
        spawnClaimer([databaseUrl, namespace, agent, redisUrl ?? ""])
      ),
    );
    for (const c of children) c.start();
    const inProcess = local.map(async (store, i) => {
      const mine: string[] = [];
      for (;;) {
        const t = await store.claimNext("dev", { agent: `l${i}` });
        if (t === undefined) return mine;
        mine.push(`claimed ${t.id} ${t.assigned_agent}`);
      }
    });
    const all = [
      ...(await Promise.all(children.map((c) => c.claimed()))).flat(),
      ...(await Promise.all(inProcess)).flat(),
    ];
    const ids = all.map((l) => l.split(" ")[1]);
    assert.equal(ids.length, 60, "every task claimed");
    assert.equal(new Set(ids).size, 60, "no task claimed twice");
    const stored = new Map((await planner.list()).map((t) => [t.id, t]));
    for (const line of all) {
      const [, id, agent] = line.split(" ");
      assert.equal(stored.get(id)?.status, "claimed");
      assert.equal(stored.get(id)?.assigned_agent, agent, `${id} is held by who claimed it`);
    }
    const claimers = new Set(all.map((l) => l.split(" ")[2]));
    assert.ok(claimers.size >= 2, `work spread over claimers: ${[...claimers].join(", ")}`);
  } finally {
    for (const s of [planner, ...local]) await s.close();
  }
}

pgTest(
  "postgres: claimers in three processes and five pools never both win a task",
  async (server) => {
    await concurrentClaimers(server.url);
  },
);

redisTest(
  "redis: claimers in three processes and five pools never both win a task",
  async (server, r) => {
    await concurrentClaimers(server.url, r.url);
  },
);

pgTest(
  "schema: a fresh database gets the current version; a newer one is refused naming both",
  async (server) => {
    const url = await freshDatabase(server);
    const sql = rawSql(url, new URL(url).pathname.slice(1));
    try {
      assert.equal(await readSchemaVersion(sql), 0);
      const store = await openTestStore({
        databaseUrl: url,
        clock: new FakeClock(),
        random: new SeededRandom(1),
      });
      await store.close();
      assert.equal(await readSchemaVersion(sql), SCHEMA_VERSION);
      const [row] = await sql`SELECT applied_by FROM bernstein.schema_version WHERE version = 1`;
      assert.match(row.applied_by, /^bernstein \d+\.\d+\.\d+/);
      await sql`INSERT INTO bernstein.schema_version (version, applied_by) VALUES (99, 'future')`;
      await assert.rejects(
        openTestStore({ databaseUrl: url, clock: new FakeClock(), random: new SeededRandom(1) }),
        (e: unknown) => {
          const err = e as { code?: string; message?: string };
          assert.equal(err.code, "storage.schema_too_new");
          assert.match(err.message ?? "", /version 99.*version 1\b/);
          return true;
        },
      );
      await assert.rejects(migrate(sql, { appliedBy: "t" }), { code: "storage.schema_too_new" });
    } finally {
      await sql.end();
    }
  },
);

pgTest(
  "schema: an older database is refused until 'storage migrate'; concurrent migrations apply each step once",
  async (server) => {
    const url = await freshDatabase(server);
    const sql = rawSql(url, new URL(url).pathname.slice(1));
    const other = rawSql(url, new URL(url).pathname.slice(1));
    const next: Migration[] = [...MIGRATIONS, {
      version: SCHEMA_VERSION + 1,
      summary: "a test column",
      statements: ["ALTER TABLE bernstein.tasks ADD COLUMN test_note text"],
    }];
    try {
      await ensureSchema(sql, { appliedBy: "t" });
      await assert.rejects(
        ensureSchema(sql, { appliedBy: "t", migrations: next }),
        (e: unknown) => {
          const err = e as { code?: string; hint?: string; message?: string };
          assert.equal(err.code, "storage.schema_outdated");
          assert.match(
            err.message ?? "",
            new RegExp(`version ${SCHEMA_VERSION}\\b.*version ${SCHEMA_VERSION + 1}`),
          );
          assert.match(err.hint ?? "", /bernstein storage migrate/);
          return true;
        },
      );
      const [a, b] = await Promise.all([
        migrate(sql, { appliedBy: "a", migrations: next }),
        migrate(other, { appliedBy: "b", migrations: next }),
      ]);
      assert.deepEqual(
        [a.applied.length + b.applied.length, a.to, b.to],
        [1, SCHEMA_VERSION + 1, SCHEMA_VERSION + 1],
      );
      assert.equal(
        await ensureSchema(sql, { appliedBy: "t", migrations: next }),
        SCHEMA_VERSION + 1,
      );
    } finally {
      await sql.end();
      await other.end();
    }
  },
);

pgTest(
  "a statement stuck on a lock fails with task.store_unavailable after statement_timeout_s",
  async (server) => {
    const namespace = freshNamespace();
    const store = await openTestStore({
      databaseUrl: server.url,
      namespace,
      clock: new FakeClock(),
      random: new SeededRandom(1),
      storage: { statement_timeout_s: 0.3 },
    });
    const raw = rawSql(server.url);
    try {
      await store.create({ id: "t", title: "t", role: "dev" }, OP);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => release = resolve);
      let locked: () => void = () => {};
      const isLocked = new Promise<void>((resolve) => locked = resolve);
      const holder = raw.begin(async (tx) => {
        await tx`SELECT id FROM bernstein.tasks WHERE namespace = ${namespace} AND id = 't' FOR UPDATE`;
        locked();
        await held;
      });
      await isLocked;
      await assert.rejects(store.transition("t", "cancelled", OP), (e: unknown) => {
        const err = e as { code?: string; message?: string };
        assert.equal(err.code, "task.store_unavailable");
        assert.match(err.message ?? "", /statement timed out/);
        return true;
      });
      release();
      await holder;
      assert.equal((await store.transition("t", "cancelled", OP)).status, "cancelled");
    } finally {
      await store.close();
      await raw.end();
    }
  },
);

pgTest(
  "one orchestrator per namespace: a second is refused naming the first; free again after close",
  async (server) => {
    const namespace = freshNamespace();
    const open = (runId: string, pid: number) =>
      openTestStore({
        databaseUrl: server.url,
        namespace,
        runId,
        clock: new FakeClock(Date.UTC(2026, 0, 1)),
        random: new SeededRandom(1),
        owner: { host: "host-a", pid },
      });
    const first = await open("run-1", 111);
    try {
      await assert.rejects(open("run-2", 222), (e: unknown) => {
        const err = e as { code?: string; message?: string };
        assert.equal(err.code, "task.store_locked");
        assert.match(err.message ?? "", /namespace t-[0-9a-f]+.*run run-1 on host-a, pid 111/);
        assert.ok(!(err.message ?? "").includes(POSTGRES_PASSWORD));
        return true;
      });
      // Another namespace is not affected; a non-owner (a worker's view) never takes the lock.
      const elsewhere = await openTestStore({
        databaseUrl: server.url,
        clock: new FakeClock(),
        random: new SeededRandom(1),
        owner: { host: "host-b", pid: 333 },
      });
      await elsewhere.close();
      const reader = await openTestStore({
        databaseUrl: server.url,
        namespace,
        clock: new FakeClock(),
        random: new SeededRandom(1),
      });
      await reader.close();
    } finally {
      await first.close();
    }
    const second = await open("run-2", 222);
    await second.close();
  },
);

/** Ends the database session holding `namespace`'s lock (a restart or a cut connection). */
async function endLockSession(url: string, namespace: string): Promise<void> {
  const admin = rawSql(url, new URL(url).pathname.slice(1) || "postgres");
  try {
    const ended = await admin<{ pid: number }[]>`
      SELECT pid, pg_terminate_backend(pid) FROM pg_locks
      WHERE locktype = 'advisory' AND objsubid = 1
        AND ((classid::bigint << 32) | objid::bigint) =
          hashtextextended(${`bernstein:namespace:${namespace}`}, 0)`;
    assert.equal(ended.length, 1, "one session held the namespace");
    // Ended once the server has let go of the lock (the backend exits after the signal).
    for (;;) {
      const [row] = await admin<{ gone: boolean }[]>`
        SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${ended[0].pid}) AS gone`;
      if (row.gone) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await admin.end();
  }
}

pgTest(
  "a namespace lock lost with its session is taken again when free; when another orchestrator took it: task.store_lock_lost, reads only, its owner row left alone",
  async (server) => {
    const namespace = freshNamespace();
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const open = (runId: string, pid: number) =>
      openTestStore({
        databaseUrl: server.url,
        namespace,
        runId,
        clock,
        random: new SeededRandom(pid),
        owner: { host: "host-a", pid },
      });
    const first = await open("run-1", 111);
    let firstClosed = false;
    try {
      await first.createMany([{ id: "t", title: "t", role: "backend" }], OP);
      assert.equal(await first.checkOwnership(), "held");
      // A blip: the session goes, nobody else takes the namespace, the next check takes it back.
      await endLockSession(server.url, namespace);
      clock.advance(2000);
      assert.equal(await first.checkOwnership(), "retaken");
      await assert.rejects(open("run-2", 222), { code: "task.store_locked" });
      // The session goes again, and another orchestrator takes the namespace meanwhile.
      await endLockSession(server.url, namespace);
      const second = await open("run-2", 222);
      try {
        clock.advance(2000);
        await assert.rejects(first.checkOwnership(), (e: unknown) => {
          const err = e as { code?: string; message?: string };
          assert.equal(err.code, "task.store_lock_lost");
          assert.match(err.message ?? "", /run run-2 on host-a, pid 222/);
          assert.ok(!(err.message ?? "").includes(POSTGRES_PASSWORD));
          return true;
        });
        // Lost for good: no more writes (claims, transitions, heartbeats), reads still answer.
        await assert.rejects(first.claim("t", { agent: "a", actor: "test", expectedVersion: 1 }), {
          code: "task.store_lock_lost",
        });
        await assert.rejects(first.heartbeat("t", { agent: "a" }), {
          code: "task.store_lock_lost",
        });
        assert.equal((await first.get("t"))?.status, "open");
        clock.advance(2000);
        await assert.rejects(first.checkOwnership(), { code: "task.store_lock_lost" });
        // Closing the first leaves the second's ownership as it is.
        await first.close();
        firstClosed = true;
        await assert.rejects(open("run-3", 333), (e: unknown) => {
          assert.match((e as Error).message, /run run-2 on host-a, pid 222/);
          return true;
        });
        assert.equal(await second.checkOwnership(), "held");
      } finally {
        await second.close();
      }
    } finally {
      if (!firstClosed) await first.close();
    }
  },
);

pgTest(
  "runs are kept apart: a fresh run sees none of the last run's tasks, a resumed one sees its own",
  async (server) => {
    const namespace = freshNamespace();
    const open = (runId: string) =>
      openTestStore({
        databaseUrl: server.url,
        namespace,
        runId,
        clock: new FakeClock(),
        random: new SeededRandom(1),
      });
    const one = await open("run-1");
    await one.create({ id: "a", title: "a", role: "dev" }, OP);
    await one.close();
    const two = await open("run-2");
    assert.deepEqual(await two.list(), []);
    await two.create({ id: "a", title: "same id, other run", role: "dev" }, OP);
    await two.close();
    const resumed = await open("run-1");
    assert.deepEqual((await resumed.list()).map((t) => t.title), ["a"]);
    await resumed.close();
  },
);

pgTest(
  "unreachable and refused engines: one line naming key, layer and host:port, no password",
  async (server) => {
    const closedPort = (() => {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (l.addr as Deno.NetAddr).port;
      l.close();
      return port;
    })();
    const bad =
      `postgres://bern:${POSTGRES_PASSWORD}@127.0.0.1:${closedPort}/postgres?sslmode=disable`;
    await assert.rejects(
      openTestStore({ databaseUrl: bad, clock: new FakeClock(), random: new SeededRandom(1) }),
      (e: unknown) => {
        const err = e as { code?: string; message?: string; exitCode?: number };
        assert.equal(err.code, "storage.unreachable");
        assert.equal(err.exitCode, 2);
        assert.match(
          err.message ?? "",
          new RegExp(
            `^storage\\.database_url \\(set by test\\): cannot reach PostgreSQL at 127\\.0\\.0\\.1:${closedPort}: `,
          ),
        );
        assert.ok(!(err.message ?? "").includes(POSTGRES_PASSWORD));
        assert.ok(!JSON.stringify(e).includes(POSTGRES_PASSWORD));
        return true;
      },
    );
    const wrong = server.url.replace(POSTGRES_PASSWORD, "not-the-password");
    await assert.rejects(
      openTestStore({ databaseUrl: wrong, clock: new FakeClock(), random: new SeededRandom(1) }),
      (e: unknown) => {
        const err = e as { code?: string; message?: string };
        assert.equal(err.code, "storage.auth_failed");
        assert.match(err.message ?? "", /password authentication failed/);
        assert.ok(!(err.message ?? "").includes("not-the-password"));
        return true;
      },
    );
  },
);

pgTest(
  "a damaged row is task.log_corrupt naming the row, never a half-read task",
  async (server) => {
    const namespace = freshNamespace();
    const store = await openTestStore({
      databaseUrl: server.url,
      namespace,
      clock: new FakeClock(),
      random: new SeededRandom(1),
    });
    const raw = rawSql(server.url);
    try {
      await store.create({ id: "t", title: "t", role: "dev" }, OP);
      await raw`UPDATE bernstein.tasks SET record = '{"id":"t","title":""}'
      WHERE namespace = ${namespace} AND id = 't'`;
      await assert.rejects(store.get("t"), (e: unknown) => {
        const err = e as { code?: string; location?: string };
        assert.equal(err.code, "task.log_corrupt");
        assert.match(err.location ?? "", new RegExp(`namespace ${namespace}, run r1, id t`));
        return true;
      });
    } finally {
      await store.close();
      await raw.end();
    }
  },
);

async function wakesAcross(databaseUrl: string, redisUrl?: string): Promise<void> {
  const namespace = freshNamespace();
  const open = (ns: string) =>
    openTestStore({
      databaseUrl,
      redisUrl,
      namespace: ns,
      clock: systemClock,
      random: systemRandom,
    });
  const waiter = await open(namespace);
  const writer = await open(namespace);
  const stranger = await open(freshNamespace());
  try {
    let wakes = 0;
    let woken: () => void = () => {};
    const next = () => new Promise<void>((resolve) => woken = resolve);
    let wake = next();
    const stop = waiter.onWork(() => {
      wakes++;
      woken();
    });
    assert.equal(await waiter.listening(), true);
    await writer.create({ title: "new", role: "dev" }, OP);
    await wake;
    assert.equal(wakes, 1, "a task created open wakes the waiter");
    wake = next();
    const claimed = await waiter.claimNext("dev", { agent: "a" }) as Task;
    await writer.transition(claimed.id, "open", OP);
    await wake;
    assert.equal(wakes, 2, "a reopened task wakes the waiter");
    wake = next();
    await stranger.create({ title: "elsewhere", role: "dev" }, OP);
    await writer.create({ title: "planned", role: "dev", status: "planned" }, OP);
    // Delivered in order after anything the two above could have sent.
    await writer.create({ title: "last", role: "dev" }, OP);
    await wake;
    assert.equal(wakes, 3, "other namespaces and planned tasks wake nobody");
    stop();
  } finally {
    for (const s of [waiter, writer, stranger]) await s.close();
  }
}

pgTest(
  "postgres: idle claimers are woken through LISTEN/NOTIFY by other processes' changes",
  async (server) => {
    await wakesAcross(server.url);
  },
);

redisTest(
  "redis: idle claimers are woken through pub/sub by other processes' changes",
  async (server, r) => {
    await wakesAcross(server.url, r.url);
  },
);

redisTest(
  "redis: a claim lock is released only by its own token; Redis down fails claims at once",
  async (server) => {
    const own = await startRedis();
    const { createClient } = await import("@redis/client");
    const client = createClient({ url: own.url });
    await client.connect();
    const namespace = freshNamespace();
    const store = await openTestStore({
      databaseUrl: server.url,
      redisUrl: own.url,
      namespace,
      clock: new FakeClock(),
      random: new SeededRandom(1),
    });
    try {
      await store.createMany([
        { id: "a", title: "a", role: "dev" },
        { id: "b", title: "b", role: "dev" },
      ], OP);
      // Another claimer holds the lock of the best candidate: this one skips to the next.
      const key = `bernstein:claim:${namespace}:r1:a`;
      await client.set(key, "someone-else", {
        condition: "NX",
        expiration: { type: "PX", value: 60_000 },
      });
      assert.equal((await store.claimNext("dev", { agent: "x" }))?.id, "b");
      assert.equal(await client.get(key), "someone-else", "a foreign lock is never deleted");
      assert.equal(
        await store.claimNext("dev", { agent: "x" }),
        undefined,
        "a locked candidate is skipped",
      );
      await client.del(key);
      assert.equal((await store.claimNext("dev", { agent: "x" }))?.id, "a");
      assert.deepEqual(
        await client.keys(`bernstein:claim:${namespace}:*`),
        [],
        "own locks released",
      );
      client.destroy();
      await own.stop();
      // PostgreSQL still takes the task (its wake-up is lost, not the change)…
      await store.create({ id: "c", title: "c", role: "dev" }, OP);
      // …but a claim needs its Redis lock: it fails at once instead of waiting for Redis.
      await assert.rejects(store.claimNext("dev", { agent: "x" }), {
        code: "task.store_unavailable",
      });
    } finally {
      await store.close();
      await own.stop();
    }
  },
);

Deno.test({
  name: "openSharedTaskStore refuses a host outside the network grant before connecting",
  permissions: { net: ["127.0.0.1"], env: true, read: true, sys: true },
  async fn() {
    await assert.rejects(
      openSharedTaskStore({
        config: {
          storage: {
            backend: "postgres",
            database_url: "postgres://u:hunter2@db.example.invalid/x",
          },
          tuning: DEFAULT_TUNING,
        },
        sources: new Map([["storage.database_url", "bernstein.yaml"]]),
        runtimeDir: "/nonexistent",
        runId: "r",
        clock: new FakeClock(),
        random: new SeededRandom(1),
      }),
      (e: unknown) => {
        const err = e as { code?: string; message?: string; hint?: string };
        assert.equal(err.code, "storage.net_denied");
        assert.match(
          err.message ?? "",
          /^storage\.database_url \(set by bernstein\.yaml\) names db\.example\.invalid:5432/,
        );
        assert.match(err.hint ?? "", /--net-host db\.example\.invalid:5432/);
        assert.ok(!JSON.stringify([err.message, err.hint]).includes("hunter2"));
        return true;
      },
    );
  },
});

export type { PostgresTaskStore };
