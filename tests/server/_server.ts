// Starts a real task server on 127.0.0.1 for tests, with a fresh runtime folder.
import { join } from "node:path";
import { DEFAULT_TUNING, type Tuning } from "../../src/config/mod.ts";
import { FakeClock, type SecretRedactor, SeededRandom } from "../../src/io/mod.ts";
import type { DashboardSource } from "../../src/report/mod.ts";
import {
  operatorTokenPath,
  type PolicyGateway,
  startTaskServer,
  type TaskServer,
  TokenRegistry,
} from "../../src/server/mod.ts";
import {
  createMemoryTaskStore,
  type FileHoldStore,
  MemoryEventSink,
  openHoldStore,
  type TaskStore,
} from "../../src/tasks/mod.ts";

/** A running test server and everything around it. */
export interface TestServer {
  /** The server. */
  server: TaskServer;
  /** Its store. */
  store: TaskStore;
  /** Its holds. */
  holds: FileHoldStore;
  /** Its tokens. */
  tokens: TokenRegistry;
  /** The operator token. */
  operator: string;
  /**
   * Environment under which `bernstein task …` finds that operator token (beside the audit
   * key, outside the project): `BERNSTEIN_AUDIT_KEY_PATH` in a folder next to the root.
   */
  operatorEnv: Record<string, string>;
  /** Store and hold events. */
  sink: MemoryEventSink;
  /** `<tmp>/.sdd/runtime`. */
  runtimeDir: string;
  /** The project root (temp dir). */
  root: string;
  /** The clock used by store and server. */
  clock: FakeClock;
  /** fetch against the server with an optional bearer token. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; raw?: BodyInit; headers?: Record<string, string> },
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers; text: string }>;
  /** Stops everything and removes the folder. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startTestServer}. */
export interface TestServerOptions {
  /** `network.allowed_ips`. */
  allowedIps?: string[];
  /** Overrides of `tuning.server`. */
  server?: Partial<Tuning["server"]>;
  /** Use this store instead of a fresh memory store. */
  store?: TaskStore;
  /** Use this folder as project root (not removed by stop). */
  root?: string;
  /** Serve the dashboard of this source at `/`. */
  dashboard?: DashboardSource;
  /** The run's tool-call policy (`/policy/decide`, `/approvals`). */
  policy?: PolicyGateway;
  /** The run's redactor (request bodies). */
  redactor?: SecretRedactor;
}

/**
 * Starts a server with a memory store, operator token and holds under a temp folder. A server
 * that does not start (tests of refused settings) leaves no folder behind.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const root = options.root ??
    await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-srv-" }));
  try {
    return await startIn(root, options);
  } catch (error) {
    if (options.root === undefined) await Deno.remove(root, { recursive: true }).catch(() => {});
    await Deno.remove(`${root}.state`, { recursive: true }).catch(() => {});
    throw error;
  }
}

async function startIn(root: string, options: TestServerOptions): Promise<TestServer> {
  const runtimeDir = join(root, ".sdd", "runtime");
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const sink = new MemoryEventSink();
  const store = options.store ??
    createMemoryTaskStore({ clock, random: new SeededRandom(7), sink });
  const holds = await openHoldStore(join(runtimeDir, "holds.json"), {
    clock,
    random: new SeededRandom(8),
    sink,
  });
  const stateDir = `${root}.state`;
  const operatorEnv = { BERNSTEIN_AUDIT_KEY_PATH: join(stateDir, "audit.key") };
  const tokens = await TokenRegistry.open(runtimeDir, {
    random: new SeededRandom(9),
    operatorTokenPath: operatorTokenPath(operatorEnv.BERNSTEIN_AUDIT_KEY_PATH, root),
  });
  const server = await startTaskServer({
    store,
    holds,
    tokens,
    runtimeDir,
    clock,
    dashboard: options.dashboard && { source: options.dashboard, random: new SeededRandom(10) },
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.redactor ? { redactor: options.redactor } : {}),
    config: {
      network: { allowed_ips: options.allowedIps ?? ["127.0.0.1", "::1"] },
      tuning: { ...DEFAULT_TUNING, server: { ...DEFAULT_TUNING.server, ...options.server } },
    },
  });
  const operator = (await Deno.readTextFile(tokens.operatorTokenPath)).trim();
  return {
    server,
    store,
    holds,
    tokens,
    operator,
    operatorEnv,
    sink,
    runtimeDir,
    root,
    clock,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
      const res = await fetch(server.url + path, {
        method,
        headers,
        body: o.raw ??
          (o.body === undefined || method === "GET" ? undefined : JSON.stringify(o.body)),
      });
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text);
      } catch {
        // /metrics answers text.
      }
      return { status: res.status, json, headers: res.headers, text };
    },
    async stop() {
      await server.close();
      await store.close();
      if (options.root === undefined) await Deno.remove(root, { recursive: true });
      await Deno.remove(stateDir, { recursive: true }).catch(() => {});
    },
  };
}

/** `{error:{code}}` of an answer. */
export function errorCode(json: Record<string, unknown>): string | undefined {
  return (json.error as { code?: string } | undefined)?.code;
}

/** `{error:{field}}` of an answer. */
export function errorField(json: Record<string, unknown>): string | undefined {
  return (json.error as { field?: string } | undefined)?.field;
}
