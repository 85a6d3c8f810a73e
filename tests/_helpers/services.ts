// Throw-away PostgreSQL and Redis servers for tests: each in its own temp dir on a free
// loopback port, ready when the server says so (pg_isready / PING — polled, never a fixed
// sleep), stopped and removed by `stop()` and, as a last resort, when the test module unloads.
// Where a server binary is missing, `POSTGRES_MISSING` / `REDIS_MISSING` say why, and tests
// register themselves ignored with that reason in their name.
import { join } from "node:path";

function which(name: string, extraDirs: string[] = []): string | undefined {
  for (const dir of [...extraDirs, ...(Deno.env.get("PATH") ?? "").split(":")]) {
    if (dir === "") continue;
    try {
      if (Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The newest installed PostgreSQL server's bin folder (Debian keeps it off the PATH). */
function postgresBinDir(): string | undefined {
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")]
      .map((e) => e.name).filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const dir = `/usr/lib/postgresql/${v}/bin`;
      if (which("initdb", [dir]) === dir + "/initdb") return dir;
    }
  } catch {
    // No Debian layout.
  }
  const initdb = which("initdb");
  return initdb === undefined ? undefined : initdb.slice(0, initdb.lastIndexOf("/"));
}

const PG_BIN = postgresBinDir();
const IS_ROOT = Deno.uid() === 0;
const RUNUSER = which("runuser", ["/usr/sbin", "/sbin"]);

function postgresUserIds(): { uid: number; gid: number } | undefined {
  try {
    for (const line of Deno.readTextFileSync("/etc/passwd").split("\n")) {
      const f = line.split(":");
      if (f[0] === "postgres") return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // No passwd file.
  }
  return undefined;
}

const PG_USER = IS_ROOT ? postgresUserIds() : undefined;

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export const POSTGRES_MISSING: string | undefined = PG_BIN === undefined
  ? "initdb/pg_ctl not installed (apt-get install postgresql)"
  : IS_ROOT && (PG_USER === undefined || RUNUSER === undefined)
  ? "running as root without a 'postgres' user and runuser (initdb refuses root)"
  : undefined;

const REDIS_BIN = which("redis-server", ["/usr/bin", "/usr/local/bin"]);

/** Why Redis tests cannot run here, or undefined when they can. */
export const REDIS_MISSING: string | undefined = REDIS_BIN === undefined
  ? "redis-server not installed (apt-get install redis-server)"
  : undefined;

/** The password of the test servers' `bern` user (tests check it never leaks). */
export const POSTGRES_PASSWORD = "pw-Secr3t-9d1c";

/** A running throw-away server. */
export interface TestServer {
  /** Loopback port. */
  port: number;
  /** Connection URL (PostgreSQL: database `postgres`, user `bern`, {@linkcode POSTGRES_PASSWORD}). */
  url: string;
  /** Stops the server and removes its folder (idempotent). */
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function asServerUser(argv: string[]): string[] {
  return IS_ROOT ? [RUNUSER as string, "-u", "postgres", "--", ...argv] : argv;
}

async function run(argv: string[], what: string): Promise<string> {
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${what} failed (exit ${out.code}): ${text.trim()}`);
  return text;
}

/** Polls `ready` until it resolves true; each poll waits for the previous one, no fixed sleep. */
async function waitUntil(ready: () => Promise<boolean>, what: string, attempts = 600) {
  for (let i = 0; i < attempts; i++) {
    if (await ready()) return;
    // Yield to the server between polls; the poll itself (a process or a connect) paces it.
    await new Promise((resolve) => setTimeout(resolve, Math.min(10 * (i + 1), 200)));
  }
  throw new Error(`${what} did not become ready`);
}

const running = new Set<() => void>();
globalThis.addEventListener("unload", () => {
  for (const stopNow of [...running]) stopNow();
});

/**
 * Starts PostgreSQL in a fresh temp dir on a free loopback port: `initdb` (trust auth, user
 * `bern`), `pg_ctl start` as the `postgres` user when running as root, then waits for
 * `pg_isready`. A port taken between the probe and the bind is retried on another port.
 */
export async function startPostgres(): Promise<TestServer> {
  if (POSTGRES_MISSING !== undefined) throw new Error(POSTGRES_MISSING);
  const bin = PG_BIN as string;
  const dir = await Deno.makeTempDir({ prefix: "bernstein-pg-" });
  if (PG_USER !== undefined) await Deno.chown(dir, PG_USER.uid, PG_USER.gid);
  const data = join(dir, "data");
  // Password authentication over TCP (the URL carries `pw`), so tests can check that a wrong
  // password is refused and that the right one never leaks.
  const pwfile = join(dir, "pwfile");
  await Deno.writeTextFile(pwfile, `${POSTGRES_PASSWORD}\n`);
  if (PG_USER !== undefined) await Deno.chown(pwfile, PG_USER.uid, PG_USER.gid);
  try {
    await run(
      asServerUser([
        `${bin}/initdb`,
        "-D",
        data,
        "-U",
        "bern",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        `--pwfile=${pwfile}`,
        "-E",
        "UTF8",
        "--no-sync",
      ]),
      "initdb",
    );
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off ` +
      `-c max_connections=200`;
    try {
      await run(
        asServerUser([
          `${bin}/pg_ctl`,
          "-D",
          data,
          "-o",
          options,
          "-l",
          join(dir, "server.log"),
          "-w",
          "-t",
          "300",
          "start",
        ]),
        "pg_ctl start",
      );
    } catch (error) {
      if (attempt < 3) continue;
      const log = await Deno.readTextFile(join(dir, "server.log")).catch(() => "");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw new Error(`${(error as Error).message}\n${log.slice(-2000)}`);
    }
    const stopArgv = asServerUser([`${bin}/pg_ctl`, "-D", data, "-m", "immediate", "-w", "stop"]);
    let stopped = false;
    const stopNow = () => {
      if (stopped) return;
      stopped = true;
      running.delete(stopNow);
      new Deno.Command(stopArgv[0], { args: stopArgv.slice(1), stdout: "null", stderr: "null" })
        .outputSync();
      Deno.removeSync(dir, { recursive: true });
    };
    running.add(stopNow);
    await waitUntil(async () => {
      const r = await new Deno.Command(`${bin}/pg_isready`, {
        args: ["-h", "127.0.0.1", "-p", String(port), "-U", "bern", "-d", "postgres"],
        stdout: "null",
        stderr: "null",
      }).output();
      return r.success;
    }, `PostgreSQL on 127.0.0.1:${port}`);
    return {
      port,
      url: `postgres://bern:${POSTGRES_PASSWORD}@127.0.0.1:${port}/postgres?sslmode=disable`,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        running.delete(stopNow);
        await run(stopArgv, "pg_ctl stop").catch(() => {});
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }
}

async function redisPing(port: number): Promise<boolean> {
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode("PING\r\n"));
    const buf = new Uint8Array(64);
    const n = await conn.read(buf);
    return n !== null && new TextDecoder().decode(buf.subarray(0, n)).startsWith("+PONG");
  } catch {
    return false;
  } finally {
    conn?.close();
  }
}

/**
 * Starts `redis-server` in a fresh temp dir on a free loopback port (no persistence), waits
 * for PING, and stops it with `stop()` (SIGTERM via its pid file).
 */
export async function startRedis(): Promise<TestServer> {
  if (REDIS_MISSING !== undefined) throw new Error(REDIS_MISSING);
  const dir = await Deno.makeTempDir({ prefix: "bernstein-redis-" });
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    const child = new Deno.Command(REDIS_BIN as string, {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
      ],
      stdout: "null",
      stderr: "null",
      stdin: "null",
    }).spawn();
    let exited = false;
    const status = child.status.then((s) => {
      exited = true;
      return s;
    });
    try {
      await waitUntil(async () => {
        if (exited) throw new Error(`redis-server exited before it answered (port ${port})`);
        return await redisPing(port);
      }, `Redis on 127.0.0.1:${port}`);
    } catch (error) {
      if (!exited) child.kill("SIGKILL");
      await status;
      if (attempt < 3) continue;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw error;
    }
    let stopped = false;
    const stopNow = () => {
      if (stopped) return;
      stopped = true;
      running.delete(stopNow);
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      Deno.removeSync(dir, { recursive: true });
    };
    running.add(stopNow);
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        running.delete(stopNow);
        if (!exited) child.kill("SIGTERM");
        await status;
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }
}
