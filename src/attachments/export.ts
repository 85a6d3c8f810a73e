// `bernstein attachments export RUN --out DIR`: what each agent of a run was shown, for an
// auditor who re-derives it offline (`bernstein-verify attachments DIR`, FORMATS.md §7.1). The
// folder holds the run's `multimodal.attach` audit records as the authenticated scan returned
// them, the attested bytes from CAS (re-hashed on read), the lineage entries that carry the
// digests, and a manifest tying them together: each spawn's blocks in prompt order.
import { join } from "node:path";
import type { AuditKey } from "../audit/mod.ts";
import { canonicalize, type JsonObject, type JsonValue, jsonValueOf } from "../canonical/mod.ts";
import type { CasStore } from "../cas/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { RUN_ID_PATTERN, runsRoot, sddFolder, writeFileAtomic } from "../io/mod.ts";
import { ATTACH_EVENT } from "./attest.ts";
import { loadRecord } from "./record.ts";
import { type AttachEvent, AttachmentResolver } from "./resolver.ts";

const encoder = new TextEncoder();

/** Format name of the export manifest. */
export const EXPORT_KIND = "bernstein_attachments_export";

/** What an export needs. */
export interface ExportOptions {
  /** The project's `.sdd/`. */
  sdd: string;
  /** Run whose attachments are exported. */
  runId: string;
  /** The audit key (the events are read through the authenticated scan). */
  auditKey: AuditKey;
  /** CAS holding the bytes. */
  cas: CasStore;
  /** Output folder: absent or empty. */
  out: string;
}

/** What an export wrote. */
export interface ExportSummary {
  /** Distinct attested byte strings written. */
  items: number;
  /** `multimodal.attach` records written. */
  events: number;
  /** Spawns listed. */
  spawns: number;
  /** Lineage entries that carry one of the run's digests. */
  lineage_entries: number;
}

async function ensureEmpty(out: string): Promise<void> {
  try {
    for await (const _ of Deno.readDir(out)) {
      throw new BernsteinError("attach.export_not_empty", `${out} is not empty`, {
        hint: "give --out a new or empty folder",
      });
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.mkdir(join(out, "bytes"), { recursive: true });
}

/** The lineage log's lines whose `attachment_digests` name one of `digests`. */
async function lineageLines(sdd: string, digests: ReadonlySet<string>): Promise<string[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(sddFolder(sdd, "lineage"), "log.jsonl"));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return text.split("\n").filter((line) => {
    if (!line.includes("attachment_digests")) return false;
    try {
      const entry = JSON.parse(line) as { attachment_digests?: unknown };
      const named = Array.isArray(entry.attachment_digests) ? entry.attachment_digests : [];
      return named.some((d) => typeof d === "string" && digests.has(d));
    } catch {
      return false;
    }
  });
}

function eventJson(e: AttachEvent): JsonObject {
  const r = e.record;
  return {
    actor: r.actor,
    details: r.details,
    event_type: r.event_type,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    timestamp: r.timestamp,
    prev_hmac: r.prev_hmac,
    ...(r.scheme !== undefined ? { scheme: r.scheme } : {}),
    hmac: r.hmac,
  };
}

/** A run's export as files (name inside the export → bytes) and its figures. */
export interface RunExport {
  /** `manifest.json`, `events.jsonl`, `lineage.jsonl`, `bytes/<sha256>`. */
  files: Map<string, Uint8Array>;
  /** Figures. */
  summary: ExportSummary;
}

/** What reading a run's export needs (no output folder). */
export type CollectOptions = Omit<ExportOptions, "out">;

function noRecord(runId: string): BernsteinError {
  return new BernsteinError(
    "attach.export_no_record",
    `run '${runId}' has no attachment record (.sdd/runs/${runId}/attachments.json)`,
    { hint: "only runs that attached something can be exported" },
  );
}

/**
 * Reads a run's export (FORMATS.md §7.1) into memory. Refuses a run without an attachment
 * record (`attach.export_no_record`), a chain that does not verify (`attach.chain_unverified`)
 * and CAS bytes that no longer hash to their key.
 */
export async function collectRunAttachments(options: CollectOptions): Promise<RunExport> {
  const record = await loadRecord(options.sdd, options.runId);
  if (record === undefined) throw noRecord(options.runId);
  const resolver = new AttachmentResolver({
    auditDir: sddFolder(options.sdd, "audit"),
    auditKey: options.auditKey,
    cas: options.cas,
  });
  const sessions = new Set(record.spawns.map((s) => s.session));
  const events = (await resolver.events()).filter((e) => sessions.has(e.worker_id));
  const digests = new Set(events.map((e) => e.sha256));
  for (const s of record.spawns) for (const d of s.blocks) digests.add(d);
  const files = new Map<string, Uint8Array>();
  const items: JsonValue[] = [];
  for (const digest of [...digests].sort()) {
    // CAS re-hashes on read: bytes that changed behind it are an error, never exported.
    const bytes = await options.cas.read(digest);
    files.set(`bytes/${digest}`, bytes);
    const mime = events.find((e) => e.sha256 === digest)?.mime ?? null;
    items.push({ sha256: digest, mime, size: bytes.length, file: `bytes/${digest}` });
  }
  const eventLines = events.map((e) => canonicalize(eventJson(e), "canon") + "\n").join("");
  files.set("events.jsonl", encoder.encode(eventLines));
  const lineage = await lineageLines(options.sdd, digests);
  files.set("lineage.jsonl", encoder.encode(lineage.map((l) => l + "\n").join("")));
  const manifest: JsonObject = {
    kind: EXPORT_KIND,
    version: 1,
    run_id: options.runId,
    event_type: ATTACH_EVENT,
    items,
    spawns: record.spawns.map((s) => ({
      task_id: s.task_id,
      session: s.session,
      worktree_id: s.worktree_id,
      turn_seq: s.turn_seq,
      blocks: [...s.blocks],
    })),
    rows: jsonValueOf(record.rows),
    events: "events.jsonl",
    lineage: "lineage.jsonl",
  };
  files.set("manifest.json", encoder.encode(canonicalize(manifest, "canon") + "\n"));
  return {
    files,
    summary: {
      items: items.length,
      events: events.length,
      spawns: record.spawns.length,
      lineage_entries: lineage.length,
    },
  };
}

/**
 * Exports a run's attachments into `out` (FORMATS.md §7.1): {@linkcode collectRunAttachments}
 * written to an absent or empty folder (`attach.export_not_empty` otherwise).
 */
export async function exportRunAttachments(options: ExportOptions): Promise<ExportSummary> {
  if (await loadRecord(options.sdd, options.runId) === undefined) throw noRecord(options.runId);
  await ensureEmpty(options.out);
  const { files, summary } = await collectRunAttachments(options);
  // The manifest last: a folder cut short by a crash has no manifest and does not verify.
  const names = [...files.keys()].filter((n) => n !== "manifest.json").concat("manifest.json");
  for (const name of names) {
    await writeFileAtomic(join(options.out, name), files.get(name) as Uint8Array);
  }
  return summary;
}

/** Options of {@linkcode collectPeriodAttachments}. */
export interface PeriodOptions {
  /** The project's `.sdd/`. */
  sdd: string;
  /** The audit key. */
  auditKey: AuditKey;
  /** CAS holding the bytes. */
  cas: CasStore;
  /** First UTC day (`YYYY-MM-DD`). */
  since: string;
  /** Last UTC day. */
  until: string;
}

/** Ids of the runs that have an attachment record, in name order. */
async function runsWithRecords(sdd: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(runsRoot(sdd))) {
      if (!e.isDirectory || !RUN_ID_PATTERN.test(e.name)) continue;
      if (await loadRecord(sdd, e.name) !== undefined) ids.push(e.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return ids.sort();
}

/**
 * The exports of every run that attested an attachment in `since..until` (UTC days of the
 * `multimodal.attach` events), for a compliance pack (`--with-attachments`): run id → files.
 */
export async function collectPeriodAttachments(
  options: PeriodOptions,
): Promise<Map<string, RunExport>> {
  const out = new Map<string, RunExport>();
  for (const runId of await runsWithRecords(options.sdd)) {
    const run = await collectRunAttachments({ ...options, runId });
    const events = new TextDecoder().decode(run.files.get("events.jsonl")).split("\n")
      .filter((l) => l !== "").map((l) => JSON.parse(l) as { timestamp: string });
    const inPeriod = events.some((e) => {
      const day = e.timestamp.slice(0, 10);
      return day >= options.since && day <= options.until;
    });
    if (inPeriod) out.set(runId, run);
  }
  return out;
}
