/**
 * Signed transparency-log checkpoints for the line logs (FORMATS.md §8), the writer side: the
 * checkpoint files of a log folder (`checkpoints.jsonl`, `checkpoint-leaves.bin`, the state
 * hint), appending a checkpoint that extends the committed history, and reading a log as a
 * list of files. The format, Merkle trees and verification are pure and live in
 * `src/crypto/` so the read-only verifier shares them.
 *
 * @example
 * ```ts ignore
 * const r = await writeCheckpoint({ dir: ".sdd/lineage", log: "lineage",
 *   files: [{ name: "log.jsonl", path: ".sdd/lineage/log.jsonl" }], signer, clock });
 * r.checkpoint.root; // RFC 9162 root of every line of the log
 * ```
 *
 * @module
 */
export { CheckpointError } from "./errors.ts";
export { type LogFile } from "./log_files.ts";
export { CHECKPOINT_FILES, type CheckpointWriteResult, writeCheckpoint } from "./writer.ts";
export { committedTree, exportCheckpoint } from "./export.ts";
