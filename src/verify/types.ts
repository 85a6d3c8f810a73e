// The gate's public types: its input (log, signature lookup, cards), its issues and result.
import type { StartedWorkers } from "./_pool.ts";
import type { JsonValue } from "../canonical/mod.ts";
import type {
  CheckpointFileProblem,
  CheckpointFileReview,
  CheckpointUnderTest,
  CommittedLeaves,
} from "../crypto/mod.ts";
import type {
  AgentCardSet,
  ByteSource,
  ForeignAttestationResult,
  LineageEntry,
} from "../lineage/mod.ts";
import type { FactFields } from "../pack_format/mod.ts";

/** One failed check: a stable kind (the failure words) and one human line. */
export interface VerifyIssue {
  /** Which check failed (`invalid signature`, `input hash mismatch`, …). */
  kind: string;
  /** One line naming the member, line or entry. */
  message: string;
}

/**
 * The failure words of FORMATS.md §4, plus the two card/entry problems they do not name, and
 * the checkpoint and sidecar words of FORMATS.md §8.
 */
export const GATE_ISSUE_KINDS = [
  "missing trailing newline",
  "non-canonical line bytes",
  "invalid entry",
  "kid binding cannot be established",
  "kid binding mismatch",
  "invalid signature",
  "HMAC mismatch",
  "dangling parent_hash",
  "unresolved fork",
  "conflicting agent cards",
  "invalid agent card",
  "checkpoint mismatch",
  "log truncated",
  "invalid checkpoint",
  "checkpoint signature invalid",
  "checkpoint signature unverifiable",
  "orphaned signature",
] as const;

/** One of {@linkcode GATE_ISSUE_KINDS}. */
export type GateIssueKind = typeof GATE_ISSUE_KINDS[number];

/** One problem the gate found. */
export interface GateIssue {
  /** Which check failed (the exact failure words). */
  kind: GateIssueKind;
  /** One human line: `<where>: <kind>: <detail>`. */
  message: string;
  /** 1-based line of the log, for per-entry problems. */
  line?: number;
  /** The entry hash, when the line parsed. */
  entry_hash?: string;
  /** The artefact, when known. */
  artefact?: string;
  /** A file other than the log (card, sidecar), when the problem is there. */
  location?: string;
}

/** What the signature lookup found for one entry. */
export type SignatureFetch = Uint8Array | { problem: string } | undefined;

/**
 * Finds the detached JWS of an entry by its hash (an archive member, …). The gate asks before
 * a line is parsed, with the hash of the line's bytes (for an entry, its entry hash): a line
 * that turns out not to be an entry is asked for too, and the answer is then ignored.
 */
export type SignatureLookup = (entryHash: string) => SignatureFetch | Promise<SignatureFetch>;

/** A card file (or a reason it could not be read) from a directory or an archive. */
export type CardFile = { location: string; bytes: Uint8Array } | {
  location: string;
  problem: string;
};

/** A foreign attestation to classify next to the entry it sits beside. */
export interface ForeignAttestationInput {
  /** The local entry the envelope sits beside. */
  entry_hash: string;
  /** Where it came from (for messages). */
  location: string;
  /** The envelope as parsed JSON (absent when `problem` says why the file is unusable). */
  attestation?: JsonValue;
  /** Why the file could not be read as JSON: a `malformed` verdict. */
  problem?: string;
  /** The file's bytes, when it could be read (a pack builder copies them). */
  bytes?: Uint8Array;
}

/** The verdict on one foreign attestation (never part of `ok`). */
export interface ForeignAttestationReport extends ForeignAttestationResult {
  /** The entry it sits beside. */
  entry_hash: string;
  /** Where it came from. */
  location: string;
}

/** The log's checkpoints (FORMATS.md §8) for the gate to check the log against. */
export interface GateCheckpointInput {
  /** The checkpoints file's name in messages (`checkpoints.jsonl`). */
  fileName: string;
  /** The file, reviewed (`reviewCheckpointFile`); absent when the log has no checkpoints file. */
  review?: CheckpointFileReview;
  /** The committed leaf record, to name the first differing leaf of a mismatch. */
  committed?: CommittedLeaves;
  /** Checkpoints kept elsewhere (an auditor's copy, a pack's), their signatures checked. */
  external?: CheckpointUnderTest[];
  /** Problems with those external checkpoints (each becomes an issue). */
  externalProblems?: CheckpointFileProblem[];
}

/** What the gate found about checkpoints. */
export interface GateCheckpointReport {
  /** The checkpoints file's name. */
  file: string;
  /** Lines in it (0 when there is none). */
  checkpoints: number;
  /** Checkpoint signatures that verified with the operator key. */
  verified_signatures: number;
  /** Checkpoints (own and external) that match the log. */
  matched: number;
  /** External checkpoints checked. */
  external: number;
  /** The latest checkpoint of the file. */
  latest: { where: string; size: number; root: string; ts: string } | null;
  /** Log lines after the latest checkpoint: not yet checkpointed, so not covered by it. */
  not_checkpointed: number;
}

/** Everything the gate reads; a directory reader and an archive reader both produce this. */
export interface GateInput {
  /** The log bytes, whole or as a stream of chunks. */
  log: ByteSource;
  /** Name of the log in messages (default `log.jsonl`). */
  logName?: string;
  /**
   * Finds each entry's detached JWS: a lookup function (archives), or the lineage folder whose
   * `signatures/` tree the gate reads itself, possibly from worker threads.
   */
  signatures: SignatureLookup | { directory: string };
  /** The agent cards. */
  cards: AgentCardSet | Iterable<CardFile> | AsyncIterable<CardFile>;
  /** The operator key; when absent the HMAC check is skipped and the result says so. */
  operatorKey?: Uint8Array;
  /** Foreign attestations to classify; they never change `ok`. */
  foreignAttestations?: readonly ForeignAttestationInput[];
  /** Issuer keys pinned for foreign attestations: issuer key id → Ed25519 public key. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
  /** The log's checkpoints; absent: not checked (and not reported). */
  checkpoints?: GateCheckpointInput;
  /**
   * Report sidecars under the signatures folder that no entry of the log has (a deleted
   * entry leaves its signature behind). Only for a folder lookup.
   */
  orphans?: boolean;
  /** Longest log line accepted (default 1 MiB). */
  maxLineBytes?: number;
  /**
   * Entries the log is expected to hold (e.g. a manifest's `entry_count`): the gate's tables
   * start that large instead of growing by doubling. A hint only, capped at 2 000 000: a wrong
   * count costs memory or time, never a check.
   */
  expectedEntries?: number;
  /** How sidecars are named in messages: lineage folder paths (default) or pack members. */
  sidecarNames?: "lineage" | "pack";
  /**
   * Entry hashes known to precede the log (a compliance pack's window starts after them):
   * parents naming them are not dangling.
   */
  knownParents?: ReadonlySet<string>;
  /**
   * Receives every entry that parsed, in log order, with its hash and raw line bytes (the pack
   * verifier derives its facts from them). Called before the entry's signature is checked; the
   * bytes are valid only during the call.
   */
  onEntry?: (entry: LineageEntry, hash: string, line: Uint8Array) => void;
  /**
   * The pack window phase's consumers, instead of `onEntry` when whole entries are not needed:
   * every entry that parsed, in log order, as the few fields its facts read, and each batch's
   * rows of `article12-evidence.csv` (UTF-8, no header, in log order). Both are made where the
   * batch is checked, so a worker never clones whole entries back.
   */
  window?: GateWindowConsumer;
}

/** See {@linkcode GateInput.window}. */
export interface GateWindowConsumer {
  /**
   * An entry's fact fields and its hash, in log order; `digest`, when given, holds the hash's
   * 32 bytes at its start and, for an entry with exactly one parent, that parent's 32 bytes
   * after them (a view valid during the call only).
   */
  onEntry(entry: FactFields, hash: string, digest?: Uint8Array): void;
  /** The CSV rows of the next entries (the bytes are the callee's to keep). */
  onCsvRows(rows: Uint8Array): void;
}

/** The gate's verdict. */
export interface GateResult {
  /** True when there is no issue. */
  ok: boolean;
  /** Lines in the log (including bad ones). */
  lines: number;
  /** Lines that parsed as entries. */
  entries: number;
  /** Distinct artefacts among them. */
  artefacts: number;
  /** Usable card files read. */
  cards: number;
  /** False when no operator key was given, so `operator_hmac` was not checked. */
  hmac_checked: boolean;
  /** Every problem, in check order: framing, then per line, then forks, then cards. */
  issues: GateIssue[];
  /** Foreign attestation verdicts (informational only). */
  foreign: ForeignAttestationReport[];
  /** The checkpoint check, or null when no checkpoint input was given. */
  checkpoint: GateCheckpointReport | null;
}

/** Options for `runLineageGate`. */
export interface GateOptions {
  /**
   * Worker threads sharing the signature checks with this thread (0 runs everything here;
   * card input must be files, not a ready card set). They take batches after the first few
   * hundred entries (and start then, unless `started` ahead). A worker that cannot start or fails hands its batches back to this thread:
   * results never depend on the pool.
   */
  workers?: number;
  /** Where the worker module is (default: `_gate_worker.ts` beside the gate). */
  workerUrl?: URL;
  /** Workers started ahead with the same module (taken instead of starting new ones). */
  started?: StartedWorkers;
}
