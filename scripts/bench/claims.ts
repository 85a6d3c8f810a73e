// Claim throughput and latency with 8 concurrent claimers on each backend: PostgreSQL
// (`FOR UPDATE SKIP LOCKED`, one store object — one pool — per claimer, as separate workers
// would have), PostgreSQL + Redis (claim locks, same shape) and the embedded JSONL store (one
// process owns it: 8 concurrent callers, fsynced group commits). Each figure is printed beside
// its reference and the ratio:
// - PostgreSQL backends: the same claim as one bare SQL statement
//   (`UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING`) from 8 pools —
//   what the engine does with no rules, no validation, no events;
// - JSONL: an append + fdatasync of one claim-sized line, one at a time — the disk's rate for
//   one durable write per claim without group commit.
// The servers are throw-away instances (tests/_helpers/services.ts); without them those rows
// say why they are missing.
import { join } from "node:path";
import postgres from "postgres";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import { openSharedTaskStore } from "../../src/storage/mod.ts";
import { openJsonlTaskStore, type TaskStore } from "../../src/tasks/mod.ts";
import {
  POSTGRES_MISSING,
  REDIS_MISSING,
  startPostgres,
  startRedis,
} from "../../tests/_helpers/services.ts";
import { report } from "./_report.ts";

const CLAIMERS = 8;
const TASKS = 2000;
const OP = { actor: "bench", reason: "bench" };

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Runs `claim` from 8 concurrent loops until it returns false; claims/s and latency. */
async function measure(claimers: ((i: number) => Promise<boolean>)[]): Promise<Figures> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(claimers.map(async (claim, i) => {
    for (;;) {
      const start = performance.now();
      if (!(await claim(i))) return;
      latencies.push(performance.now() - start);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  if (latencies.length !== TASKS) throw new Error(`claimed ${latencies.length} of ${TASKS}`);
  latencies.sort((a, b) => a - b);
  return {
    perSecond: TASKS / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

function print(name: string, figures: Figures, reference?: { name: string; figures: Figures }) {
  report("claims", `${name} x${CLAIMERS}`, figures.perSecond, "claims/s");
  report("claims", `${name} x${CLAIMERS} p50`, figures.p50, "ms");
  report("claims", `${name} x${CLAIMERS} p99`, figures.p99, "ms");
  if (reference === undefined) return;
  report("claims", `reference: ${reference.name}`, reference.figures.perSecond, "claims/s");
  report("claims", `reference: ${reference.name} p99`, reference.figures.p99, "ms");
  report(
    "claims",
    `${name}: ratio to reference`,
    figures.perSecond / reference.figures.perSecond,
    "x (claims/s)",
  );
}

async function fill(store: TaskStore): Promise<void> {
  for (let i = 0; i < TASKS; i += 500) {
    await store.createMany(
      Array.from({ length: Math.min(500, TASKS - i) }, (_, j) => ({
        title: `t${i + j}`,
        role: "dev",
        priority: 1 + ((i + j) % 3),
      })),
      OP,
    );
  }
}

function claimWith(stores: TaskStore[]): ((i: number) => Promise<boolean>)[] {
  return stores.map((store) => async (i: number) =>
    (await store.claimNext("dev", { agent: `c${i}` })) !== undefined
  );
}

async function sharedFigures(databaseUrl: string, redisUrl?: string): Promise<Figures> {
  const namespace = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const open = () =>
    openSharedTaskStore({
      config: {
        storage: {
          backend: redisUrl === undefined ? "postgres" : "redis",
          database_url: databaseUrl,
          redis_url: redisUrl,
          namespace,
        },
        tuning: { ...DEFAULT_TUNING, storage: { ...DEFAULT_TUNING.storage, pool_size: 2 } },
      },
      runtimeDir: "/nonexistent",
      runId: "bench",
      clock: systemClock,
      random: systemRandom,
    });
  const stores = await Promise.all(Array.from({ length: CLAIMERS }, open));
  try {
    await fill(stores[0]);
    return await measure(claimWith(stores));
  } finally {
    for (const s of stores) await s.close();
  }
}

/** The engine's own rate: one bare SKIP LOCKED claim statement per claim, 8 pools. */
async function rawSqlFigures(databaseUrl: string): Promise<Figures> {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE TABLE IF NOT EXISTS bench_raw_claims (
    id text PRIMARY KEY, status text NOT NULL, priority int NOT NULL, seq serial, agent text)`);
  await admin.unsafe(`TRUNCATE bench_raw_claims`);
  await admin.unsafe(`INSERT INTO bench_raw_claims (id, status, priority)
    SELECT 't' || g, 'open', 1 + g % 3 FROM generate_series(0, ${TASKS - 1}) g`);
  const pools = Array.from(
    { length: CLAIMERS },
    () => postgres(databaseUrl, { max: 1, onnotice: () => {} }),
  );
  try {
    return await measure(pools.map((sql) => async (i: number) => {
      const rows = await sql`
        UPDATE bench_raw_claims SET status = 'claimed', agent = ${`c${i}`}
        WHERE id = (SELECT id FROM bench_raw_claims WHERE status = 'open'
                    ORDER BY priority, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id`;
      return rows.length === 1;
    }));
  } finally {
    await admin.unsafe(`DROP TABLE bench_raw_claims`);
    await admin.end();
    for (const p of pools) await p.end();
  }
}

async function jsonlFigures(dir: string): Promise<Figures> {
  const store = await openJsonlTaskStore(join(dir, "claims.jsonl"), {
    clock: systemClock,
    random: systemRandom,
    defaults: { priority: 2, max_retries: 2 },
    compactMinRecords: 1_000_000,
  });
  try {
    await fill(store);
    return await measure(claimWith(Array.from({ length: CLAIMERS }, () => store)));
  } finally {
    await store.close();
  }
}

/** One durable append (write + fdatasync) of a claim-sized line at a time. */
async function fsyncFigures(dir: string): Promise<Figures> {
  const file = await Deno.open(join(dir, "raw.log"), { append: true, create: true });
  const line = new TextEncoder().encode("x".repeat(900) + "\n");
  try {
    let left = TASKS;
    return await measure([async () => {
      if (left-- <= 0) return false;
      await file.write(line);
      await file.syncData();
      return true;
    }]);
  } finally {
    file.close();
  }
}

const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-claims-" });
try {
  print("jsonl", await jsonlFigures(dir), {
    name: "append + fdatasync, one per claim (no group commit)",
    figures: await fsyncFigures(dir),
  });
} finally {
  await Deno.remove(dir, { recursive: true });
}

if (POSTGRES_MISSING !== undefined) {
  console.error(`claims: PostgreSQL rows skipped: ${POSTGRES_MISSING}`);
} else {
  const pg = await startPostgres();
  try {
    const raw = {
      name: `bare SQL claim (UPDATE … SKIP LOCKED RETURNING) x${CLAIMERS}`,
      figures: await rawSqlFigures(pg.url),
    };
    print("postgres", await sharedFigures(pg.url), raw);
    if (REDIS_MISSING !== undefined) {
      console.error(`claims: PostgreSQL + Redis rows skipped: ${REDIS_MISSING}`);
    } else {
      const redis = await startRedis();
      try {
        print("postgres+redis", await sharedFigures(pg.url, redis.url), raw);
      } finally {
        await redis.stop();
      }
    }
  } finally {
    await pg.stop();
  }
}
