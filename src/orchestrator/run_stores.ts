/**
 * The durable pieces a run opens and must close: the audit chain (and its key), the task
 * store and holds (whose changes are recorded in that chain), agent tokens, the task server,
 * the run's work ledger and the lineage store.
 */
import { dirname, join } from "node:path";
import { BernsteinError } from "../errors/mod.ts";
import { isWithin } from "../config/mod.ts";
import { type AuditKey, AuditLog, ensureAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import type { Config } from "../config/mod.ts";
import {
  type Clock,
  type EnvReader,
  type Random,
  runtimeDir,
  sddFolder,
  type SecretRedactor,
  writeAll,
} from "../io/mod.ts";
import { LedgerWriter } from "../ledger/mod.ts";
import {
  type LineageStore,
  openLineageStore,
  resolveOperatorHmacKey,
} from "../lineage/store/mod.ts";
import type { DashboardSource } from "../report/mod.ts";
import {
  operatorTokenPath,
  type PolicyGateway,
  startTaskServer,
  type TaskServer,
  TokenRegistry,
} from "../server/mod.ts";
import { openTaskStore } from "../storage/mod.ts";
import {
  type HoldStore,
  openHoldStore,
  type TaskEvent,
  type TaskEventSink,
  type TaskStore,
} from "../tasks/mod.ts";

/** The run's open stores. */
export interface RunStores {
  /** Audit key (attachment resolvers authenticate the chain with it). */
  auditKey: AuditKey;
  /** Audit chain. */
  audit: AuditLog;
  /** Task store. */
  store: TaskStore;
  /** Orchestrator holds. */
  holds: HoldStore;
  /** Agent tokens. */
  tokens: TokenRegistry;
  /** Task server. */
  server: TaskServer;
  /** Work ledger of the run. */
  ledger: LedgerWriter;
  /** Lineage store. */
  lineage: LineageStore;
  /** Files no agent may ever see: the audit key and the operator token. */
  secretFiles: string[];
  /** Stops the server, closes the store and the audit chain (errors ignored). */
  close(): Promise<void>;
}

/** What the stores are opened from. */
export interface OpenRunStoresOptions {
  /** `.sdd/` folder. */
  sdd: string;
  /** Run id. */
  runId: string;
  /** Effective configuration. */
  config: Config;
  /** Layer that set each key (storage errors name where a URL came from). */
  configSources?: ReadonlyMap<string, string>;
  /** This host's name (a shared store records which orchestrator holds its namespace). */
  host: string;
  /** Environment (audit key, operator key). */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** Randomness (keys, tokens, ids). */
  random: Random;
  /** Lineage warnings. */
  warn: (message: string) => void;
  /** The live dashboard the task server serves at `/`. */
  dashboard?: DashboardSource;
  /** The run's tool-call policy, answered by the task server (`/policy/decide`, `/approvals`). */
  policy?: PolicyGateway;
  /** The run's redactor (task server bodies, ledger rows). */
  redactor?: SecretRedactor;
}

/** `workers.listen` as an address to listen on (brackets of an IPv6 address dropped). */
export function workersListen(
  config: Pick<Config, "workers">,
): { hostname: string; port: number } | undefined {
  const listen = config.workers?.listen;
  if (listen === undefined) return undefined;
  const colon = listen.lastIndexOf(":");
  return {
    hostname: listen.slice(0, colon).replace(/^\[|\]$/g, ""),
    port: Number(listen.slice(colon + 1)),
  };
}

/** Task store and hold changes become audit events. */
export function auditSink(audit: AuditLog): TaskEventSink {
  return {
    append: async (e: TaskEvent) => {
      await audit.append({
        actor: e.actor,
        event_type: e.type,
        resource_type: e.resource_type,
        resource_id: e.resource_id,
        details: {
          reason: e.reason,
          from: e.from,
          to: e.to,
          version: e.version,
          at: e.at,
          ...e.details,
        } as JsonObject,
      });
    },
  };
}

/** Refuses a key file inside the project: every agent worktree lies inside it. */
export async function refuseKeyInProject(
  keyPath: string,
  sdd: string,
  what: string,
): Promise<void> {
  const root = await Deno.realPath(dirname(sdd));
  const real = await Deno.realPath(dirname(keyPath)).then(
    (dir) => join(dir, keyPath.slice(dirname(keyPath).length + 1)),
    () => keyPath,
  );
  if (isWithin(root, real) || isWithin(dirname(sdd), keyPath)) {
    throw new BernsteinError(
      "run.key_in_project",
      `${what} ${keyPath} is inside the project ${root}: any agent's worktree can reach it`,
      {
        location: what === "the audit key" ? "BERNSTEIN_AUDIT_KEY_PATH" : undefined,
        hint: "keep it outside the project (default ~/.local/state/bernstein/audit.key)",
      },
    );
  }
}

/** The audit chain of a project (its key created on first use, never inside the project). */
export async function openAudit(
  sdd: string,
  env: EnvReader,
  clock: Clock,
  random: Random,
  redactor?: SecretRedactor,
): Promise<{ audit: AuditLog; auditKey: AuditKey }> {
  const keyLocation = resolveAuditKeyPath(env);
  await refuseKeyInProject(keyLocation.path, sdd, "the audit key");
  const auditKey = await ensureAuditKey(keyLocation.path, random);
  // Beside the operator token, outside the project: a full or read-only .sdd cannot hold it.
  const root = await Deno.realPath(dirname(sdd));
  const spillPath = join(dirname(operatorTokenPath(auditKey.path, root)), "audit-spill.jsonl");
  await Deno.mkdir(dirname(spillPath), { recursive: true, mode: 0o700 });
  const audit = new AuditLog(sddFolder(sdd, "audit"), auditKey, {
    clock,
    spillPath,
    ...(redactor ? { redactor } : {}),
  });
  // Events a storage failure kept out of the chain last time go in first, marked `spilled`.
  await audit.replaySpill();
  return { auditKey, audit };
}

/** Opens the stores of a run behind an already open audit chain. */
export async function openRunStores(
  opened: { audit: AuditLog; auditKey: AuditKey },
  options: OpenRunStoresOptions,
): Promise<RunStores> {
  const { sdd, config, clock, random } = options;
  const { audit } = opened;
  const runtime = runtimeDir(sdd);
  const sink = auditSink(audit);
  // The embedded log, or a shared store scoped to this run and held by this orchestrator
  // (a second orchestrator on the same namespace is refused, naming this one).
  const store = await openTaskStore({
    config,
    sources: options.configSources,
    runtimeDir: runtime,
    runId: options.runId,
    clock,
    random,
    sink,
    owner: { host: options.host, pid: Deno.pid },
  });
  const holds = await openHoldStore(join(runtime, "holds.json"), { clock, random, sink });
  const root = await Deno.realPath(dirname(sdd));
  const tokenPath = operatorTokenPath(opened.auditKey.path, root);
  await refuseKeyInProject(tokenPath, sdd, "the operator token");
  const tokens = await TokenRegistry.open(runtime, { random, operatorTokenPath: tokenPath });
  const server = await startTaskServer({
    store,
    holds,
    tokens,
    runtimeDir: runtime,
    config,
    clock,
    dashboard: options.dashboard && { source: options.dashboard, random },
    listen: workersListen(config),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  const ledger = await LedgerWriter.open(sdd, options.runId, {
    clock,
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  const lineage = openLineageStore({
    sdd,
    operatorKey: () => resolveOperatorHmacKey({ env: options.env, createWith: random }),
    strict: config.lineage.strict,
    enabled: config.lineage.enabled,
    clock,
    random,
    warn: (w) => options.warn(w.message),
  });
  return {
    ...opened,
    store,
    holds,
    tokens,
    server,
    ledger,
    lineage,
    secretFiles: [opened.auditKey.path, tokens.operatorTokenPath],
    async close() {
      await server.close().catch(() => {});
      await store.close().catch(() => {});
      await audit.close().catch(() => {});
    },
  };
}

/** Bytes the storage probe writes: more than a tmpfs page, so a full disk refuses it. */
const STORAGE_PROBE_BYTES = 64 * 1024;

/**
 * Throws the storage failure (ENOSPC, EROFS, EDQUOT) when `.sdd/runtime/` cannot take a small
 * durable write now; other errors pass through, a working disk costs one 64 KiB write + fsync.
 */
export async function probeStorage(sdd: string): Promise<void> {
  const path = join(runtimeDir(sdd), ".storage-probe");
  const file = await Deno.open(path, { write: true, create: true, truncate: true, mode: 0o600 });
  try {
    await writeAll(file, new Uint8Array(STORAGE_PROBE_BYTES));
    await file.sync();
  } finally {
    file.close();
    await Deno.remove(path).catch(() => {});
  }
}
