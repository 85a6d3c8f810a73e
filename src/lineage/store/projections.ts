// The rebuildable projections of log.jsonl: `by-artefact/` and `tips/`. A small state file
// records how many log bytes they reflect, so after a crash (or an append by another writer)
// the next writer catches them up from the log before trusting them for a parent.
import { join } from "node:path";
import {
  bytesEqual,
  canonicalBytes,
  isJsonObject,
  type JsonValue,
  parseCanonicalLine,
  parseJsonBytes,
} from "../../canonical/mod.ts";
import { readFileIfExists, writeFileAtomic } from "../../io/mod.ts";
import {
  applyToTipSet,
  byArtefactPath,
  entryHashOfBytes,
  type LineageEntry,
  parseEntry,
  parseTipSet,
  renderTipSet,
  streamLines,
  type TipSet,
  tipsPath,
} from "../mod.ts";
import type { LineagePaths } from "./paths.ts";

/** What the projections reflect. */
interface ProjectionState {
  /** Log bytes folded into the projections (always at a line boundary). */
  logBytes: number;
}

async function readState(paths: LineagePaths): Promise<ProjectionState | undefined> {
  const bytes = await readFileIfExists(paths.statePath);
  if (bytes === undefined) return undefined;
  try {
    const value = parseJsonBytes(bytes);
    if (!isJsonObject(value)) return undefined;
    const n = value.log_bytes;
    if (typeof n === "number" && Number.isSafeInteger(n) && n >= 0 && value.v === 1) {
      return { logBytes: n };
    }
  } catch {
    // A damaged state file only costs a rebuild.
  }
  return undefined;
}

async function writeState(paths: LineagePaths, logBytes: number): Promise<void> {
  const value: JsonValue = { log_bytes: logBytes, v: 1 };
  await writeFileAtomic(paths.statePath, canonicalBytes(value, "canon"), { mode: 0o600 });
}

/** Reads one artefact's tips file (empty when missing or unreadable: it is rebuildable). */
export async function readTips(paths: LineagePaths, artefactPath: string): Promise<TipSet> {
  const bytes = await readFileIfExists(join(paths.lineageDir, tipsPath(artefactPath)));
  if (bytes === undefined) return { open: [], merged: [] };
  return parseTipSet(bytes, tipsPath(artefactPath));
}

async function writeTips(paths: LineagePaths, artefactPath: string, tips: TipSet): Promise<void> {
  const path = join(paths.lineageDir, tipsPath(artefactPath));
  await Deno.mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, renderTipSet(tips), { mode: 0o600 });
}

const NL = new Uint8Array([0x0a]);

function withNewline(line: Uint8Array): Uint8Array {
  const out = new Uint8Array(line.length + 1);
  out.set(line);
  out.set(NL, line.length);
  return out;
}

/** Appends a line to an artefact's by-artefact file unless it is already its last line. */
async function appendByArtefact(
  paths: LineagePaths,
  artefactPath: string,
  line: Uint8Array,
  checkTail: boolean,
): Promise<void> {
  const path = join(paths.lineageDir, byArtefactPath(artefactPath));
  await Deno.mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  const bytes = withNewline(line);
  if (checkTail) {
    // A crash between the projection append and the state update replays this line.
    const existing = await readFileIfExists(path);
    if (
      existing !== undefined && existing.length >= bytes.length &&
      bytesEqual(existing.subarray(existing.length - bytes.length), bytes)
    ) {
      return;
    }
  }
  // A projection needs no fsync: the state file, written after it, decides whether it counts.
  await Deno.writeFile(path, bytes, { append: true, create: true, mode: 0o600 });
}

/** Folds one appended entry into the projections. */
export async function projectEntry(
  paths: LineagePaths,
  entry: LineageEntry,
  line: Uint8Array,
  options: { replay?: boolean } = {},
): Promise<void> {
  await appendByArtefact(paths, entry.artefact_path, line, options.replay === true);
  const tips = await readTips(paths, entry.artefact_path);
  await writeTips(
    paths,
    entry.artefact_path,
    applyToTipSet(tips, { hash: entryHashOfBytes(line), parents: entry.parent_hashes }),
  );
}

/** Records that the projections reflect the log up to `logBytes`. */
export function markProjected(paths: LineagePaths, logBytes: number): Promise<void> {
  return writeState(paths, logBytes);
}

/** What a catch-up or rebuild did. */
export interface ProjectionReport {
  /** Log lines folded in. */
  applied: number;
  /** Lines that are not valid entries (left out of the projections). */
  skipped: number;
  /** True when everything was rebuilt from scratch. */
  rebuilt: boolean;
}

async function* fileChunks(path: string, from: number): AsyncGenerator<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    if (from > 0) await file.seek(from, Deno.SeekMode.Start);
    const buf = new Uint8Array(256 * 1024);
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      yield buf.slice(0, n);
    }
  } finally {
    file.close();
  }
}

function entryOfLine(line: Uint8Array): LineageEntry | undefined {
  const parsed = parseCanonicalLine(line, "canon");
  if (!parsed.ok) return undefined;
  try {
    return parseEntry(parsed.value);
  } catch {
    return undefined;
  }
}

/**
 * Rebuilds `by-artefact/` and `tips/` from log.jsonl alone. Call under the log lock. Invalid
 * lines and a torn tail are left out and counted.
 */
export async function rebuildProjections(paths: LineagePaths): Promise<ProjectionReport> {
  await Deno.remove(paths.statePath).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  for (const sub of ["by-artefact", "tips"]) {
    await Deno.remove(join(paths.lineageDir, sub), { recursive: true }).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }
  const report: ProjectionReport = { applied: 0, skipped: 0, rebuilt: true };
  let logBytes = 0;
  try {
    await Deno.lstat(paths.logPath);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      await writeState(paths, 0);
      return report;
    }
    throw e;
  }
  const tips = new Map<string, TipSet>();
  const pending = new Map<string, Uint8Array[]>();
  let pendingBytes = 0;
  const flush = async () => {
    for (const [artefact, lines] of pending) {
      const path = join(paths.lineageDir, byArtefactPath(artefact));
      await Deno.mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
      const total = lines.reduce((n, l) => n + l.length + 1, 0);
      const out = new Uint8Array(total);
      let at = 0;
      for (const l of lines) {
        out.set(l, at);
        out[at + l.length] = 0x0a;
        at += l.length + 1;
      }
      await Deno.writeFile(path, out, { append: true, create: true, mode: 0o600 });
    }
    pending.clear();
    pendingBytes = 0;
  };
  for await (const l of streamLines(fileChunks(paths.logPath, 0))) {
    if (!l.terminated) break; // a torn tail is not part of the history (yet)
    logBytes = l.offset + l.bytes.length + 1;
    const entry = l.tooLong ? undefined : entryOfLine(l.bytes);
    if (entry === undefined) {
      report.skipped++;
      continue;
    }
    report.applied++;
    const line = l.bytes.slice();
    const list = pending.get(entry.artefact_path);
    if (list === undefined) pending.set(entry.artefact_path, [line]);
    else list.push(line);
    pendingBytes += line.length;
    tips.set(
      entry.artefact_path,
      applyToTipSet(tips.get(entry.artefact_path) ?? { open: [], merged: [] }, {
        hash: entryHashOfBytes(l.bytes),
        parents: entry.parent_hashes,
      }),
    );
    if (pendingBytes > 8 * 1024 * 1024) await flush();
  }
  await flush();
  for (const [artefact, set] of tips) await writeTips(paths, artefact, set);
  await writeState(paths, logBytes);
  return report;
}

/**
 * Brings the projections up to date with the log: nothing when they already match, the new
 * lines when the log grew past the recorded state, a full rebuild when the state is missing
 * or the log is shorter than it says. Call under the log lock.
 */
export async function catchUpProjections(
  paths: LineagePaths,
  logSize: number,
): Promise<ProjectionReport> {
  const state = await readState(paths);
  if (state !== undefined && state.logBytes === logSize) {
    return { applied: 0, skipped: 0, rebuilt: false };
  }
  if (state === undefined || state.logBytes > logSize) return await rebuildProjections(paths);
  const report: ProjectionReport = { applied: 0, skipped: 0, rebuilt: false };
  let logBytes = state.logBytes;
  for await (const l of streamLines(fileChunks(paths.logPath, state.logBytes))) {
    if (!l.terminated) break;
    logBytes = state.logBytes + l.offset + l.bytes.length + 1;
    const entry = l.tooLong ? undefined : entryOfLine(l.bytes);
    if (entry === undefined) {
      report.skipped++;
      continue;
    }
    await projectEntry(paths, entry, l.bytes, { replay: true });
    report.applied++;
  }
  await writeState(paths, logBytes);
  return report;
}
