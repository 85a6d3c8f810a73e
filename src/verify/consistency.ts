// `bernstein-verify consistency OLD NEW`: is the log the newer checkpoint commits to an
// extension of the one the older checkpoint committed to? Both checkpoints must be signed by
// the operator key; then the RFC 9162 consistency proof NEW carries from OLD's size must
// bridge the two roots. A log rewritten and re-checkpointed with the key cannot produce one:
// that is a fork of history, and whoever kept the older checkpoint sees it.
import {
  type CheckpointDocument,
  decodePublicKeyPem,
  hashesOfHex,
  merkleHashOfHex,
  parseCheckpointDocument,
  type ParsedDetachedJws,
  verifyCheckpointSignature,
  verifyConsistency,
} from "../crypto/mod.ts";
import type { VerifyIssue } from "./pack.ts";
import { operatorFingerprint, PACK_CHECKPOINT_MEMBER } from "../pack_format/mod.ts";
import { packZipLimits } from "./pack_limits.ts";
import { memoryBytes, readZipDirectory, readZipMember } from "./zip_reader.ts";

/** A checkpoint document or a pack holding one, as given. */
export interface CheckpointSource {
  /** Its name in messages (the path given). */
  name: string;
  /** The file's bytes. */
  bytes: Uint8Array;
}

/** Options for {@linkcode verifyCheckpointConsistency}. */
export interface ConsistencyOptions {
  /** The operator's public key obtained out of band. */
  operatorPublicKey?: Uint8Array;
  /** Its fingerprint (64 hex) obtained out of band. */
  operatorFingerprint?: string;
}

/** The verdict. */
export interface ConsistencyResult {
  /** True when NEW provably extends OLD. */
  ok: boolean;
  /** Figures. */
  stats: {
    log: string | null;
    old: { size: number; root: string; ts: string } | null;
    new: { size: number; root: string; ts: string } | null;
    operator_fingerprint: string | null;
    operator_pinned: "key" | "fingerprint" | null;
  };
  /** Failed checks. */
  errors: VerifyIssue[];
  /** Remarks. */
  notes: string[];
}

/**
 * The checkpoint document in a file given to a command: the file itself, or a compliance
 * pack's `checkpoint.json`; a string says why there is none.
 */
export function checkpointDocumentBytes(b: Uint8Array): Uint8Array | string {
  if (!(b[0] === 0x50 && b[1] === 0x4b)) return b;
  const zip = memoryBytes(b);
  const dir = readZipDirectory(zip, packZipLimits());
  if (dir.problems.length > 0) return `not a readable pack: ${dir.problems[0].message}`;
  const member = dir.members.find((m) => m.name === PACK_CHECKPOINT_MEMBER);
  if (member === undefined) return `a pack without ${PACK_CHECKPOINT_MEMBER} (pack format 2)`;
  try {
    return readZipMember(zip, member);
  } catch (error) {
    return `${PACK_CHECKPOINT_MEMBER}: ${(error as Error).message}`;
  }
}

interface Side {
  doc: CheckpointDocument;
  jws: ParsedDetachedJws;
  key: Uint8Array;
}

/**
 * Checks that the checkpoint in `newer` extends the one in `older` (same log, both signed by
 * the operator key, and a consistency proof in `newer` from `older`'s size that verifies).
 *
 * @example
 * ```ts ignore
 * const r = verifyCheckpointConsistency(
 *   { name: "old.json", bytes: oldBytes }, { name: "new.json", bytes: newBytes },
 *   { operatorFingerprint: hex });
 * r.ok; // false: "fork of history"
 * ```
 */
export function verifyCheckpointConsistency(
  older: CheckpointSource,
  newer: CheckpointSource,
  options: ConsistencyOptions = {},
): ConsistencyResult {
  const result: ConsistencyResult = {
    ok: false,
    stats: {
      log: null,
      old: null,
      new: null,
      operator_fingerprint: null,
      operator_pinned: options.operatorPublicKey !== undefined
        ? "key"
        : options.operatorFingerprint !== undefined
        ? "fingerprint"
        : null,
    },
    errors: [],
    notes: [],
  };
  const fail = (kind: string, message: string) => result.errors.push({ kind, message });
  const read = (source: CheckpointSource): Side | undefined => {
    const bytes = checkpointDocumentBytes(source.bytes);
    if (typeof bytes === "string") {
      fail("invalid checkpoint", `${source.name}: invalid checkpoint: ${bytes}`);
      return undefined;
    }
    const parsed = parseCheckpointDocument(bytes);
    if (!parsed.ok) {
      fail("invalid checkpoint", `${source.name}: invalid checkpoint: ${parsed.problem}`);
      return undefined;
    }
    let key: Uint8Array;
    try {
      key = decodePublicKeyPem(parsed.document.operator_public_key);
    } catch (error) {
      fail(
        "invalid checkpoint",
        `${source.name}: invalid checkpoint: operator_public_key: ${(error as Error).message}`,
      );
      return undefined;
    }
    return { doc: parsed.document, jws: parsed.jws, key };
  };
  const o = read(older);
  const n = read(newer);
  if (o === undefined || n === undefined) return result;
  const oc = o.doc.checkpoint;
  const nc = n.doc.checkpoint;
  result.stats.log = nc.log;
  result.stats.old = { size: oc.size, root: oc.root, ts: oc.ts };
  result.stats.new = { size: nc.size, root: nc.root, ts: nc.ts };
  // Who signed: the pinned key, or else the newer document's key (and the older must agree).
  const key = options.operatorPublicKey ?? n.key;
  const fp = operatorFingerprint(key);
  result.stats.operator_fingerprint = fp;
  if (options.operatorFingerprint !== undefined && fp !== options.operatorFingerprint) {
    fail(
      "operator key mismatch",
      `${newer.name}: operator key mismatch: signed by ${fp}, --operator-fingerprint is ${options.operatorFingerprint}`,
    );
  }
  for (const [side, source] of [[o, older], [n, newer]] as const) {
    if (operatorFingerprint(side.key) !== fp) {
      fail(
        "operator key mismatch",
        `${source.name}: operator key mismatch: it names key ${
          operatorFingerprint(side.key)
        }, not ${fp}`,
      );
    } else if (
      !verifyCheckpointSignature({ checkpoint: side.doc.checkpoint, jws: side.jws }, key)
    ) {
      fail(
        "checkpoint signature invalid",
        `${source.name}: checkpoint signature invalid: does not verify with the operator key ${fp}`,
      );
    }
  }
  if (oc.log !== nc.log) {
    fail(
      "invalid checkpoint",
      `${newer.name}: invalid checkpoint: it is of the ${nc.log} log, ${older.name} of the ${oc.log} log`,
    );
  }
  if (result.errors.length > 0) return result;
  const oldRoot = merkleHashOfHex(oc.root) as Uint8Array;
  const newRoot = merkleHashOfHex(nc.root) as Uint8Array;
  const fork = (why: string) =>
    fail(
      "fork of history",
      `${newer.name}: fork of history: the ${nc.log} log of this checkpoint (size ${nc.size}, ${nc.ts}) is not an extension of the one in ${older.name} (size ${oc.size}, ${oc.ts}): ${why}`,
    );
  if (nc.size < oc.size) {
    fork(`it is shorter`);
  } else if (nc.size === oc.size || oc.size === 0) {
    if (!verifyConsistency([], { oldSize: oc.size, oldRoot, newSize: nc.size, newRoot })) {
      fork("same size, different root");
    }
  } else {
    const carried = n.doc.consistency.filter((p) => p.from_size === oc.size);
    if (carried.length === 0) {
      fail(
        "consistency proof missing",
        `${newer.name}: consistency proof missing: it carries no proof from size ${oc.size} (ask the operator for 'bernstein lineage checkpoint --out NEW --from ${older.name}')`,
      );
    } else {
      const proof = carried.find((p) => p.from_root === oc.root);
      if (proof === undefined) {
        fork(`its proof from size ${oc.size} starts from another root than ${older.name}'s`);
      } else if (
        !verifyConsistency(hashesOfHex(proof.proof), {
          oldSize: oc.size,
          oldRoot,
          newSize: nc.size,
          newRoot,
        })
      ) {
        fork("the consistency proof does not bridge the two roots");
      }
    }
  }
  if (result.stats.operator_pinned === null) {
    result.notes.push(
      "operator key not pinned: the checkpoints were checked against the key in the newer document; pass --operator-fingerprint HEX (obtained out of band) to check who signed them",
    );
  }
  result.ok = result.errors.length === 0;
  return result;
}
