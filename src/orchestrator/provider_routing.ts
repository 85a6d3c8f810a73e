/**
 * Provider availability at run time (docs/PROVIDERS.md): before a task of a role with a
 * `provider_availability` chain is dispatched, each element is health-probed (cached for
 * `probe_ttl_minutes`; presumed healthy with `probes_enabled: false`) and the first healthy
 * element not ruled out for this task is chosen. An attempt that failed on a provider error
 * (rate limit, 5xx, unreachable, auth) marks its element unhealthy for the TTL and rules it
 * out for the task, so the retry runs on the next element. `doctor --failover-drill` uses the
 * same probes.
 */
import { checkAvailability, type PathLookup, type ScriptedRuntime } from "../adapters/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Clock, EnvReader } from "../io/mod.ts";
import {
  type ChainElement,
  chainFor,
  classifyFailure,
  decideRoute,
  fetchHttp,
  type HttpSend,
  probeEndpoint,
  type ProbeResult,
  type RouteDecision,
  statusOfProviderError,
} from "../providers/mod.ts";
import type { RunFact } from "./recorder.ts";

/** What probes need. */
export interface ProbeDeps {
  /** Environment (endpoint keys). */
  env: EnvReader;
  /** Where adapter binaries are found. */
  lookup: PathLookup;
  /** HTTP (default fetch). */
  http?: HttpSend;
  /** Scripted agent locator (the scripted adapter's "binary"). */
  scripted?: () => Promise<ScriptedRuntime>;
}

/** Default cache lifetime of a probe, as the design's example sets it. */
const DEFAULT_TTL_MINUTES = 5;

/** The element's identity in the probe cache. */
function elementKey(e: ChainElement): string {
  return `${e.adapter}\0${e.model ?? ""}\0${e.endpoint ?? ""}`;
}

/**
 * Probes one element: with an endpoint, one GET of its model list or record (the profile's
 * key, `tuning.providers.probe_timeout_s`); without one, whether the adapter's binary resolves
 * (a cloud provider is never sent a billable request to find out).
 */
export async function probeElement(
  e: ChainElement,
  config: Config,
  deps: ProbeDeps,
): Promise<ProbeResult> {
  if (e.endpoint !== undefined) {
    const profile = config.local_endpoints?.[e.endpoint];
    if (profile === undefined) {
      return {
        status: "bad_answer",
        healthy: false,
        detail: `no local_endpoints.${e.endpoint}`,
        kind: "http",
        ms: 0,
      };
    }
    let key = "bernstein-local";
    if (profile.api_key_env !== undefined) {
      const value = deps.env.get(profile.api_key_env);
      if (value === undefined || value === "") {
        return {
          status: "auth",
          healthy: false,
          detail: `$${profile.api_key_env} is not set`,
          kind: "http",
          ms: 0,
        };
      }
      key = value;
    }
    return await probeEndpoint(deps.http ?? fetchHttp, {
      api: profile.api ?? "openai-chat",
      base_url: profile.base_url,
      model: e.model ?? profile.model ?? "",
      key,
      timeoutMs: config.tuning.providers.probe_timeout_s * 1000,
    });
  }
  const found = await checkAvailability(e.adapter, {
    lookup: deps.lookup,
    settings: config.adapters,
    scripted: deps.scripted,
  });
  return found.available
    ? {
      status: "healthy",
      healthy: true,
      detail: `${e.adapter}: ${found.path}`,
      kind: "binary",
      ms: 0,
    }
    : {
      status: "missing_binary",
      healthy: false,
      detail: found.reason ?? "not found",
      kind: "binary",
      ms: 0,
    };
}

/** Probe results with their time, and each task's ruled-out positions. */
export class ProviderRouter {
  readonly #config: () => Config;
  readonly #deps: ProbeDeps;
  readonly #clock: Clock;
  readonly #cache = new Map<string, { result: ProbeResult; atMs: number }>();
  readonly #excluded = new Map<string, number[]>();
  readonly #current = new Map<string, { position: number; element: ChainElement }>();

  constructor(config: () => Config, deps: ProbeDeps, clock: Clock) {
    this.#config = config;
    this.#deps = deps;
    this.#clock = clock;
  }

  #ttlMs(): number {
    return (this.#config().provider_availability?.probe_ttl_minutes ?? DEFAULT_TTL_MINUTES) *
      60_000;
  }

  async #probe(e: ChainElement): Promise<ProbeResult> {
    const pa = this.#config().provider_availability;
    if (pa?.probes_enabled === false) {
      return {
        status: "disabled",
        healthy: true,
        detail: "probes_enabled: false (presumed healthy)",
        kind: "disabled",
        ms: 0,
      };
    }
    const key = elementKey(e);
    const cached = this.#cache.get(key);
    if (cached !== undefined && this.#clock.nowMs() - cached.atMs < this.#ttlMs()) {
      return cached.result;
    }
    const result = await probeElement(e, this.#config(), this.#deps);
    this.#cache.set(key, { result, atMs: this.#clock.nowMs() });
    return result;
  }

  /**
   * The routing decision for a task of `role`, or undefined when the role has no chain (the
   * ordinary role routing applies). Remembers the chosen element for {@linkcode failed}.
   */
  async route(taskId: string, role: string): Promise<RouteDecision | undefined> {
    const found = chainFor(this.#config().provider_availability?.roles, role);
    if (found === undefined) return undefined;
    const probes: ProbeResult[] = [];
    for (const e of found.chain) probes.push(await this.#probe(e));
    const decision = decideRoute(
      role,
      found.name,
      found.chain,
      probes,
      this.#excluded.get(taskId) ?? [],
    );
    if (decision.chosen === null) this.#current.delete(taskId);
    else {this.#current.set(taskId, {
        position: decision.chosen,
        element: found.chain[decision.chosen],
      });}
    return decision;
  }

  /**
   * A task's attempt failed on a provider error: its element is unhealthy for the TTL (an
   * observed result replaces the probe) and ruled out for this task. The element, or undefined
   * when the task was not routed through a chain.
   */
  failed(taskId: string, reason: string): { position: number; element: ChainElement } | undefined {
    const current = this.#current.get(taskId);
    if (current === undefined) return undefined;
    const status = statusOfProviderError(reason);
    this.#cache.set(elementKey(current.element), {
      result: {
        status: "failed_attempt",
        healthy: false,
        detail: `${status}: ${reason.slice(0, 200)}`,
        kind: "observed",
        ms: 0,
      },
      atMs: this.#clock.nowMs(),
    });
    const excluded = this.#excluded.get(taskId) ?? [];
    if (!excluded.includes(current.position)) excluded.push(current.position);
    this.#excluded.set(taskId, excluded);
    return current;
  }
}

/** A router for a run whose configuration declares chains (else undefined). */
export function routerFor(ctx: {
  config: Config;
  env: EnvReader;
  lookup: PathLookup;
  scripted?: () => Promise<ScriptedRuntime>;
  clock: Clock;
}): ProviderRouter | undefined {
  const roles = ctx.config.provider_availability?.roles;
  if (roles === undefined || Object.keys(roles).length === 0) return undefined;
  return new ProviderRouter(
    () => ctx.config,
    { env: ctx.env, lookup: ctx.lookup, scripted: ctx.scripted },
    ctx.clock,
  );
}

/**
 * A run subscriber: a task that failed on a provider error rules its element out, so its
 * retry goes to the next healthy element (recorded by that dispatch's `routing.receipt`).
 */
export function failoverListener(router: ProviderRouter): (fact: RunFact) => void {
  return (fact) => {
    if (fact.kind !== "task.failed") return;
    if (classifyFailure(fact.code, fact.detail) === "provider") {
      router.failed(fact.taskId, fact.detail);
    }
  };
}

/** One role of the drill. */
export interface DrillRole {
  /** Role. */
  role: string;
  /** Chain name. */
  chain_name: string;
  /** Floor. */
  floor: string;
  /** The chain. */
  chain: ChainElement[];
  /** Probe per position. */
  probes: ProbeResult[];
  /** Position chosen now. */
  chosen: number | null;
  /** Position chosen if the primary fails. */
  on_primary_failure: number | null;
  /** Decision hash of the real route. */
  hash: string;
  /** Decision hash with the primary failed. */
  failover_hash: string;
}

/**
 * `doctor --failover-drill`: probes every declared chain (probes always run here, even with
 * `probes_enabled: false`: a drill that presumes health proves nothing), decides each role's
 * route, and again with its primary failed. Not ok when a role has no healthy element.
 */
export async function runFailoverDrill(
  config: Config,
  deps: ProbeDeps,
): Promise<{ ok: boolean; roles: DrillRole[] }> {
  const roles: DrillRole[] = [];
  for (const [role, spec] of Object.entries(config.provider_availability?.roles ?? {})) {
    const probes: ProbeResult[] = [];
    for (const e of spec.chain) probes.push(await probeElement(e, config, deps));
    const now = decideRoute(role, role, spec.chain, probes, []);
    const failover = decideRoute(role, role, spec.chain, probes, [0]);
    roles.push({
      role,
      chain_name: role,
      floor: spec.conformance_floor,
      chain: spec.chain,
      probes,
      chosen: now.chosen,
      on_primary_failure: failover.chosen,
      hash: now.hash,
      failover_hash: failover.hash,
    });
  }
  return { ok: roles.every((r) => r.chosen !== null), roles };
}
