// Connections in a run (docs/FLEET.md "Connections in a run"): a task whose plan step names
// connections gets, at each claim, every one's secret minted into its agent's environment —
// the document verified against the chain and this install, the read pinned on the run's
// spine, the resolution recorded with hashes only — and registered with the run's redactor
// before the agent starts, so no record the run writes carries it. Only tasks the plan's
// author wrote are granted connections: a task an agent created never is.
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import {
  type EnvReader,
  MIN_SECRET_LENGTH,
  type Random,
  sddFolder,
  type SecretRedactor,
} from "../io/mod.ts";
import { appendSpineEntry, lineagePaths } from "../lineage/store/mod.ts";
import { type ConnectionRequest, readConnectionRequests } from "../plan/mod.ts";
import { auditKeyIfAny, readFleetChain } from "./chain.ts";
import { ConnectionStore } from "./connections.ts";
import { FleetError } from "./errors.ts";
import { projectFleet } from "./projection.ts";

/** The step id prefix of a connection read on the run spine: `fleet-conn:<task>:<name>@<version>`. */
export const CONN_STEP_PREFIX = "fleet-conn:";

/** What a task carries that matters here. */
export interface ConnectionGrantee {
  /** Task id. */
  id: string;
  /** Set when an agent created it. */
  parent_task_id: string | null;
  /** `metadata.connections` is the plan step's `connections:`. */
  metadata: { [key: string]: unknown };
}

/** The connections a task asks for (`metadata.connections`); a malformed list is refused. */
export function connectionRequestsOf(task: ConnectionGrantee): ConnectionRequest[] {
  const raw = task.metadata.connections;
  if (raw === undefined) return [];
  const { requests, problems } = readConnectionRequests(raw);
  if (problems.length > 0) {
    const p = problems[0];
    throw new FleetError(
      "fleet.bad_reference",
      `task ${task.id} metadata.connections${
        p.index === undefined ? "" : `[${p.index}]`
      }: ${p.message}`,
    );
  }
  return requests;
}

/** What {@linkcode RunConnections} works with. */
export interface RunConnectionsOptions {
  /** The project's `.sdd/`. */
  sdd: string;
  /** The run. */
  runId: string;
  /** The audit key (chain reads, spine tags, reference digests). */
  auditKey: AuditKey;
  /** The run's audit sink (resolutions and refusals). */
  audit: AuditSink;
  /** Where `env:` references are read. */
  env: EnvReader;
  /** Resolution ids. */
  random: Random;
  /** The run's redactor: every minted value is registered before its agent starts. */
  redactor: SecretRedactor;
}

/** Mints the connections of a run's tasks at their claims. */
export class RunConnections {
  readonly #o: RunConnectionsOptions;
  readonly #store: ConnectionStore;

  constructor(options: RunConnectionsOptions) {
    this.#o = options;
    this.#store = new ConnectionStore({
      sdd: options.sdd,
      auditKey: options.auditKey,
      random: options.random,
    });
  }

  /**
   * The variables to add to this attempt's agent environment (empty when the task asks for
   * none). Each connection is resolved now — a rotation since the last attempt is picked up —
   * and a refusal (foreign or changed document, unreadable or short secret) fails the claim.
   */
  async mint(task: ConnectionGrantee, session: string): Promise<Record<string, string>> {
    const requests = connectionRequestsOf(task);
    if (requests.length === 0) return {};
    if (task.parent_task_id !== null) {
      throw new FleetError(
        "fleet.conn_not_granted",
        `task ${task.id} asks for connections but was created under ${task.parent_task_id}: only the plan's own steps are granted connections`,
      );
    }
    const env: Record<string, string> = {};
    for (const r of requests) {
      const minted = await this.#store.resolve(r.name, {
        taskId: task.id,
        runId: this.#o.runId,
        env: this.#o.env,
        audit: this.#o.audit,
        session,
        variable: r.env,
        minLength: MIN_SECRET_LENGTH,
        pin: (d) => this.#pin(task.id, r.name, d),
      });
      this.#o.redactor.add(minted.value, `connection ${r.name}`);
      env[r.env] = minted.value;
    }
    return env;
  }

  async #pin(
    taskId: string,
    name: string,
    d: { document_hash: string; version: number },
  ): Promise<string> {
    const entry = await appendSpineEntry(lineagePaths(this.#o.sdd), this.#o.runId, {
      artifact_path: `.sdd/fleet/connections/${name}/${d.version}.json`,
      content_hash: d.document_hash,
      actor: "orchestrator",
      step_id: `${CONN_STEP_PREFIX}${taskId}:${name}@${d.version}`,
      model: "",
      // No wall clock: the chain's fleet.conn_resolve record has the time.
      timestamp: 0,
    }, this.#o.auditKey.bytes);
    return entry.entry_hash;
  }
}

/**
 * Refuses a plan whose steps ask for a connection the chain never created, before anything
 * starts (`fleet.unknown_name`, exit 2). Secrets are not read here: each claim mints its own.
 */
export async function checkPlanConnections(
  sdd: string,
  drafts: readonly { title: string; metadata?: { [key: string]: unknown } }[],
  env: EnvReader,
): Promise<ConnectionRequest[]> {
  const wanted = new Map<string, string>();
  const all: ConnectionRequest[] = [];
  for (const d of drafts) {
    const requests = connectionRequestsOf({
      id: d.title,
      parent_task_id: null,
      metadata: d.metadata ?? {},
    });
    for (const r of requests) if (!wanted.has(r.name)) wanted.set(r.name, d.title);
    all.push(...requests);
  }
  if (wanted.size === 0) return all;
  // No audit key yet: no connection was ever created.
  const key = await auditKeyIfAny(env);
  const known = await knownConnections(sdd, key);
  for (const [name, step] of wanted) {
    if (!known.includes(name)) {
      throw new FleetError(
        "fleet.unknown_name",
        `step '${step}' asks for connection '${name}', which does not exist`,
        {
          hint: `'bernstein conn create ${name} --secret env:VAR --scope SCOPE' creates it${
            known.length ? `; known: ${known.join(", ")}` : ""
          }`,
        },
      );
    }
  }
  return all;
}

async function knownConnections(sdd: string, key: AuditKey | undefined): Promise<string[]> {
  if (key === undefined) return [];
  const chain = await readFleetChain(sddFolder(sdd, "audit"), key);
  return [...projectFleet(chain.events).connections.keys()].sort();
}
