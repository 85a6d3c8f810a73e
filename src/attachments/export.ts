// `bernstein attachments export RUN --out DIR`: what each agent of a run was shown, for an
// auditor who re-derives it offline (`bernstein-verify attachments DIR`, FORMATS.md §7.1). The
// folder holds the run's `multimodal.attach` audit records as the authenticated scan returned
// them, the attested bytes from CAS (re-hashed on read), the lineage entries that carry the
// digests, and a manifest tying them together: each spawn's blocks in prompt order.
import { join } from "node:path";
import type { AuditKey } from "../audit/mod.ts";
import { canonicalize, type JsonObject, type JsonValue } from "../canonical/mod.ts";
import type { CasStore } from "../cas/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { writeFileAtomic } from "../io/mod.ts";
import { ATTACH_EVENT } from "./attest.ts";
import { loadRecord } from "./record.ts";
import { type AttachEvent, AttachmentResolver } from "./resolver.ts";

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
    text = await Deno.readTextFile(join(sdd, "lineage", "log.jsonl"));
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

/**
 * Exports a run's attachments into `out` (FORMATS.md §7.1). Refuses a run without an
 * attachment record (`attach.export_no_record`), a non-empty folder, a chain that does not
 * verify (`attach.chain_unverified`) and CAS bytes that no longer hash to their key.
 */
export async function exportRunAttachments(options: ExportOptions): Promise<ExportSummary> {
  const record = await loadRecord(options.sdd, options.runId);
  if (record === undefined) {
    throw new BernsteinError(
      "attach.export_no_record",
      `run '${options.runId}' has no attachment record (.sdd/runs/${options.runId}/attachments.json)`,
      { hint: "only runs that attached something can be exported" },
    );
  }
  await ensureEmpty(options.out);
  const resolver = new AttachmentResolver({
    auditDir: join(options.sdd, "audit"),
    auditKey: options.auditKey,
    cas: options.cas,
  });
  const sessions = new Set(record.spawns.map((s) => s.session));
  const events = (await resolver.events()).filter((e) => sessions.has(e.worker_id));
  const digests = new Set(events.map((e) => e.sha256));
  for (const s of record.spawns) for (const d of s.blocks) digests.add(d);
  const items: JsonValue[] = [];
  for (const digest of [...digests].sort()) {
    // CAS re-hashes on read: bytes that changed behind it are an error, never exported.
    const bytes = await options.cas.read(digest);
    await writeFileAtomic(join(options.out, "bytes", digest), bytes);
    const mime = events.find((e) => e.sha256 === digest)?.mime ?? null;
    items.push({ sha256: digest, mime, size: bytes.length, file: `bytes/${digest}` });
  }
  const eventLines = events.map((e) => canonicalize(eventJson(e), "canon") + "\n").join("");
  await writeFileAtomic(join(options.out, "events.jsonl"), new TextEncoder().encode(eventLines));
  const lineage = await lineageLines(options.sdd, digests);
  await writeFileAtomic(
    join(options.out, "lineage.jsonl"),
    new TextEncoder().encode(lineage.map((l) => l + "\n").join("")),
  );
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
    rows: record.rows as unknown as JsonValue,
    events: "events.jsonl",
    lineage: "lineage.jsonl",
  };
  await writeFileAtomic(
    join(options.out, "manifest.json"),
    new TextEncoder().encode(canonicalize(manifest, "canon") + "\n"),
  );
  return {
    items: items.length,
    events: events.length,
    spawns: record.spawns.length,
    lineage_entries: lineage.length,
  };
}
