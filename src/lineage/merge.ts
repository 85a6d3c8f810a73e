// Fork resolution: which head wins under a policy, and the merge entry that records it.
import { UsageError } from "../errors/mod.ts";
import { type LineageEntry, sealEntry } from "./entry.ts";
import { LineageConflictError } from "./errors.ts";

/** How a fork is resolved. */
export type MergePolicy =
  | { kind: "first-writer" }
  | { kind: "agent"; agentId: string }
  | { kind: "human" };

/** Parses `first-writer`, `agent:<id>` or `human`; anything else is a usage error. */
export function parseMergePolicy(text: string): MergePolicy {
  if (text === "first-writer") return { kind: "first-writer" };
  if (text === "human") return { kind: "human" };
  if (text.startsWith("agent:") && text.length > "agent:".length) {
    return { kind: "agent", agentId: text.slice("agent:".length) };
  }
  throw new UsageError(
    "lineage.bad_policy",
    `unknown merge policy ${JSON.stringify(text)}`,
    { hint: "use first-writer, agent:<id> or human" },
  );
}

/** A candidate head: an entry with its hash. */
export interface MergeCandidate {
  /** The entry hash. */
  hash: string;
  /** The entry. */
  entry: LineageEntry;
}

/**
 * Picks the winning head of a fork. `first-writer`: the earliest `ts_ns` (agent id, then entry
 * hash, break ties). `agent:<id>`: the latest head written by that agent (`<id>` or
 * `agent:<id>`). `human`: always refuses — an operator has to decide.
 */
export function chooseMergeWinner(
  policy: MergePolicy,
  candidates: readonly MergeCandidate[],
): MergeCandidate {
  if (candidates.length === 0) throw new LineageConflictError("no candidates to merge");
  const names = candidates.map((c) => c.hash).join(", ");
  if (policy.kind === "human") {
    throw new LineageConflictError(
      `policy 'human' never picks a winner automatically; candidates: ${names}`,
      {
        hint: "inspect them with 'bernstein lineage forks', then merge with --policy " +
          "first-writer or --policy agent:<id> naming the agent whose content should win",
      },
    );
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  if (policy.kind === "first-writer") {
    return [...candidates].sort((a, b) =>
      a.entry.ts_ns < b.entry.ts_ns
        ? -1
        : a.entry.ts_ns > b.entry.ts_ns
        ? 1
        : cmp(a.entry.agent_id, b.entry.agent_id) || cmp(a.hash, b.hash)
    )[0];
  }
  const wanted = [policy.agentId, `agent:${policy.agentId}`];
  const mine = candidates.filter((c) => wanted.includes(c.entry.agent_id));
  if (mine.length === 0) {
    throw new LineageConflictError(
      `no candidate head was written by agent ${JSON.stringify(policy.agentId)}; candidates: ${
        candidates.map((c) => `${c.hash} (${c.entry.agent_id})`).join(", ")
      }`,
    );
  }
  return [...mine].sort((a, b) =>
    a.entry.ts_ns > b.entry.ts_ns ? -1 : a.entry.ts_ns < b.entry.ts_ns ? 1 : cmp(a.hash, b.hash)
  )[0];
}

/** Everything a merge entry records. */
export interface MergeEntryOptions {
  /** The artefact whose fork is resolved. */
  artefactPath: string;
  /** Parents: every child of the fork(s) plus every other open head, in log order. */
  parents: readonly string[];
  /** The winning head; its content and kind become the merge's. */
  winner: LineageEntry;
  /** The steward identity signing the merge. */
  steward: { agentId: string; kid: string };
  /** Cross-link to the audit log. */
  toolCallId: string;
  /** Cross-link to the trace. */
  spanId: string;
  /** Timestamp. */
  tsNs: bigint;
}

/** Builds the (unsigned, HMAC-sealed) merge entry resolving a fork. */
export function buildMergeEntry(options: MergeEntryOptions, operatorKey: Uint8Array): LineageEntry {
  if (options.parents.length < 2) {
    throw new LineageConflictError("a merge entry needs at least two parents");
  }
  return sealEntry({
    artefact_path: options.artefactPath,
    artefact_kind: options.winner.artefact_kind,
    content_hash: options.winner.content_hash,
    parent_hashes: [...options.parents],
    agent_id: options.steward.agentId,
    agent_card_kid: options.steward.kid,
    tool_call_id: options.toolCallId,
    span_id: options.spanId,
    ts_ns: options.tsNs,
  }, operatorKey);
}
