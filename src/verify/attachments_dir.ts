// `bernstein-verify attachments DIR`: checks an export of a run's attachments offline
// (FORMATS.md §7.1) — every exported byte string hashes to its digest, every attach event names
// bytes that are there with the same MIME type, every spawn's blocks were attested to that
// spawn, and every lineage entry's attachment digests have bytes and an attestation. The audit
// HMACs (the key is the operator's secret) and the lineage signatures (`chain`) are not checked
// here; the notes say so.
import { sha256Hex } from "../crypto/mod.ts";
import type { VerifyIssue } from "./types.ts";

/** Result of {@linkcode verifyAttachmentsDir}. */
export interface AttachmentsDirResult {
  /** True when every check passed. */
  ok: boolean;
  /** Figures. */
  stats: { run_id: string | null; items: number; events: number; spawns: number; lineage: number };
  /** Failed checks. */
  errors: VerifyIssue[];
  /** Remarks. */
  notes: string[];
}

const DIGEST = /^[0-9a-f]{64}$/;

type Obj = Record<string, unknown>;

function objectOf(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Obj
    : undefined;
}

/** Reads one file of an export by its name inside it (`bytes/<sha256>`); undefined: unreadable. */
export type ExportFileReader = (name: string) => Uint8Array | undefined;

function readText(read: ExportFileReader, name: string): string | undefined {
  const bytes = read(name);
  if (bytes === undefined) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** JSON lines of a file; a line that is not a JSON object is an error. */
function jsonLines(read: ExportFileReader, name: string, errors: VerifyIssue[]): Obj[] {
  const text = readText(read, name);
  if (text === undefined) {
    errors.push({ kind: "missing member", message: `${name}: cannot be read` });
    return [];
  }
  const out: Obj[] = [];
  text.split("\n").forEach((line, i) => {
    if (line === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const obj = objectOf(parsed);
    if (obj === undefined) {
      errors.push({ kind: "malformed line", message: `${name}:${i + 1}: not a JSON object` });
    } else out.push(obj);
  });
  return out;
}

interface Item {
  sha256: string;
  mime: string | null;
  size: number;
}

function checkItems(
  read: ExportFileReader,
  manifest: Obj,
  errors: VerifyIssue[],
): Map<string, Item> {
  const items = new Map<string, Item>();
  const list = Array.isArray(manifest.items) ? manifest.items : [];
  list.forEach((raw, i) => {
    const item = objectOf(raw);
    const sha = item?.sha256;
    const where = `manifest.items[${i}]`;
    if (item === undefined || typeof sha !== "string" || !DIGEST.test(sha)) {
      errors.push({ kind: "malformed manifest", message: `${where}: no sha256` });
      return;
    }
    if (item.file !== `bytes/${sha}`) {
      errors.push({ kind: "malformed manifest", message: `${where}: file is not bytes/${sha}` });
      return;
    }
    const bytes = read(`bytes/${sha}`);
    if (bytes === undefined) {
      errors.push({ kind: "missing bytes", message: `bytes/${sha}: cannot be read` });
      return;
    }
    const actual = sha256Hex(bytes);
    if (actual !== sha) {
      errors.push({
        kind: "digest mismatch",
        message: `bytes/${sha}: the bytes hash to ${actual}, not to their digest`,
      });
    }
    if (item.size !== bytes.length) {
      errors.push({
        kind: "size mismatch",
        message: `bytes/${sha}: ${bytes.length} bytes, the manifest says ${item.size}`,
      });
    }
    items.set(sha, {
      sha256: sha,
      mime: typeof item.mime === "string" ? item.mime : null,
      size: bytes.length,
    });
  });
  return items;
}

/** Checks the export in `dir`; never throws for what it finds (errors say what). */
export function verifyAttachmentsDir(dir: string): AttachmentsDirResult {
  return verifyAttachmentExport((name) => {
    try {
      return Deno.readFileSync(`${dir}/${name}`);
    } catch {
      return undefined;
    }
  });
}

/**
 * Checks an export whose files `read` returns (a folder, or a compliance pack's
 * `attachments/<run>/` members); never throws for what it finds (errors say what).
 */
export function verifyAttachmentExport(read: ExportFileReader): AttachmentsDirResult {
  const errors: VerifyIssue[] = [];
  const notes = [
    "audit HMACs are not checked offline (the key is the operator's): 'bernstein audit verify'",
    "lineage signatures are checked by 'chain' on the lineage log, not here",
  ];
  const stats = { run_id: null as string | null, items: 0, events: 0, spawns: 0, lineage: 0 };
  const text = readText(read, "manifest.json");
  let manifest: Obj | undefined;
  try {
    manifest = text === undefined ? undefined : objectOf(JSON.parse(text));
  } catch {
    manifest = undefined;
  }
  if (manifest === undefined || manifest.kind !== "bernstein_attachments_export") {
    errors.push({
      kind: "malformed manifest",
      message: "manifest.json: missing, unreadable or not a bernstein_attachments_export",
    });
    return { ok: false, stats, errors, notes };
  }
  stats.run_id = typeof manifest.run_id === "string" ? manifest.run_id : null;
  const items = checkItems(read, manifest, errors);
  stats.items = items.size;
  // Attestations: which worker got which digest.
  const attested = new Set<string>();
  const events = jsonLines(read, "events.jsonl", errors);
  stats.events = events.length;
  events.forEach((e, i) => {
    const d = objectOf(e.details);
    const sha = d?.sha256;
    const where = `events.jsonl:${i + 1}`;
    if (e.event_type !== "multimodal.attach" || typeof sha !== "string") {
      errors.push({ kind: "malformed event", message: `${where}: not a multimodal.attach event` });
      return;
    }
    const item = items.get(sha);
    if (item === undefined) {
      errors.push({
        kind: "missing bytes",
        message: `${where}: attests ${sha}, which is not exported`,
      });
    } else if (item.mime !== d?.mime) {
      errors.push({
        kind: "mime mismatch",
        message: `${where}: ${sha} attested as ${d?.mime}, exported as ${item.mime}`,
      });
    }
    attested.add(`${d?.worker_id}\0${sha}`);
  });
  // Each spawn's blocks: exported and attested to that spawn.
  const spawns = Array.isArray(manifest.spawns) ? manifest.spawns : [];
  stats.spawns = spawns.length;
  spawns.forEach((raw, i) => {
    const s = objectOf(raw);
    const blocks = Array.isArray(s?.blocks) ? s.blocks : [];
    for (const sha of blocks) {
      if (typeof sha !== "string" || !items.has(sha)) {
        errors.push({
          kind: "missing bytes",
          message: `manifest.spawns[${i}] (${s?.session}): block ${sha} is not exported`,
        });
      } else if (!attested.has(`${s?.session}\0${sha}`)) {
        errors.push({
          kind: "not attested",
          message: `manifest.spawns[${i}] (${s?.session}): block ${sha} has no attach event for it`,
        });
      }
    }
  });
  // Lineage entries: every digest they carry has bytes and an attestation.
  const digestsAttested = new Set([...attested].map((k) => k.slice(k.indexOf("\0") + 1)));
  const lineage = jsonLines(read, "lineage.jsonl", errors);
  stats.lineage = lineage.length;
  lineage.forEach((entry, i) => {
    const named = Array.isArray(entry.attachment_digests) ? entry.attachment_digests : [];
    for (const sha of named) {
      if (typeof sha !== "string" || !items.has(sha) || !digestsAttested.has(sha)) {
        errors.push({
          kind: "lineage digest unbacked",
          message: `lineage.jsonl:${
            i + 1
          }: attachment digest ${sha} has no exported, attested bytes`,
        });
      }
    }
  });
  return { ok: errors.length === 0, stats, errors, notes };
}
