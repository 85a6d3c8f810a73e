// The whole `bernstein` binary (its real permission set) against real PostgreSQL and Redis:
// doctor reports version, latency and schema; `config validate` and `run --dry-run` refuse an
// unreachable URL before anything starts (one line, key + layer + host:port, exit 2);
// `storage migrate` creates the schema; and the password appears in no output.
import assert from "node:assert/strict";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../src/storage/mod.ts";
import { runBernstein } from "../_helpers/cli.ts";
import {
  POSTGRES_MISSING,
  POSTGRES_PASSWORD,
  REDIS_MISSING,
  startPostgres,
  startRedis,
  type TestServer,
} from "../_helpers/services.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

const missing = POSTGRES_MISSING ?? REDIS_MISSING;
const pg: TestServer | undefined = missing === undefined ? await startPostgres() : undefined;
const redis: TestServer | undefined = missing === undefined ? await startRedis() : undefined;

function cliTest(name: string, fn: (pg: TestServer, redis: TestServer) => Promise<void>): void {
  Deno.test({
    name: missing === undefined ? name : `${name} (ignored: ${missing})`,
    ignore: missing !== undefined,
    fn: () => fn(pg as TestServer, redis as TestServer),
  });
}

function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A repository on a feature branch whose bernstein.yaml holds `storage`. */
async function project(dir: string, storage: string): Promise<Record<string, string>> {
  await makeRepo(dir);
  await Deno.writeTextFile(join(dir, "bernstein.yaml"), `cli: scripted\nstorage: ${storage}\n`);
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "config");
  return { HOME: dir, BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key") };
}

function noPassword(...texts: string[]): void {
  for (const text of texts) {
    assert.ok(!text.includes(POSTGRES_PASSWORD), `password leaked: ${text}`);
  }
}

cliTest(
  "doctor reports PostgreSQL and Redis versions, latency and the schema version",
  async (server, r) => {
    await withTempDir(async (dir) => {
      const database = `${freshDb()}`;
      await createDatabase(server, database);
      const url = server.url.replace("/postgres?", `/${database}?`);
      const env = await project(dir, `{ backend: redis, redis_url: "${r.url}" }`);
      const envWithUrl = { ...env, BERNSTEIN_DATABASE_URL: url };
      const before = await runBernstein(["doctor", "--json"], { cwd: dir, env: envWithUrl });
      const checks = (JSON.parse(before.stdout) as {
        checks: { name: string; status: string; detail: string; hint: string | null }[];
      }).checks;
      const row = (n: string) => checks.find((c) => c.name === n);
      assert.equal(row("postgres")?.status, "OK", JSON.stringify(checks));
      assert.match(
        row("postgres")?.detail ?? "",
        /^PostgreSQL 1\d\.\d+ at 127\.0\.0\.1:\d+\/db_\w+, latency \d+\.\d ms$/,
      );
      assert.match(
        row("redis")?.detail ?? "",
        /^Redis 7\.\d+\.\d+ at 127\.0\.0\.1:\d+\/0, latency \d+\.\d ms$/,
      );
      assert.equal(row("schema")?.status, "WARN");
      assert.match(row("schema")?.hint ?? "", /storage migrate/);
      noPassword(before.stdout, before.stderr);

      const migrated = await runBernstein(["storage", "migrate"], { cwd: dir, env: envWithUrl });
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.match(
        migrated.stdout,
        new RegExp(`/${database}: schema version 0 → ${SCHEMA_VERSION}\\n  applied 1: `),
      );
      const again = await runBernstein(["storage", "migrate", "--json"], {
        cwd: dir,
        env: envWithUrl,
      });
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(
        (({ migrated, from, to }) => ({ migrated, from, to }))(JSON.parse(again.stdout)),
        { migrated: false, from: SCHEMA_VERSION, to: SCHEMA_VERSION },
      );

      const after = await runBernstein(["doctor"], { cwd: dir, env: envWithUrl });
      assert.match(
        after.stdout,
        new RegExp(`OK\\s+schema\\s+version ${SCHEMA_VERSION} \\(current\\)`),
      );
      noPassword(migrated.stdout, migrated.stderr, again.stdout, after.stdout, after.stderr);
    });
  },
);

cliTest(
  "config validate and run --dry-run refuse an unreachable URL: one line, key, layer, host:port, exit 2",
  async (server) => {
    await withTempDir(async (dir) => {
      const port = closedPort();
      const env = await project(
        dir,
        `{ backend: postgres, database_url: "postgres://bern:${POSTGRES_PASSWORD}@127.0.0.1:${port}/x" }`,
      );
      await Deno.mkdir(join(dir, "plans"));
      await Deno.writeTextFile(
        join(dir, "plans", "p.yaml"),
        "steps:\n  - id: a\n    title: A\n    role: dev\n",
      );
      const expected = new RegExp(
        `^error\\[storage\\.unreachable\\]: storage\\.database_url \\(set by bernstein\\.yaml\\): cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}: [^\\n]+\\n$`,
      );
      const validate = await runBernstein(["config", "validate"], { cwd: dir, env });
      assert.equal(validate.code, 2, validate.stderr);
      assert.match(validate.stderr, expected);
      assert.equal(validate.stdout, "");
      const dry = await runBernstein(["run", "--dry-run", "plans/p.yaml"], { cwd: dir, env });
      assert.equal(dry.code, 2, dry.stderr);
      assert.match(dry.stderr, expected);
      const json = await runBernstein(["config", "validate", "--json"], { cwd: dir, env });
      assert.equal(json.code, 2);
      const doc = JSON.parse(json.stdout) as {
        ok: boolean;
        problems: { code: string; location: string | null }[];
      };
      assert.equal(doc.ok, false);
      assert.deepEqual(doc.problems.map((p) => [p.code, p.location]), [[
        "storage.unreachable",
        null,
      ]]);
      noPassword(validate.stderr, dry.stdout, dry.stderr, json.stdout);
      // Nothing started: no task store, no audit log.
      assert.equal(
        await Deno.stat(join(dir, ".sdd", "audit")).then(() => true, () => false),
        false,
      );

      // The same URL from the environment names that layer; a reachable one passes.
      const fromEnv = await runBernstein(["config", "validate"], {
        cwd: dir,
        env: {
          ...env,
          BERNSTEIN_DATABASE_URL: `postgres://bern:${POSTGRES_PASSWORD}@127.0.0.1:${port}/y`,
        },
      });
      assert.match(fromEnv.stderr, /storage\.database_url \(set by env:BERNSTEIN_DATABASE_URL\)/);
      const ok = await runBernstein(["config", "validate"], {
        cwd: dir,
        env: { ...env, BERNSTEIN_DATABASE_URL: server.url },
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /^configuration OK/);
      noPassword(fromEnv.stderr, ok.stdout, ok.stderr);
    });
  },
);

cliTest(
  "a missing, malformed or forbidden URL is refused naming the key and layer, never echoing it",
  async () => {
    await withTempDir(async (dir) => {
      const env = await project(dir, "{ backend: redis }");
      const none = await runBernstein(["config", "validate"], {
        cwd: dir,
        env: { ...env, BERNSTEIN_DATABASE_URL: `postgres://u:${POSTGRES_PASSWORD}@127.0.0.1:1/x` },
      });
      assert.equal(none.code, 2);
      assert.match(
        none.stderr,
        /^error\[storage\.url_missing\]: storage\.backend is 'redis' \(set by bernstein\.yaml\) but storage\.redis_url is not set/,
      );
      const bad = await runBernstein(["config", "validate"], {
        cwd: dir,
        env: {
          ...env,
          BERNSTEIN_DATABASE_URL: `mysql://u:${POSTGRES_PASSWORD}@h/x`,
          BERNSTEIN_REDIS_URL: "redis://127.0.0.1:1",
        },
      });
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        /^error\[storage\.url_invalid\]: storage\.database_url \(set by env:BERNSTEIN_DATABASE_URL\): scheme 'mysql:' is not postgres: or postgresql:/,
      );
      noPassword(none.stderr, bad.stderr);
    });
  },
);

cliTest("config get/list/set show storage URLs without their password", async (server) => {
  await withTempDir(async (dir) => {
    const env = await project(dir, `{ backend: postgres, database_url: "${server.url}" }`);
    const get = await runBernstein(["config", "get", "storage.database_url"], { cwd: dir, env });
    assert.equal(get.code, 0, get.stderr);
    // The human output names the layer that set the value (issue 12).
    assert.equal(
      get.stdout.trim(),
      `${server.url.replace(POSTGRES_PASSWORD, "***")}  (bernstein.yaml)`,
    );
    const tree = await runBernstein(["config", "get", "storage", "--json"], { cwd: dir, env });
    assert.match(tree.stdout, /bern:\*\*\*@127\.0\.0\.1/);
    const list = await runBernstein(["config", "list", "--json"], { cwd: dir, env });
    assert.match(list.stdout, /bern:\*\*\*@127\.0\.0\.1/);
    const set = await runBernstein(
      ["config", "set", "storage.redis_url", `redis://:${POSTGRES_PASSWORD}@127.0.0.1:6379`],
      { cwd: dir, env },
    );
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /storage\.redis_url = redis:\/\/:\*\*\*@127\.0\.0\.1:6379 written to/);
    noPassword(get.stdout, tree.stdout, list.stdout, set.stdout, set.stderr);
  });
});

function freshDb(): string {
  return `db_${
    Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0"))
      .join("")
  }`;
}

async function createDatabase(server: TestServer, name: string): Promise<void> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end();
  }
}
