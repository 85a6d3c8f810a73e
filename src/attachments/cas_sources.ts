// Where a CAS blob came from, for `bernstein cas verify` and `cas repair`: the run attachment
// records (`.sdd/runs/<run>/attachments.json`) name every digest a run needs to resume
// byte-identically and the file each was read from. Recovering a blob re-reads that source the
// way the run read it (whole, or the declared line range, screened the same way) and accepts
// the bytes only when they hash to the key; the worktree copies of media are tried too.
import { isAbsolute, join, resolve } from "node:path";
import { badDigests, type CasCheckReport, CasStore, checkCasStore } from "../cas/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { runsRoot, sddFolder } from "../io/mod.ts";
import { copyPathOf } from "./delivery.ts";
import { loadRecord } from "./record.ts";
import { screenAttachment } from "./screen.ts";
import { readSource } from "./source.ts";
import { type AttachmentSpec, parseAttachmentSpec } from "./spec.ts";

/** One place a blob's bytes were read from. */
export interface BlobSource {
  /** The run whose record names it. */
  run_id: string;
  /** Declaration field (`run.attach[0]`, `stages[0].steps[1].attachments[0]`). */
  field: string;
  /** The file, absolute (the real path recorded, or the declared path under the project). */
  file: string;
  /** The declared line range (`40-80`, `120-`, "" for the whole file). */
  range: string;
}

/** What the run records say about one digest. */
export interface BlobReference {
  /** Runs whose records need it (sorted). */
  runs: string[];
  /** MIME type recorded for it (null when no record says). */
  mime: string | null;
  /** The files it was read from. */
  sources: BlobSource[];
  /** Worktree copies of it (media handed to a CLI as a file), absolute. */
  copies: string[];
}

/** Every digest the run records reference, and records that could not be read. */
export interface CasReferences {
  /** Digest → what needs it and where it came from. */
  digests: Map<string, BlobReference>;
  /** Records that do not parse: `{run_id, message}`. */
  unreadable: { run_id: string; message: string }[];
}

function referenceOf(map: Map<string, BlobReference>, digest: string): BlobReference {
  let ref = map.get(digest);
  if (ref === undefined) {
    ref = { runs: [], mime: null, sources: [], copies: [] };
    map.set(digest, ref);
  }
  return ref;
}

function addRun(ref: BlobReference, runId: string): void {
  if (!ref.runs.includes(runId)) ref.runs.push(runId);
}

/**
 * Reads every run's attachment record under `<sdd>/runs/` and collects the digests they need
 * with their sources. `root` is the project root (task declarations are relative to it).
 */
export async function collectCasReferences(sdd: string, root: string): Promise<CasReferences> {
  const digests = new Map<string, BlobReference>();
  const unreadable: CasReferences["unreadable"] = [];
  const runIds: string[] = [];
  try {
    for await (const e of Deno.readDir(runsRoot(sdd))) if (e.isDirectory) runIds.push(e.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const runId of runIds.sort()) {
    let record;
    try {
      record = await loadRecord(sdd, runId);
    } catch (error) {
      unreadable.push({ run_id: runId, message: (error as Error).message });
      continue;
    }
    if (record === undefined) continue;
    for (const e of record.run_wide) {
      if (e.sha256 === null) continue;
      const ref = referenceOf(digests, e.sha256);
      addRun(ref, runId);
      ref.mime ??= e.mime;
      const file = e.real ?? (isAbsolute(e.path) ? e.path : null);
      if (file !== null) ref.sources.push({ run_id: runId, field: e.field, file, range: e.range });
    }
    for (const row of record.rows) {
      if (row.sha256 === null || row.task_id === null) continue;
      const ref = referenceOf(digests, row.sha256);
      addRun(ref, runId);
      ref.mime ??= row.mime;
      // Task declarations are relative to the project root; their range is not in the row.
      ref.sources.push({
        run_id: runId,
        field: row.field,
        file: resolve(root, row.path),
        range: "",
      });
    }
    for (const spawn of record.spawns) {
      for (const digest of spawn.blocks) {
        const ref = referenceOf(digests, digest);
        addRun(ref, runId);
        if (ref.mime !== null) {
          const copy = join(spawn.worktree, copyPathOf({ mime: ref.mime, sha256: digest }));
          if (!ref.copies.includes(copy)) ref.copies.push(copy);
        }
      }
    }
  }
  return { digests, unreadable };
}

/** What {@linkcode recoverBlob} found. */
export type RecoveredBlob =
  | { ok: true; bytes: Uint8Array; from: string }
  | { ok: false; tried: { from: string; why: string }[] };

function specOf(source: BlobSource): AttachmentSpec {
  const spec = parseAttachmentSpec(`${source.file}:${source.range}`, source.field);
  return source.range === "" ? { path: source.file } : spec;
}

async function candidate(
  digest: string,
  source: BlobSource,
): Promise<{ bytes?: Uint8Array; why: string }> {
  let bytes: Uint8Array;
  try {
    bytes = await readSource(source.file, source.field);
  } catch (error) {
    return {
      why: error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message,
    };
  }
  if (source.range === "" && sha256Hex(bytes) === digest) return { bytes, why: "" };
  try {
    const screened = screenAttachment(bytes, specOf(source), {
      field: source.field,
      shownPath: source.file,
    });
    if (screened.sha256 === digest) return { bytes: screened.bytes, why: "" };
  } catch (error) {
    return { why: (error as Error).message };
  }
  return { why: "changed since the run read it (its bytes hash to another key)" };
}

/**
 * Looks for `digest`'s bytes at its recorded sources, then in the worktree copies; returns
 * the first bytes that hash to the key, or every place tried and why it did not do.
 */
export async function recoverBlob(digest: string, ref: BlobReference): Promise<RecoveredBlob> {
  const tried: { from: string; why: string }[] = [];
  for (const source of ref.sources) {
    const from = source.range === "" ? source.file : `${source.file}:${source.range}`;
    if (tried.some((t) => t.from === from)) continue;
    const found = await candidate(digest, source);
    if (found.bytes !== undefined) return { ok: true, bytes: found.bytes, from };
    tried.push({ from, why: found.why });
  }
  for (const copy of ref.copies) {
    let bytes: Uint8Array;
    try {
      bytes = await readSource(copy, "worktree copy");
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message;
      tried.push({ from: copy, why });
      continue;
    }
    if (sha256Hex(bytes) === digest) return { ok: true, bytes, from: copy };
    tried.push({ from: copy, why: "changed (its bytes hash to another key)" });
  }
  return { ok: false, tried };
}

/** `bernstein cas verify`: the store checked, with the runs each bad blob stops. */
export interface ProjectCasReport {
  /** The store check (missing referenced blobs included). */
  check: CasCheckReport;
  /** Digest → runs whose records need it, for every bad or missing blob. */
  needed_by: Record<string, string[]>;
  /** Run records that could not be read (their needs are unknown). */
  unreadable_records: { run_id: string; message: string }[];
}

/** Checks the project's CAS (`<sdd>/cas`) against the run records. */
export async function checkProjectCas(sdd: string, root: string): Promise<ProjectCasReport> {
  const refs = await collectCasReferences(sdd, root);
  const check = await checkCasStore(new CasStore(sddFolder(sdd, "cas")), {
    referenced: refs.digests.keys(),
  });
  const neededBy: Record<string, string[]> = {};
  for (const digest of badDigests(check)) {
    neededBy[digest] = [...(refs.digests.get(digest)?.runs ?? [])].sort();
  }
  return { check, needed_by: neededBy, unreadable_records: refs.unreadable };
}

/** What `cas repair` did for one blob. */
export interface BlobRepair {
  /** The key. */
  digest: string;
  /** `restored` (bytes back from `from`), `unrecoverable`, or `ok` (nothing was wrong). */
  status: "restored" | "unrecoverable" | "ok";
  /** Where the good bytes came from (the blob itself when only its sidecar was bad). */
  from: string | null;
  /** Places tried that did not give the bytes, and why. */
  tried: { from: string; why: string }[];
  /** Runs whose records need the blob. */
  needed_by: string[];
  /** Damaged files moved to `.damaged/`. */
  moved_aside: string[];
}

/**
 * Repairs the bad and missing blobs of the project's CAS (or only `only`, when given): bytes
 * that hash to the key are taken from the blob's recorded sources or worktree copies (or from
 * the blob itself when only its sidecar is wrong) and put back; the rest are `unrecoverable`.
 */
export async function repairProjectCas(
  sdd: string,
  root: string,
  only?: readonly string[],
): Promise<BlobRepair[]> {
  const store = new CasStore(sddFolder(sdd, "cas"));
  const refs = await collectCasReferences(sdd, root);
  const check = await checkCasStore(store, { referenced: refs.digests.keys() });
  const bad = new Set(badDigests(check));
  const out: BlobRepair[] = [];
  for (const digest of only ?? [...bad]) {
    const ref = refs.digests.get(digest) ?? { runs: [], mime: null, sources: [], copies: [] };
    const repair: BlobRepair = {
      digest,
      status: "ok",
      from: null,
      tried: [],
      needed_by: [...ref.runs].sort(),
      moved_aside: [],
    };
    out.push(repair);
    if (!bad.has(digest)) continue;
    const blobBad = check.problems.some((p) =>
      p.digest === digest && (p.code === "cas.integrity" || p.code === "cas.not_regular" ||
        p.code === "cas.missing")
    );
    const found: RecoveredBlob = blobBad
      ? await recoverBlob(digest, ref)
      : { ok: true, bytes: await store.read(digest), from: store.blobPath(digest) };
    if (!found.ok) {
      repair.status = "unrecoverable";
      repair.tried = found.tried;
      continue;
    }
    const contentType = ref.mime ?? undefined;
    const restored = await store.restore(digest, found.bytes, contentType ? { contentType } : {});
    repair.status = "restored";
    repair.from = found.from;
    repair.moved_aside = restored.moved_aside;
  }
  return out;
}
