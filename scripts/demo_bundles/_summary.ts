// The stable summary of a compliance pack: what stays the same when a scenario is run again
// (member kinds, the manifest's fixed fields and Article 12 figures, each entry's artefact,
// content hash and parent artefact versions), without what a real run draws at random
// (agent keys, session names, times, the entry hashes that sign over them).
import { unzipSync } from "fflate";
import { sha256Hex } from "../../src/crypto/mod.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Members of a pack, by name. */
export function packMembers(zip: Uint8Array): Map<string, Uint8Array> {
  return new Map(Object.entries(unzipSync(zip)));
}

/** A member name with its random parts (entry hex, agent dir, kid) replaced. */
export function memberKind(name: string): string {
  if (name.startsWith("signatures/")) return "signatures/<entry>.jws";
  if (name.startsWith("agent-cards/")) return "agent-cards/<agent>/<kid>.json";
  if (name.startsWith("attestations/")) return "attestations/<entry>/<hash>.json";
  return name;
}

/** A manifest value with times and days that a run reads from its clock replaced. */
function stable(value: Json, key = ""): Json {
  if (typeof value === "string") {
    if (TIME.test(value)) return "<time>";
    if (DAY.test(value)) return "<day>";
    if (/^sha256:[0-9a-f]{64}$/.test(value) && key !== "public_key_sha256") return "<hash>";
    if (key === "kids") return "<kid>";
    // Session names end with the attempt and the run's random tag.
    return value.replace(/-a(\d+)-[0-9a-f]{6}$/, "-a$1-<tag>");
  }
  if (Array.isArray(value)) return value.map((v) => stable(v, key));
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const k of Object.keys(value).sort()) {
      if (k === "input_hashes") {
        out[k] = [...new Set(Object.keys(value[k] as object).map(memberKind))].sort();
      } else if (k === "external_parents" && Array.isArray(value[k])) {
        out[k] = (value[k] as Json[]).length;
      } else out[k] = stable(value[k], k);
    }
    return out;
  }
  return value;
}

/**
 * Audit-log counts: the audit log also records what the run saw while agents worked (progress,
 * liveness notices), which a loaded machine can change; the cross-link counts per task stay.
 */
const TIMING_FIGURES = new Set(["audit_records_authenticated", "linked_audit_events"]);

/** Figures that depend on when the run happened (its clock), not on what it did. */
const CLOCK_FIGURES = new Set([
  "first_ts_ns",
  "last_ts_ns",
  "period_days",
  "period_covers_minimum",
  "retained_log_days",
]);

function withoutClockFigures(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutClockFigures);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = CLOCK_FIGURES.has(k)
        ? "<clock>"
        : TIMING_FIGURES.has(k)
        ? "<timing>"
        : withoutClockFigures(v);
    }
    return out;
  }
  return value;
}

/**
 * The pack's stable summary: member kinds with counts, the manifest (random and clock parts
 * replaced), and its entries as `artefact content_hash ← parent versions`, sorted.
 */
export function packSummary(zip: Uint8Array): Json {
  const members = packMembers(zip);
  const kinds = new Map<string, number>();
  for (const name of members.keys()) {
    kinds.set(memberKind(name), (kinds.get(memberKind(name)) ?? 0) + 1);
  }
  const text = (name: string) => new TextDecoder().decode(members.get(name) ?? new Uint8Array());
  const manifest = JSON.parse(text("pack-manifest.json")) as { [key: string]: Json };
  delete manifest.output_hash;
  const entries = text("lineage-log.jsonl").split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l) as { [key: string]: Json }
  );
  const byHash = new Map<string, { [key: string]: Json }>();
  for (const line of text("lineage-log.jsonl").split("\n").filter((l) => l !== "")) {
    const bytes = new TextEncoder().encode(line);
    byHash.set(`sha256:${sha256Hex(bytes)}`, JSON.parse(line));
  }
  const version = (hash: string) => {
    const e = byHash.get(hash);
    return e === undefined ? "outside the window" : `${e.artefact_path} ${e.content_hash}`;
  };
  const lines = entries.map((e) => {
    const parents = (e.parent_hashes as string[]).map(version);
    const kind = parents.length >= 2 ? "merge" : parents.length === 1 ? "edit" : "genesis";
    return `${e.artefact_path} ${e.content_hash} (${kind}${
      parents.length > 0 ? " of " + parents.join(" + ") : ""
    }) by ${agentKind(String(e.agent_id))}`;
  }).sort();
  return {
    members: Object.fromEntries([...kinds].sort(([a], [b]) => a.localeCompare(b))),
    manifest: withoutClockFigures(stable(manifest)),
    entries: lines,
  };
}

/** Agent ids name the task's session, which ends with the attempt and the run's random tag. */
function agentKind(id: string): string {
  return id.replace(/-a(\d+)-[0-9a-f]{6}$/, "-a$1-<tag>");
}
