// The pack builder, pure: window entries, their signatures, the agents' cards, the Article 12
// block and the operator key in; member bytes, the signed manifest and the ZIP out. The same
// inputs give the same bytes (Ed25519 signatures are deterministic; nothing reads a clock).
import { canonicalBytes, type JsonObject } from "../canonical/mod.ts";
import {
  encodePublicKeyPem,
  indexRanges,
  MERKLE_HASH_BYTES,
  merkleHashHex,
  merkleLeafHash,
  type MerkleTree,
  renderCheckpointDocument,
  renderInclusionBatch,
  sha256Hex,
  signDetachedJws,
  type SignedCheckpoint,
} from "../crypto/mod.ts";
import { digestInto, kidForPublicKey, type LineageEntry } from "../lineage/mod.ts";
import {
  cardMemberName,
  csvHeader,
  csvRow,
  type LogFacts,
  LogFactsCollector,
  manifestOutputHash,
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_FORMAT_VERSION,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
  PACK_SCHEMA,
  signatureMemberName,
} from "../verify/mod.ts";
import { renderReadme, renderVerifyInstructions } from "./documents.ts";
import { CompliancePackError } from "./errors.ts";
import { zipMembers } from "./zip_writer.ts";

/** One entry of the window: its exact log line, the parsed entry, its hash and signature. */
export interface PackEntry {
  /** The line as it is in `log.jsonl`, without its newline. */
  line: Uint8Array;
  /** The parsed entry. */
  entry: LineageEntry;
  /** `sha256:` of `line`. */
  hash: string;
  /** The sidecar JWS bytes; undefined when the log has none (the pack then fails). */
  signature: Uint8Array | undefined;
}

/** One agent card to embed. */
export interface PackCard {
  /** The card body's agent id. */
  agent_id: string;
  /** The card body's kid. */
  kid: string;
  /** The card file's bytes, as found. */
  bytes: Uint8Array;
}

/** The operator's Ed25519 signing key. */
export interface OperatorSigner {
  /** 32-byte seed. */
  seed: Uint8Array;
  /** 32-byte public key. */
  publicKey: Uint8Array;
}

/** The pack's checkpoint members (FORMATS.md §8): the document and the window's inclusion proof. */
export interface PackCheckpoint {
  /** `checkpoint.json`. */
  document: Uint8Array;
  /** `inclusion-proof.json`. */
  inclusion: Uint8Array;
}

/**
 * The checkpoint members of a pack: the operator's checkpoint of the whole log and the batch
 * proof that places every window entry (by its leaf index) in its tree. Throws
 * {@linkcode CompliancePackError} when a window entry is not the line the tree committed to.
 */
export function packCheckpointMembers(options: {
  checkpoint: SignedCheckpoint;
  tree: MerkleTree;
  entries: readonly { hash: string; leaf: number }[];
  operatorPublicKey: Uint8Array;
}): PackCheckpoint {
  const { checkpoint, tree, entries } = options;
  const leaf = new Uint8Array(MERKLE_HASH_BYTES);
  const digest = new Uint8Array(MERKLE_HASH_BYTES);
  for (const e of entries) {
    const committed = e.leaf < checkpoint.size ? tree.leaf(e.leaf) : undefined;
    if (!digestInto(e.hash, digest) || committed === undefined) {
      throw new CompliancePackError(
        "compliance.not_checkpointed",
        `entry ${e.hash} (log line ${
          e.leaf + 1
        }) is not covered by the checkpoint of size ${checkpoint.size}`,
      );
    }
    merkleLeafHash(digest, 0, leaf);
    if (merkleHashHex(leaf) !== merkleHashHex(committed)) {
      throw new CompliancePackError(
        "compliance.log_changed",
        `log line ${e.leaf + 1} is not the line the checkpoint committed to; the log changed`,
        { hint: "run 'bernstein lineage gate' to see what changed" },
      );
    }
  }
  const indices = entries.map((e) => e.leaf);
  return {
    document: renderCheckpointDocument({
      checkpoint,
      operatorPublicKey: options.operatorPublicKey,
    }),
    inclusion: renderInclusionBatch({
      tree_size: checkpoint.size,
      leaf_ranges: indexRanges(indices),
      proof: tree.batchProof(indices, checkpoint.size).map(merkleHashHex),
    }),
  };
}

/** Everything the pack holds, before it is sealed. */
export interface PackContent {
  /** Organisation the pack is for. */
  org: string;
  /** First UTC day (YYYY-MM-DD). */
  since: string;
  /** Last UTC day (YYYY-MM-DD). */
  until: string;
  /** `--build-time` / `SOURCE_DATE_EPOCH` as ISO 8601, or null. */
  builtAt: string | null;
  /** `bernstein <version>`. */
  builder: string;
  /** The window's entries in log order. */
  entries: readonly PackEntry[];
  /** Parents named by window entries that precede the window (sorted by the builder). */
  externalParents: readonly string[];
  /** Cards of every (agent_id, kid) that signed a window entry. */
  cards: readonly PackCard[];
  /** The `article12` block (see `buildArticle12`). */
  article12: JsonObject;
  /** The operator's public key (embedded as `operator.pub`). */
  operatorPublicKey: Uint8Array;
  /** The checkpoint members ({@linkcode packCheckpointMembers}). */
  checkpoint: PackCheckpoint;
}

/** Members of an unsealed pack and the manifest fields that do not depend on the hashes. */
export interface RenderedPack {
  /** Every member except the manifest and its signature. */
  members: Map<string, Uint8Array>;
  /** The manifest without `input_hashes` and `output_hash`. */
  manifestBase: JsonObject;
  /** The window's facts. */
  facts: LogFacts;
}

/** A sealed pack. */
export interface SealedPack {
  /** Every member, the manifest and its signature included. */
  members: Map<string, Uint8Array>;
  /** The manifest as written. */
  manifest: JsonObject;
  /** Its bytes. */
  manifestBytes: Uint8Array;
}

const encoder = new TextEncoder();

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The facts of a window's entries. */
export function windowFacts(entries: readonly PackEntry[]): LogFacts {
  const collector = new LogFactsCollector();
  for (const e of entries) collector.add(e.entry);
  return collector.facts();
}

/** Renders every member but the manifest and its signature. */
export function renderPackMembers(content: PackContent): RenderedPack {
  const members = new Map<string, Uint8Array>();
  const put = (name: string, bytes: Uint8Array) => {
    if (members.has(name)) {
      throw new CompliancePackError(
        "compliance.member_clash",
        `two pack members would be named ${name}`,
      );
    }
    members.set(name, bytes);
  };
  const facts = windowFacts(content.entries);
  let logSize = 0;
  for (const e of content.entries) logSize += e.line.length + 1;
  const log = new Uint8Array(logSize);
  const csv: string[] = [csvHeader()];
  let at = 0;
  for (const e of content.entries) {
    log.set(e.line, at);
    log[at + e.line.length] = 0x0a;
    at += e.line.length + 1;
    csv.push(csvRow(e.entry));
    if (e.signature !== undefined && !members.has(signatureMemberName(e.hash))) {
      put(signatureMemberName(e.hash), e.signature);
    }
  }
  put(PACK_MEMBERS.log, log);
  put(PACK_MEMBERS.csv, encoder.encode(csv.join("")));
  for (const card of content.cards) put(cardMemberName(card.agent_id, card.kid), card.bytes);
  put(PACK_MEMBERS.operatorKey, encoder.encode(encodePublicKeyPem(content.operatorPublicKey)));
  put(PACK_CHECKPOINT_MEMBER, content.checkpoint.document);
  put(PACK_INCLUSION_MEMBER, content.checkpoint.inclusion);
  const signatureCount = [...members.keys()].filter((n) => n.startsWith("signatures/")).length;
  const kid = kidForPublicKey(content.operatorPublicKey);
  const fingerprint = operatorFingerprint(content.operatorPublicKey);
  put(
    PACK_MEMBERS.readme,
    encoder.encode(renderReadme({
      org: content.org,
      since: content.since,
      until: content.until,
      builder: content.builder,
      builtAt: content.builtAt,
      facts,
      article12: content.article12,
      operatorKid: kid,
      operatorFingerprint: fingerprint,
      signatureCount,
      cardCount: content.cards.length,
    })),
  );
  put(PACK_MEMBERS.instructions, encoder.encode(renderVerifyInstructions()));
  const manifestBase: JsonObject = {
    schema: PACK_SCHEMA,
    pack_format_version: PACK_FORMAT_VERSION,
    builder: content.builder,
    org: content.org,
    period: { since: content.since, until: content.until },
    built_at: content.builtAt,
    entry_count: content.entries.length,
    external_parents: [...content.externalParents].sort(byCodeUnit),
    article12: content.article12,
    operator: { kid, public_key_sha256: fingerprint },
  };
  return { members, manifestBase, facts };
}

/**
 * Seals members: the manifest gets `input_hashes` of every member and its `output_hash`, and
 * the operator signs its bytes (detached JWS, FORMATS.md §4 rules).
 */
export function sealPack(
  members: ReadonlyMap<string, Uint8Array>,
  manifestBase: JsonObject,
  signer: OperatorSigner,
): SealedPack {
  const inputHashes: JsonObject = {};
  for (const name of [...members.keys()].sort(byCodeUnit)) {
    if (name === PACK_MEMBERS.manifest || name === PACK_MEMBERS.manifestSignature) continue;
    inputHashes[name] = "sha256:" + sha256Hex(members.get(name) as Uint8Array);
  }
  const manifest: JsonObject = { ...manifestBase, input_hashes: inputHashes };
  manifest.output_hash = manifestOutputHash(manifest);
  const manifestBytes = canonicalBytes(manifest, "canon");
  const jws = signDetachedJws(signer.seed, manifestBytes, {
    kid: kidForPublicKey(signer.publicKey),
  });
  const out = new Map(members);
  out.set(PACK_MEMBERS.manifest, manifestBytes);
  out.set(PACK_MEMBERS.manifestSignature, encoder.encode(jws));
  return { members: out, manifest, manifestBytes };
}

/** A built pack: the ZIP and what went into it. */
export interface BuiltPack extends SealedPack {
  /** The ZIP bytes. */
  zip: Uint8Array;
  /** The window's facts. */
  facts: LogFacts;
}

/**
 * Builds the whole pack: members, sealed manifest, reproducible ZIP.
 *
 * @example
 * ```ts
 * const pack = buildPack(content, signer);
 * await Deno.writeFile("pack.zip", pack.zip);
 * ```
 */
export function buildPack(content: PackContent, signer: OperatorSigner): BuiltPack {
  if (operatorFingerprint(content.operatorPublicKey) !== operatorFingerprint(signer.publicKey)) {
    throw new CompliancePackError(
      "compliance.operator_key_mismatch",
      "the embedded operator key is not the signing key's public half",
    );
  }
  const rendered = renderPackMembers(content);
  const sealed = sealPack(rendered.members, rendered.manifestBase, signer);
  return { ...sealed, zip: zipMembers(sealed.members), facts: rendered.facts };
}
