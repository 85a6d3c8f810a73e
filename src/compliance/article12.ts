// The `article12` block of the pack manifest: facts per paragraph of Article 12 of
// Regulation (EU) 2024/1689 as published, plus the retention facts of Articles 19(1) and
// 26(6). The paragraphs' requirements are summarised, not quoted; each carries the figures
// that show how the pack's evidence meets it. Log-derived figures come from
// `article12LogFigures` so the verifier can recompute them.
import type { JsonObject } from "../canonical/mod.ts";
import { agentIsolationBlock, type AgentIsolationFacts } from "./agent_isolation.ts";
import { article12LogFigures, isoOfNs, type LogFacts } from "../pack_format/mod.ts";

/** The regulation the facts refer to. */
export const REGULATION = "Regulation (EU) 2024/1689 (Artificial Intelligence Act)";

/** Six months, the minimum retention of Art. 19(1) and 26(6), in days (rounded up). */
export const MIN_RETENTION_DAYS = 183;

/** What linking the window's `tool_call_id`s to the audit log found. */
export interface AuditCrossLinks {
  /** False when the audit log could not be read with its key (then only `reason` is set). */
  checked: boolean;
  /** Why it was not checked. */
  reason?: string;
  /** Distinct `tool_call_id`s in the window. */
  tool_call_ids: number;
  /** Of those, how many have at least one authenticated audit event. */
  linked_tool_call_ids: number;
  /** Authenticated audit events linked to a window `tool_call_id`. */
  linked_audit_events: number;
  /** Audit records whose HMAC chain verified. */
  audit_records_authenticated: number;
  /** Audit lines that did not authenticate (tampered, torn or foreign). */
  audit_records_rejected: number;
}

/** Everything {@linkcode buildArticle12} states. */
export interface Article12Input {
  /** Facts of the window's entries. */
  facts: LogFacts;
  /** `compliance.risk_paths` globs. */
  riskPaths: readonly string[];
  /** Window entries whose artefact matches a risk glob. */
  riskEntryCount: number;
  /** Those artefacts, sorted. */
  riskArtefacts: readonly string[];
  /** Forks of the window no merge resolves (the pack then fails verification). */
  unresolvedForkCount: number;
  /** `tool_call_id` → audit event links. */
  audit: AuditCrossLinks;
  /** Each agent's isolation from its `agent.spawned` events (absent: not stated). */
  agentIsolation?: AgentIsolationFacts;
  /** `compliance.remote_biometric_identification`. */
  remoteBiometricIdentification: boolean;
  /** `compliance.retention_days`. */
  retentionDays: number;
  /** Days the pack's period covers. */
  periodDays: number;
  /** `ts_ns` of the oldest entry the operator's log still holds (null: empty log). */
  retainedSinceNs: bigint | null;
  /** Last nanosecond of the period. */
  periodEndNs: bigint;
  /** Lines of the operator's log that are not valid entries (left out of the pack). */
  unreadableLogLines: number;
}

const NS_PER_DAY = 86_400_000_000_000n;

/**
 * The `article12` manifest block.
 *
 * @example
 * ```ts ignore
 * const block = buildArticle12({ facts, riskPaths: [], riskEntryCount: 0, … });
 * block["12(1)"]; // { requirement, evidence, entry_count, … }
 * ```
 */
export function buildArticle12(input: Article12Input): JsonObject {
  const figures = article12LogFigures(input.facts);
  const retainedDays = input.retainedSinceNs === null
    ? 0
    : Math.max(0, Number(input.periodEndNs / NS_PER_DAY - input.retainedSinceNs / NS_PER_DAY) + 1);
  const audit: JsonObject = input.audit.checked
    ? {
      checked: true,
      tool_call_ids: input.audit.tool_call_ids,
      linked_tool_call_ids: input.audit.linked_tool_call_ids,
      unlinked_tool_call_ids: input.audit.tool_call_ids - input.audit.linked_tool_call_ids,
      linked_audit_events: input.audit.linked_audit_events,
      audit_records_authenticated: input.audit.audit_records_authenticated,
      audit_records_rejected: input.audit.audit_records_rejected,
    }
    : {
      checked: false,
      reason: input.audit.reason ?? "not checked",
      tool_call_ids: input.audit.tool_call_ids,
    };
  return {
    regulation: REGULATION,
    "12(1)": {
      requirement:
        "automatic recording of events (logs) over the lifetime of the high-risk AI system",
      evidence:
        "lineage-log.jsonl: every artefact write recorded automatically when it happens, signed by the writing agent's key and hash-linked to its parents",
      ...figures["12(1)"],
      unreadable_log_lines: input.unreadableLogLines,
    },
    "12(2)(a)": {
      requirement:
        "recording of events relevant for identifying situations that may result in the system presenting a risk (Art. 79(1)) or in a substantial modification",
      evidence:
        "entries on artefacts matching compliance.risk_paths, merges of concurrent writes, and forks",
      risk_paths: [...input.riskPaths],
      risk_entry_count: input.riskEntryCount,
      risk_artefacts: [...input.riskArtefacts],
      ...figures["12(2)(a)"],
      unresolved_fork_count: input.unresolvedForkCount,
    },
    "12(2)(b)": {
      requirement:
        "recording of events relevant for facilitating the post-market monitoring of Art. 72",
      evidence:
        "each entry's tool_call_id links it to the HMAC-chained audit log (events of the same task or tool call)",
      audit_cross_links: audit,
    },
    "12(2)(c)": {
      requirement:
        "recording of events relevant for monitoring the operation of the system (Art. 26(5))",
      evidence:
        "every entry names the agent identity and key that signed it; reviewer identities are the signers of merge entries",
      ...figures["12(2)(c)"],
      ...(input.agentIsolation === undefined ? {} : {
        agent_isolation: agentIsolationBlock(
          input.facts.agents.map((a) => a.agent_id),
          input.agentIsolation,
        ),
      }),
    },
    "12(3)": input.remoteBiometricIdentification
      ? {
        applicable: true,
        requirement:
          "for remote biometric identification systems (Annex III point 1(a)): period of each use, reference database, matching input data, natural persons verifying results (Art. 14(5))",
        recorded: false,
        reason:
          "bernstein records agent work, not biometric identification sessions; the operator must supply these records separately",
      }
      : {
        applicable: false,
        reason:
          "not a remote biometric identification system (compliance.remote_biometric_identification is false)",
      },
    retention: {
      requirement:
        "providers (Art. 19(1)) and deployers (Art. 26(6)) keep the automatically generated logs for a period appropriate to the intended purpose, of at least six months, unless Union or national law provides otherwise",
      minimum_days: MIN_RETENTION_DAYS,
      configured_retention_days: input.retentionDays,
      configured_meets_minimum: input.retentionDays >= MIN_RETENTION_DAYS,
      period_days: input.periodDays,
      period_covers_minimum: input.periodDays >= MIN_RETENTION_DAYS,
      retained_log_first_at: input.retainedSinceNs === null ? null : isoOfNs(input.retainedSinceNs),
      retained_log_days: retainedDays,
      retained_log_covers_minimum: retainedDays >= MIN_RETENTION_DAYS,
    },
  };
}
