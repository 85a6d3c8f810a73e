/**
 * Provider failover decisions (pure): given a role's declared chain, its conformance floor, the
 * health probe of each element and the elements a failed attempt ruled out, which element runs
 * the task. The decision is a deterministic projection of those inputs with a `sha256:` hash,
 * so a recorded `routing.receipt` can be replayed byte for byte.
 */
import { canonicalBytes, type JsonValue } from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import type { ConformanceLevel } from "./grades.ts";
import type { ProbeResult } from "./probe_result.ts";

/** One declared chain element. */
export interface ChainElement {
  /** Adapter. */
  adapter: string;
  /** Model, when given. */
  model?: string;
  /** Declared conformance. */
  conformance: ConformanceLevel;
  /** Endpoint profile, when the element talks to one. */
  endpoint?: string;
}

/** Why an element was chosen (or none). */
export type RouteReason = "primary_healthy" | "failover" | "no_healthy_provider";

/** A routing decision. */
export interface RouteDecision {
  /** Role routed. */
  role: string;
  /** The chain's name in `provider_availability.roles` (the role, or `default`). */
  chain_name: string;
  /** The chain considered. */
  chain: ChainElement[];
  /** Probe result per position. */
  probes: ProbeResult[];
  /** Positions ruled out by failed attempts of this task. */
  excluded: number[];
  /** Chosen position, or null. */
  chosen: number | null;
  /** Why. */
  reason: RouteReason;
  /** `sha256:` over the canonical decision projection. */
  hash: string;
}

/** The decision's hashed projection (what two replays must agree on). */
function projection(d: Omit<RouteDecision, "hash">): JsonValue {
  return {
    role: d.role,
    chain_name: d.chain_name,
    chain: d.chain.map((e) => ({
      adapter: e.adapter,
      model: e.model ?? null,
      conformance: e.conformance,
      endpoint: e.endpoint ?? null,
    })),
    probes: d.probes.map((p) => ({ status: p.status, healthy: p.healthy })),
    excluded: d.excluded,
    chosen: d.chosen,
    reason: d.reason,
  };
}

/**
 * Picks the first healthy element not ruled out. Elements are all at or above the floor
 * (configuration validation refuses the others).
 *
 * @example
 * ```ts ignore
 * const d = decideRoute("backend", "default", chain, probes, []);
 * d.chosen; // 0 when the primary is healthy
 * ```
 */
export function decideRoute(
  role: string,
  chainName: string,
  chain: readonly ChainElement[],
  probes: readonly ProbeResult[],
  excluded: readonly number[],
): RouteDecision {
  let chosen: number | null = null;
  for (let i = 0; i < chain.length; i++) {
    if (!excluded.includes(i) && probes[i]?.healthy === true) {
      chosen = i;
      break;
    }
  }
  const reason: RouteReason = chosen === null
    ? "no_healthy_provider"
    : chosen === 0
    ? "primary_healthy"
    : "failover";
  const body = {
    role,
    chain_name: chainName,
    chain: [...chain],
    probes: [...probes],
    excluded: [...excluded].sort((a, b) => a - b),
    chosen,
    reason,
  };
  return { ...body, hash: `sha256:${sha256Hex(canonicalBytes(projection(body), "canon"))}` };
}

/** The chain of a role: its own, else `default`, else none (ordinary role routing). */
export function chainFor(
  roles: Readonly<Record<string, { chain: ChainElement[] }>> | undefined,
  role: string,
): { name: string; chain: ChainElement[] } | undefined {
  if (roles === undefined) return undefined;
  if (roles[role] !== undefined) return { name: role, chain: roles[role].chain };
  if (roles.default !== undefined) return { name: "default", chain: roles.default.chain };
  return undefined;
}
