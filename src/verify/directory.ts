// Feeds the gate from a `.sdd/` tree: the log streamed from disk, sidecars read on demand, cards
// walked in both layouts. Read-only: this runs inside the `bernstein-verify` sandbox too.
import { join } from "node:path";
import {
  type CheckpointFileProblem,
  type CheckpointLog,
  type CheckpointUnderTest,
  decodePublicKeyPem,
  parseCheckpointDocument,
  reviewCheckpointFile,
  sha256Hex,
  verifyCheckpointSignature,
} from "../crypto/mod.ts";
import { parseJsonBytes } from "../canonical/mod.ts";
import { cardLayoutOf } from "../lineage/mod.ts";
import type {
  CardFile,
  ForeignAttestationInput,
  GateCheckpointInput,
  GateInput,
  SignatureFetch,
} from "./types.ts";

// A card is ~400 bytes; anything far larger is not read.
const MAX_CARD_BYTES = 64 * 1024;

/** Reads one file that must be a regular file (no symlink) of at most `limit` bytes. */
function readRegularFile(path: string, limit: number): SignatureFetch {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    return { problem: `cannot read: ${(error as Error).message}` };
  }
  if (info.isSymlink) return { problem: "is a symlink (refused)" };
  if (!info.isFile) return { problem: "is not a regular file" };
  if (info.size > limit) return { problem: `is ${info.size} bytes, more than ${limit}` };
  try {
    return Deno.readFileSync(path);
  } catch (error) {
    return { problem: `cannot read: ${(error as Error).message}` };
  }
}

function sortedEntries(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)].sort((
      a,
      b,
    ) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
}

/**
 * The card files under `cardsDir` in both layouts (`<dir>/card.json`, `<dir>/<kid>/card.json`),
 * in a stable order. Symlinked folders and files are reported, never followed.
 */
export function* readCardDirectory(cardsDir: string): Generator<CardFile> {
  for (const top of sortedEntries(cardsDir)) {
    if (top.isSymlink) {
      yield { location: top.name, problem: "card folder is a symlink (refused)" };
      continue;
    }
    if (!top.isDirectory) continue;
    const inner = sortedEntries(join(cardsDir, top.name));
    for (const child of inner) {
      const rel = `${top.name}/${child.name}`;
      if (child.name === "card.json") {
        const got = readRegularFile(join(cardsDir, rel), MAX_CARD_BYTES);
        if (got instanceof Uint8Array) yield { location: rel, bytes: got };
        else if (got !== undefined) yield { location: rel, problem: got.problem };
        continue;
      }
      if (child.isSymlink) {
        yield { location: rel, problem: "card folder is a symlink (refused)" };
        continue;
      }
      if (!child.isDirectory) continue;
      const cardRel = `${rel}/card.json`;
      if (cardLayoutOf(cardRel) !== "per-kid") continue;
      const got = readRegularFile(join(cardsDir, cardRel), MAX_CARD_BYTES);
      if (got instanceof Uint8Array) yield { location: cardRel, bytes: got };
      else if (got !== undefined) yield { location: cardRel, problem: got.problem };
    }
  }
}

/** Options for {@linkcode openDirectoryGateInput}. */
export interface DirectoryGateOptions {
  /** Path of `log.jsonl`; sidecars are looked up next to it under `signatures/`. */
  logPath: string;
  /** The cards folder (`.sdd/agents`). */
  cardsDir: string;
  /** The operator key; absent skips the HMAC check. */
  operatorKey?: Uint8Array;
  /**
   * Check the log against its checkpoints (next to the log) and report orphaned sidecars
   * (default true).
   */
  checkpoints?: boolean;
  /** The operator's public key, to check checkpoint signatures with. */
  operatorPublicKey?: Uint8Array;
  /** Checkpoint documents kept elsewhere, to check the log against too. */
  externalCheckpoints?: readonly { name: string; bytes: Uint8Array }[];
  /** Classify the foreign attestations stored beside entries (default true). */
  attestations?: boolean;
  /** Issuer keys pinned for them: issuer key id → Ed25519 public key. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
}

/** A gate input over files, and the handle to close when the gate is done. */
export interface DirectoryGateInput {
  /** What to pass to `runLineageGate`. */
  input: GateInput;
  /** Closes the log file. */
  close(): void;
}

/**
 * Opens a lineage folder for the gate, or returns undefined when the log does not exist
 * (nothing recorded yet: the gate is skipped).
 *
 * @example
 * ```ts ignore
 * const opened = await openDirectoryGateInput({ logPath, cardsDir });
 * if (opened) try { await runLineageGate(opened.input) } finally { opened.close() }
 * ```
 */
export async function openDirectoryGateInput(
  options: DirectoryGateOptions,
): Promise<DirectoryGateInput | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(options.logPath, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const lineageDir = join(options.logPath, "..");
  const name = options.logPath.split("/").pop() ?? "log.jsonl";
  let closed = false;
  return {
    input: {
      log: file.readable,
      logName: name,
      signatures: { directory: lineageDir },
      cards: readCardDirectory(options.cardsDir),
      operatorKey: options.operatorKey,
      orphans: options.checkpoints !== false,
      foreignAttestations: options.attestations === false
        ? undefined
        : readAttestationDirectory(lineageDir),
      trustedIssuers: options.trustedIssuers,
      checkpoints: options.checkpoints === false ? undefined : readCheckpointInput({
        dir: lineageDir,
        log: "lineage",
        operatorPublicKey: options.operatorPublicKey,
        external: options.externalCheckpoints,
      }),
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        file.close();
      } catch {
        // The readable stream closes the file when it is fully consumed.
      }
    },
  };
}

// The checkpoint files can be large (32 bytes a line for the leaf record) but never huge.
const MAX_CHECKPOINTS_BYTES = 256 * 1024 * 1024;
const MAX_LEAVES_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/** Options for {@linkcode readCheckpointInput}. */
export interface CheckpointInputOptions {
  /** The folder holding `checkpoints.jsonl` and `checkpoint-leaves.bin`. */
  dir: string;
  /** Which log they are of. */
  log: CheckpointLog;
  /** The operator's public key; absent: signatures are reported unverifiable. */
  operatorPublicKey?: Uint8Array;
  /** Checkpoint documents kept elsewhere (an auditor's copy), to check the log against too. */
  external?: readonly { name: string; bytes: Uint8Array }[];
}

/**
 * Reads a log folder's checkpoints for the gate (FORMATS.md §8): the reviewed
 * `checkpoints.jsonl` (absent when there is none), the committed leaf record, and external
 * checkpoint documents with their signatures checked against the operator key.
 */
export function readCheckpointInput(options: CheckpointInputOptions): GateCheckpointInput {
  const fileName = "checkpoints.jsonl";
  const input: GateCheckpointInput = { fileName, externalProblems: [], external: [] };
  const file = readRegularFile(join(options.dir, fileName), MAX_CHECKPOINTS_BYTES);
  if (file instanceof Uint8Array) {
    input.review = reviewCheckpointFile(file, {
      name: fileName,
      log: options.log,
      publicKey: options.operatorPublicKey,
    });
  } else if (file !== undefined) {
    input.externalProblems?.push({
      kind: "invalid checkpoint",
      message: `${fileName}: invalid checkpoint: ${file.problem}`,
    });
  }
  const leavesName = "checkpoint-leaves.bin";
  const leaves = readRegularFile(join(options.dir, leavesName), MAX_LEAVES_BYTES);
  input.committed = leaves instanceof Uint8Array
    ? { name: leavesName, digests: leaves, count: Math.floor(leaves.length / 32) }
    : { name: leavesName, problem: leaves === undefined ? "is missing" : leaves.problem };
  for (const e of options.external ?? []) {
    const checked = externalCheckpoint(e, options);
    if ("problem" in checked) input.externalProblems?.push(checked.problem);
    else input.external?.push(checked.checkpoint);
  }
  return input;
}

/** A checkpoint document from elsewhere, checked: well-formed, this log, signed by the key. */
export function externalCheckpoint(
  doc: { name: string; bytes: Uint8Array },
  options: { log: CheckpointLog; operatorPublicKey?: Uint8Array },
): { checkpoint: CheckpointUnderTest } | { problem: CheckpointFileProblem } {
  const parsed = parseCheckpointDocument(doc.bytes);
  const fail = (kind: CheckpointFileProblem["kind"], text: string) => ({
    problem: { kind, message: `${doc.name}: ${kind}: ${text}` },
  });
  if (!parsed.ok) return fail("invalid checkpoint", parsed.problem);
  const c = parsed.document.checkpoint;
  if (c.log !== options.log) {
    return fail("invalid checkpoint", `is a checkpoint of the ${c.log} log, not ${options.log}`);
  }
  let embedded: Uint8Array;
  try {
    embedded = decodePublicKeyPem(parsed.document.operator_public_key);
  } catch (error) {
    return fail("invalid checkpoint", `operator_public_key: ${(error as Error).message}`);
  }
  const key = options.operatorPublicKey ?? embedded;
  if (!verifyCheckpointSignature({ checkpoint: c, jws: parsed.jws }, key)) {
    return fail(
      "checkpoint signature invalid",
      `does not verify with ${options.operatorPublicKey ? "the operator key" : "its own key"}`,
    );
  }
  return { checkpoint: { checkpoint: c, where: doc.name, label: `the checkpoint in ${doc.name}` } };
}

// An attestation is a small JSON envelope; anything far larger is not read.
const MAX_ATTESTATION_BYTES = 64 * 1024;
const HEX64_NAME = /^[0-9a-f]{64}$/;
const ATTESTATION_FILE = /^([0-9a-f]{64})\.json$/;

/**
 * The foreign attestations stored under `<lineageDir>/attestations/<aa>/<H>/<entry-hex>/`
 * (FORMATS.md §9), each with the entry it sits beside. A file that is not what its name (the
 * SHA-256 of its bytes) says, or not JSON, comes back with a problem: a `malformed` verdict.
 */
export function readAttestationDirectory(lineageDir: string): ForeignAttestationInput[] {
  const root = join(lineageDir, "attestations");
  const out: ForeignAttestationInput[] = [];
  for (const top of sortedEntries(root)) {
    if (!top.isDirectory || !/^[0-9a-f]{2}$/.test(top.name)) continue;
    for (const art of sortedEntries(join(root, top.name))) {
      if (!art.isDirectory || !HEX64_NAME.test(art.name)) continue;
      for (const entry of sortedEntries(join(root, top.name, art.name))) {
        if (!entry.isDirectory || !HEX64_NAME.test(entry.name)) continue;
        const dir = join(root, top.name, art.name, entry.name);
        for (const file of sortedEntries(dir)) {
          const m = ATTESTATION_FILE.exec(file.name);
          if (m === null) continue;
          const location = `attestations/${top.name}/${art.name}/${entry.name}/${file.name}`;
          const entryHash = `sha256:${entry.name}`;
          const got = readRegularFile(join(dir, file.name), MAX_ATTESTATION_BYTES);
          out.push(attestationInput(entryHash, location, m[1], got));
        }
      }
    }
  }
  return out;
}

/** One attestation file as the gate takes it: parsed, or with the problem that stopped it. */
export function attestationInput(
  entryHash: string,
  location: string,
  nameHex: string,
  got: SignatureFetch,
): ForeignAttestationInput {
  if (got === undefined) return { entry_hash: entryHash, location, problem: "vanished" };
  if (!(got instanceof Uint8Array)) {
    return { entry_hash: entryHash, location, problem: got.problem };
  }
  if (sha256Hex(got) !== nameHex) {
    return {
      entry_hash: entryHash,
      location,
      bytes: got,
      problem: "its bytes do not hash to its name (changed after it was stored)",
    };
  }
  try {
    return { entry_hash: entryHash, location, bytes: got, attestation: parseJsonBytes(got) };
  } catch (error) {
    return {
      entry_hash: entryHash,
      location,
      bytes: got,
      problem: `not JSON: ${(error as Error).message}`,
    };
  }
}
