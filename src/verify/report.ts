// How a gate result is shown: the one-word verdict, one line per issue, and a stable JSON shape
// shared by `bernstein lineage gate --json` and `bernstein-verify`.
import type { JsonObject } from "../canonical/mod.ts";
import type { GateResult } from "./types.ts";

/** `PASS`, or `FAIL (n issues)`. */
export function gateVerdict(result: GateResult): string {
  if (result.ok) return "PASS";
  const n = result.issues.length;
  return `FAIL (${n} issue${n === 1 ? "" : "s"})`;
}

/**
 * The result as JSON: `{ok, verdict, lines, entries, artefacts, cards, hmac_checked,
 * issues: [{kind, message, line, entry_hash, artefact, location}], foreign: [{entry_hash,
 * location, verdict, verified, trust_class, reason}], checkpoint: {file, checkpoints,
 * verified_signatures, matched, external, latest: {where, size, root, ts} | null,
 * not_checkpointed} | null}`; absent values are `null`.
 */
export function gateResultToJson(result: GateResult): JsonObject {
  return {
    ok: result.ok,
    verdict: gateVerdict(result),
    lines: result.lines,
    entries: result.entries,
    artefacts: result.artefacts,
    cards: result.cards,
    hmac_checked: result.hmac_checked,
    issues: result.issues.map((i) => ({
      kind: i.kind,
      message: i.message,
      line: i.line ?? null,
      entry_hash: i.entry_hash ?? null,
      artefact: i.artefact ?? null,
      location: i.location ?? null,
    })),
    foreign: result.foreign.map((f) => ({
      entry_hash: f.entry_hash,
      location: f.location,
      verdict: f.verdict,
      verified: f.verified,
      trust_class: f.trust_class,
      reason: f.reason,
    })),
    checkpoint: result.checkpoint === null ? null : {
      ...result.checkpoint,
      latest: result.checkpoint.latest === null ? null : { ...result.checkpoint.latest },
    },
  };
}
