// Signed checkpoints of an append-only line log (FORMATS.md §8), on the model of Certificate
// Transparency's signed tree heads and Sigstore's checkpoints: `{log, root, size, ts}` — the
// RFC 9162 root of the log's first `size` lines — signed by the operator's Ed25519 key as a
// detached JWS. The line format of `checkpoints.jsonl`, the exported checkpoint document
// (with consistency proofs), and the batch inclusion proof a compliance pack carries. Pure.
import {
  canonicalBytes,
  fromHex,
  type JsonObject,
  type JsonValue,
  parseCanonicalLine,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import { encodePublicKeyPem } from "./pem.ts";
import {
  type ParsedDetachedJws,
  parseDetachedJws,
  signDetachedJws,
  verifyDetachedJws,
} from "./jws.ts";
import { MERKLE_HASH_BYTES } from "./merkle.ts";

/** The logs that carry checkpoints. */
export const CHECKPOINT_LOGS = ["lineage", "audit"] as const;

/** One of {@linkcode CHECKPOINT_LOGS}. */
export type CheckpointLog = typeof CHECKPOINT_LOGS[number];

/** What a checkpoint commits to (the signed body). */
export interface Checkpoint {
  /** Which log. */
  log: CheckpointLog;
  /** RFC 9162 root of the first `size` lines, 64 lowercase hex. */
  root: string;
  /** Lines covered. */
  size: number;
  /** When it was made: `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC). */
  ts: string;
}

/** A checkpoint with its signature: one line of `checkpoints.jsonl`. */
export interface SignedCheckpoint extends Checkpoint {
  /** Compact detached JWS (RFC 7797, EdDSA) by the operator key over the body's `canon` bytes. */
  signature: string;
}

/** An operator signing key as the checkpoint writer needs it. */
export interface CheckpointSigner {
  /** 32-byte Ed25519 seed. */
  seed: Uint8Array;
  /** 32-byte public key. */
  publicKey: Uint8Array;
  /** Its kid (first 16 hex of SHA-256 of the SPKI DER). */
  kid: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const LINE_FIELDS = ["log", "root", "signature", "size", "ts"];

/** The signed bytes: `canon` of `{log, root, size, ts}`. */
export function checkpointBody(c: Checkpoint): Uint8Array {
  return canonicalBytes({ log: c.log, root: c.root, size: c.size, ts: c.ts }, "canon");
}

/** Signs a checkpoint with the operator key. */
export function signCheckpoint(c: Checkpoint, signer: CheckpointSigner): SignedCheckpoint {
  const problem = checkpointProblem(c);
  if (problem !== undefined) throw new RangeError(`checkpoint ${problem}`);
  const signature = signDetachedJws(signer.seed, checkpointBody(c), { kid: signer.kid });
  return { log: c.log, root: c.root, size: c.size, ts: c.ts, signature };
}

/** The `canon` bytes of a checkpoints.jsonl line (without its `\n`). */
export function checkpointLineBytes(c: SignedCheckpoint): Uint8Array {
  return canonicalBytes(signedCheckpointJson(c), "canon");
}

/** A signed checkpoint as a JSON object. */
export function signedCheckpointJson(c: SignedCheckpoint): JsonObject {
  return { log: c.log, root: c.root, signature: c.signature, size: c.size, ts: c.ts };
}

function checkpointProblem(c: Checkpoint): string | undefined {
  if (!(CHECKPOINT_LOGS as readonly string[]).includes(c.log)) {
    return `log must be one of ${CHECKPOINT_LOGS.join(", ")}`;
  }
  if (typeof c.root !== "string" || !HEX64.test(c.root)) return "root must be 64 lowercase hex";
  if (!Number.isSafeInteger(c.size) || c.size < 0) return "size must be a whole number ≥ 0";
  if (typeof c.ts !== "string" || !TS.test(c.ts)) {
    return "ts must be YYYY-MM-DDTHH:MM:SS.ffffffZ";
  }
  return undefined;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function intOf(v: JsonValue | undefined): number | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "bigint" && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return undefined;
}

/** A parsed checkpoint, or why it is not one. */
export type ParsedCheckpoint =
  | { ok: true; checkpoint: SignedCheckpoint; jws: ParsedDetachedJws }
  | { ok: false; problem: string };

/** Validates a JSON value as a signed checkpoint (exact field set, types, JWS shape). */
export function parseSignedCheckpoint(value: JsonValue): ParsedCheckpoint {
  if (!isObject(value)) return { ok: false, problem: "not a JSON object" };
  const keys = Object.keys(value).sort();
  if (keys.join(",") !== LINE_FIELDS.join(",")) {
    return {
      ok: false,
      problem: `fields are [${keys.join(", ")}], expected exactly [${LINE_FIELDS.join(", ")}]`,
    };
  }
  const size = intOf(value.size);
  const c = {
    log: value.log,
    root: value.root,
    size: size ?? -1,
    ts: value.ts,
  } as Checkpoint;
  const problem = checkpointProblem(c);
  if (problem !== undefined) return { ok: false, problem };
  if (typeof value.signature !== "string") {
    return { ok: false, problem: "signature is not a string" };
  }
  let jws: ParsedDetachedJws;
  try {
    jws = parseDetachedJws(value.signature);
  } catch (error) {
    return { ok: false, problem: `signature: ${(error as Error).message}` };
  }
  return { ok: true, checkpoint: { ...c, signature: value.signature }, jws };
}

/** Parses one checkpoints.jsonl line (its `canon` bytes without `\n`). */
export function parseCheckpointLine(bytes: Uint8Array): ParsedCheckpoint {
  const parsed = parseCanonicalLine(bytes, "canon");
  if (!parsed.ok) return { ok: false, problem: `${parsed.reason}: ${parsed.detail}` };
  return parseSignedCheckpoint(parsed.value);
}

/** True when the checkpoint's signature verifies with `publicKey`. */
export function verifyCheckpointSignature(
  parsed: { checkpoint: SignedCheckpoint; jws: ParsedDetachedJws },
  publicKey: Uint8Array,
): boolean {
  return verifyDetachedJws(parsed.jws, {
    payload: checkpointBody(parsed.checkpoint),
    publicKey,
  });
}

/** One line of a checkpoints file as read. */
export interface CheckpointFileLine {
  /** 1-based line. */
  line: number;
  /** The checkpoint, when the line is one. */
  parsed: ParsedCheckpoint;
}

/**
 * Splits a checkpoints.jsonl file into its lines and parses each; a last line without `\n`
 * is reported as torn.
 */
export function readCheckpointLines(bytes: Uint8Array): {
  lines: CheckpointFileLine[];
  torn: boolean;
} {
  const lines: CheckpointFileLine[] = [];
  let start = 0;
  let n = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    n++;
    if (nl < 0) return { lines, torn: true };
    lines.push({ line: n, parsed: parseCheckpointLine(bytes.subarray(start, nl)) });
    start = nl + 1;
  }
  return { lines, torn: false };
}

/** Hex of a 32-byte Merkle hash. */
export function merkleHashHex(hash: Uint8Array): string {
  return toHex(hash);
}

/** The 32 bytes of a 64-hex Merkle hash, or undefined when it is not one. */
export function merkleHashOfHex(text: JsonValue | undefined): Uint8Array | undefined {
  return typeof text === "string" && HEX64.test(text) ? fromHex(text) : undefined;
}

/** A consistency proof carried by a checkpoint document: from an older size to this one. */
export interface CarriedConsistencyProof {
  /** The older tree's size. */
  from_size: number;
  /** The older tree's root (64 hex). */
  from_root: string;
  /** RFC 9162 PROOF(from_size, D[0:size]), hex, in order. */
  proof: string[];
}

/** The checkpoint document: what `… checkpoint --out` exports and a pack carries. */
export interface CheckpointDocument {
  /** The signed checkpoint. */
  checkpoint: SignedCheckpoint;
  /** The operator's public key (SPKI PEM) the checkpoint claims to be signed by. */
  operator_public_key: string;
  /** Proofs that older checkpoints are prefixes of this one. */
  consistency: CarriedConsistencyProof[];
}

/** `schema` of a checkpoint document. */
export const CHECKPOINT_DOCUMENT_SCHEMA = "bernstein-checkpoint";

/** The bytes of a checkpoint document: `canon` JSON and a newline. */
export function renderCheckpointDocument(doc: {
  checkpoint: SignedCheckpoint;
  operatorPublicKey: Uint8Array;
  consistency?: CarriedConsistencyProof[];
}): Uint8Array {
  const value: JsonObject = {
    schema: CHECKPOINT_DOCUMENT_SCHEMA,
    checkpoint: signedCheckpointJson(doc.checkpoint),
    operator_public_key: encodePublicKeyPem(doc.operatorPublicKey),
    consistency: (doc.consistency ?? []).map((p) => ({
      from_size: p.from_size,
      from_root: p.from_root,
      proof: [...p.proof],
    })),
  };
  const bytes = canonicalBytes(value, "canon");
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = 0x0a;
  return out;
}

/** A parsed checkpoint document, or the problems that stopped it. */
export type ParsedCheckpointDocument =
  | { ok: true; document: CheckpointDocument; jws: ParsedDetachedJws }
  | { ok: false; problem: string };

/**
 * Parses a checkpoint document (any JSON spacing: auditors may reformat it; the signature
 * covers the checkpoint's own canonical body). Exactly the fields `schema`, `checkpoint`,
 * `operator_public_key`, `consistency`.
 */
export function parseCheckpointDocument(bytes: Uint8Array): ParsedCheckpointDocument {
  let value: JsonValue;
  try {
    value = parseJsonBytes(bytes);
  } catch (error) {
    return { ok: false, problem: `not valid JSON: ${(error as Error).message}` };
  }
  if (!isObject(value)) return { ok: false, problem: "not a JSON object" };
  const keys = Object.keys(value).sort().join(",");
  if (keys !== "checkpoint,consistency,operator_public_key,schema") {
    return {
      ok: false,
      problem: `fields are [${
        Object.keys(value).sort().join(", ")
      }], expected [checkpoint, consistency, operator_public_key, schema]`,
    };
  }
  if (value.schema !== CHECKPOINT_DOCUMENT_SCHEMA) {
    return { ok: false, problem: `schema is not ${JSON.stringify(CHECKPOINT_DOCUMENT_SCHEMA)}` };
  }
  const parsed = parseSignedCheckpoint(value.checkpoint ?? null);
  if (!parsed.ok) return { ok: false, problem: `checkpoint: ${parsed.problem}` };
  if (typeof value.operator_public_key !== "string") {
    return { ok: false, problem: "operator_public_key must be a PEM string" };
  }
  if (!Array.isArray(value.consistency)) {
    return { ok: false, problem: "consistency must be a list" };
  }
  const consistency: CarriedConsistencyProof[] = [];
  for (const [i, p] of value.consistency.entries()) {
    const from = isObject(p) ? intOf(p.from_size) : undefined;
    const root = isObject(p) ? p.from_root : undefined;
    const proof = isObject(p) ? p.proof : undefined;
    if (
      !isObject(p) || Object.keys(p).sort().join(",") !== "from_root,from_size,proof" ||
      from === undefined || from < 0 || typeof root !== "string" || !HEX64.test(root) ||
      !Array.isArray(proof) || proof.some((h) => typeof h !== "string" || !HEX64.test(h))
    ) {
      return {
        ok: false,
        problem: `consistency[${i}] must be {from_size, from_root (64 hex), proof: [64 hex]}`,
      };
    }
    consistency.push({ from_size: from, from_root: root, proof: proof as string[] });
  }
  return {
    ok: true,
    jws: parsed.jws,
    document: {
      checkpoint: parsed.checkpoint,
      operator_public_key: value.operator_public_key,
      consistency,
    },
  };
}

/** `schema` of a pack's batch inclusion proof. */
export const INCLUSION_BATCH_SCHEMA = "bernstein-inclusion-batch";

/**
 * A batch inclusion proof: the leaf indices of some lines (as runs `[first, count]`, in log
 * order) and the hashes that rebuild the root of the tree of `tree_size` from them
 * (`MerkleTree.batchProof`).
 */
export interface InclusionBatch {
  /** The tree the proof is for (the checkpoint's size). */
  tree_size: number;
  /** Runs of consecutive leaf indices, `[first, count]`, ascending and disjoint. */
  leaf_ranges: [number, number][];
  /** The proof hashes, hex, in order. */
  proof: string[];
}

/** Leaf indices (ascending) as runs `[first, count]`. */
export function indexRanges(indices: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const i of indices) {
    const last = out.at(-1);
    if (last !== undefined && last[0] + last[1] === i) last[1]++;
    else out.push([i, 1]);
  }
  return out;
}

/** The bytes of a batch inclusion proof: `canon` JSON and a newline. */
export function renderInclusionBatch(batch: InclusionBatch): Uint8Array {
  const value: JsonObject = {
    schema: INCLUSION_BATCH_SCHEMA,
    tree_size: batch.tree_size,
    leaf_ranges: batch.leaf_ranges.map(([a, b]) => [a, b]),
    proof: [...batch.proof],
  };
  const bytes = canonicalBytes(value, "canon");
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = 0x0a;
  return out;
}

/** Parses a batch inclusion proof; its leaf indices come back expanded, ascending. */
export function parseInclusionBatch(
  bytes: Uint8Array,
  maxLeaves: number,
): { ok: true; batch: InclusionBatch; indices: number[] } | { ok: false; problem: string } {
  let value: JsonValue;
  try {
    value = parseJsonBytes(bytes);
  } catch (error) {
    return { ok: false, problem: `not valid JSON: ${(error as Error).message}` };
  }
  if (!isObject(value)) return { ok: false, problem: "not a JSON object" };
  if (Object.keys(value).sort().join(",") !== "leaf_ranges,proof,schema,tree_size") {
    return { ok: false, problem: "fields must be exactly schema, tree_size, leaf_ranges, proof" };
  }
  if (value.schema !== INCLUSION_BATCH_SCHEMA) {
    return { ok: false, problem: `schema is not ${JSON.stringify(INCLUSION_BATCH_SCHEMA)}` };
  }
  const size = intOf(value.tree_size);
  if (size === undefined || size < 0) return { ok: false, problem: "tree_size must be ≥ 0" };
  if (!Array.isArray(value.leaf_ranges)) {
    return { ok: false, problem: "leaf_ranges must be a list" };
  }
  const indices: number[] = [];
  const ranges: [number, number][] = [];
  let next = 0;
  for (const [i, r] of value.leaf_ranges.entries()) {
    const first = Array.isArray(r) && r.length === 2 ? intOf(r[0]) : undefined;
    const count = Array.isArray(r) && r.length === 2 ? intOf(r[1]) : undefined;
    if (first === undefined || count === undefined || count < 1 || first < next) {
      return {
        ok: false,
        problem: `leaf_ranges[${i}] must be [first, count ≥ 1], ascending and disjoint`,
      };
    }
    if (first + count > size) {
      return { ok: false, problem: `leaf_ranges[${i}] reaches past the tree of ${size}` };
    }
    if (indices.length + count > maxLeaves) {
      return { ok: false, problem: `leaf_ranges name more than ${maxLeaves} leaves` };
    }
    for (let j = 0; j < count; j++) indices.push(first + j);
    ranges.push([first, count]);
    next = first + count;
  }
  if (
    !Array.isArray(value.proof) || value.proof.some((h) => typeof h !== "string" || !HEX64.test(h))
  ) {
    return { ok: false, problem: "proof must be a list of 64-hex hashes" };
  }
  return {
    ok: true,
    indices,
    batch: { tree_size: size, leaf_ranges: ranges, proof: value.proof as string[] },
  };
}

/** Hex hashes as bytes (every element must be 64 hex; checked by the parsers above). */
export function hashesOfHex(list: readonly string[]): Uint8Array[] {
  return list.map((h) => {
    const b = fromHex(h);
    if (b.length !== MERKLE_HASH_BYTES) throw new RangeError("not a 32-byte hash");
    return b;
  });
}
