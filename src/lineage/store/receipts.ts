// Failure receipts and run spines on disk (FORMATS.md §10): a receipt is written once at
// `.sdd/lineage/receipts/<hex>.json` (content-addressed, never rewritten), and recorded on the
// run's spine `.sdd/lineage/<run_id>/spine.jsonl` under the spine lock; `spine.head` is
// replaced after each row. Verification reads only, and never creates a key.
import { join } from "node:path";
import { BernsteinError } from "../../errors/mod.ts";
import { checkRunId } from "../../io/mod.ts";
import {
  appendDurable,
  readFileIfExists,
  withFileLock,
  writeFileAtomic,
  writeFileIfAbsent,
} from "../../io/mod.ts";
import {
  type FailureReceipt,
  parseReceipt,
  receiptBytes,
  receiptContentHash,
  receiptRelativePath,
  RECEIPTS_DIR,
  sealSpineEntry,
  SPINE_FILE,
  SPINE_HEAD_FILE,
  type SpineEntry,
  type SpineFields,
  spineHeadBytes,
  spineKey,
  type SpineProblem,
  spineRowBytes,
  verifySpine,
} from "../mod.ts";
import type { LineagePaths } from "./paths.ts";

const RESERVED = new Set([
  RECEIPTS_DIR,
  "signatures",
  "by-artefact",
  "tips",
  "attestations",
  "archive",
]);

/**
 * Checks a run id names one folder under `.sdd/lineage/`: a run id (src/io's `checkRunId`,
 * `runs.bad_id`) that is not one of the folder's own subfolders (`lineage.bad_run_id`).
 */
export function checkSpineRunId(runId: string): string {
  checkRunId(runId);
  if (RESERVED.has(runId)) {
    throw new BernsteinError(
      "lineage.bad_run_id",
      `'${runId}' is a folder of .sdd/lineage/, not a run id`,
      { hint: "'bernstein runs list' shows the run ids" },
    );
  }
  return runId;
}

/** `.sdd/lineage/<run_id>/`. */
export function spineDir(paths: LineagePaths, runId: string): string {
  return join(paths.lineageDir, checkSpineRunId(runId));
}

/** Where a receipt was written. */
export interface WrittenReceipt {
  /** Hex SHA-256 of its bytes. */
  hex: string;
  /** Its path relative to the project root (`.sdd/lineage/receipts/<hex>.json`). */
  repoPath: string;
  /** Its absolute path. */
  path: string;
  /** Its bytes. */
  bytes: Uint8Array;
}

/**
 * Writes a receipt under its content hash. An existing file of that name must hold exactly
 * these bytes (the same receipt written twice); anything else is refused.
 */
export async function writeReceipt(
  paths: LineagePaths,
  receipt: FailureReceipt,
): Promise<WrittenReceipt> {
  const bytes = receiptBytes(receipt);
  const hex = receiptContentHash(bytes);
  const relative = receiptRelativePath(hex);
  const path = join(paths.lineageDir, relative);
  await Deno.mkdir(join(paths.lineageDir, RECEIPTS_DIR), { recursive: true, mode: 0o755 });
  if (!await writeFileIfAbsent(path, bytes, { mode: 0o644 })) {
    const existing = await Deno.readFile(path);
    if (receiptContentHash(existing) !== hex) {
      throw new BernsteinError(
        "lineage.receipt_conflict",
        `${path} exists and does not hold the receipt its name is the hash of`,
        { hint: "a receipt file was changed; 'bernstein lineage verify' reports it" },
      );
    }
  }
  return { hex, repoPath: `.sdd/lineage/${relative}`, path, bytes };
}

/**
 * Appends one entry to the run's spine (its `prev_hash` is the current head) and replaces
 * `spine.head`, under `.spine.lock`. `auditKey` is the audit key K (its file text bytes).
 */
export async function appendSpineEntry(
  paths: LineagePaths,
  runId: string,
  fields: Omit<SpineFields, "prev_hash">,
  auditKey: Uint8Array,
): Promise<SpineEntry> {
  const dir = spineDir(paths, runId);
  await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
  return await withFileLock(join(dir, ".spine.lock"), async () => {
    const key = spineKey(auditKey);
    const rows = await readFileIfExists(join(dir, SPINE_FILE)) ?? new Uint8Array(0);
    const report = verifySpine(rows, undefined, { spine: key, audit: auditKey });
    if (!report.ok) {
      const p = report.problems[0];
      throw new BernsteinError(
        "lineage.spine_broken",
        `${dir}/${p.where}: ${p.message}; nothing is appended to a broken spine`,
        { hint: `bernstein lineage verify ${runId} --receipt-hash …` },
      );
    }
    const last = report.entries.at(-1);
    const entry = sealSpineEntry({ prev_hash: last?.entry_hash ?? "", ...fields }, key);
    await appendDurable(join(dir, SPINE_FILE), spineRowBytes(entry), { mode: 0o644 });
    await writeFileAtomic(
      join(dir, SPINE_HEAD_FILE),
      spineHeadBytes(entry.entry_hash, report.count + 1, key),
      { mode: 0o644 },
    );
    return entry;
  });
}

/** What {@linkcode verifyRecoveryReceipt} found. */
export interface ReceiptVerification {
  /** True when the receipt resolves on an intact chain and the file matches its entry. */
  ok: boolean;
  /** The spine's rows. */
  count: number;
  /** The anchored entry, when found. */
  entry?: SpineEntry & { line: number };
  /** The receipt, when read and well-formed. */
  receipt?: FailureReceipt;
  /** The receipt file read. */
  receiptFile?: string;
  /** Everything wrong, in order. */
  problems: SpineProblem[];
}

/**
 * Checks a receipt against a run's spine, reading only: the spine chains and authenticates
 * under the audit key (and its head agrees), an entry has hash `receiptHash`, and the receipt
 * file (`receiptFile`, else `.sdd/lineage/receipts/<hex of its content_hash>.json`) is
 * well-formed and hashes to that entry's `content_hash`.
 */
export async function verifyRecoveryReceipt(options: {
  paths: LineagePaths;
  runId: string;
  receiptHash: string;
  receiptFile?: string;
  auditKey: Uint8Array;
}): Promise<ReceiptVerification> {
  const dir = spineDir(options.paths, options.runId);
  const rows = await readFileIfExists(join(dir, SPINE_FILE));
  if (rows === undefined) {
    return {
      ok: false,
      count: 0,
      problems: [{ where: SPINE_FILE, message: `no spine for run ${options.runId} (${dir})` }],
    };
  }
  const head = await readFileIfExists(join(dir, SPINE_HEAD_FILE));
  const key = spineKey(options.auditKey);
  const report = verifySpine(rows, head, { spine: key, audit: options.auditKey });
  const problems = [...report.problems];
  if (head === undefined) {
    problems.push({ where: SPINE_HEAD_FILE, message: "missing (the spine's length is unpinned)" });
  }
  const entry = report.entries.find((e) => e.entry_hash === options.receiptHash);
  const out: ReceiptVerification = { ok: false, count: report.count, problems };
  if (entry === undefined) {
    problems.push({
      where: SPINE_FILE,
      message: `no entry has hash ${options.receiptHash}`,
    });
    return out;
  }
  out.entry = entry;
  const hex = /^sha256:([0-9a-f]{64})$/.exec(entry.content_hash)?.[1];
  const file = options.receiptFile ??
    (hex === undefined ? undefined : join(options.paths.lineageDir, receiptRelativePath(hex)));
  if (file === undefined) {
    problems.push({
      where: `${SPINE_FILE}:${entry.line}`,
      message: `content_hash '${entry.content_hash}' is not sha256:<64 hex>`,
    });
    return out;
  }
  out.receiptFile = file;
  const bytes = await readFileIfExists(file);
  if (bytes === undefined) {
    problems.push({ where: file, message: "receipt file not found" });
    return out;
  }
  const actual = `sha256:${receiptContentHash(bytes)}`;
  if (actual !== entry.content_hash) {
    problems.push({
      where: file,
      message:
        `its content hash is ${actual}; the spine entry anchors ${entry.content_hash} (the receipt was changed or is another one)`,
    });
  }
  const parsed = parseReceipt(bytes);
  if (!parsed.ok) problems.push({ where: file, message: parsed.problem });
  else out.receipt = parsed.receipt;
  out.ok = problems.length === 0;
  return out;
}
