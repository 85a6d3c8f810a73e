// The pack builder, pure: window entries, their signatures, the agents' cards, the Article 12
// block and the operator key in; member bytes, the signed manifest and the ZIP out. The same
// inputs give the same bytes (Ed25519 signatures are deterministic; nothing reads a clock).
import {
  canonicalBytes,
  compareCodePoints,
  type JsonObject,
  type JsonValue,
} from "../canonical/mod.ts";
import {
  detachedJwsHeaderB64,
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
  signDetachedJwsInput,
  type SignedCheckpoint,
} from "../crypto/mod.ts";
import { digestInto, type LineageEntry } from "../lineage/mod.ts";
import {
  attachmentMemberParts,
  attestationMemberName,
  cardMemberName,
  csvHeader,
  csvRow,
  isManifestMember,
  type LogFacts,
  LogFactsCollector,
  type ManifestBaseField,
  manifestOutputHash,
  operatorBlock,
  PACK_CHECKPOINT_MEMBER,
  PACK_FLEET_MEMBER,
  PACK_FORMAT_VERSION,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
  PACK_SCHEMA,
  packMemberKind,
  signatureMemberName,
} from "../pack_format/mod.ts";
import { type InputHash, streamedManifestBytes } from "./_manifest_stream.ts";
import { renderReadme, renderVerifyInstructions } from "./documents.ts";
import { CompliancePackError } from "./errors.ts";
import type { CollectedWindow } from "./window_members.ts";
import {
  type PreparedMember,
  prepareMember,
  zipMembers,
  type ZipSink,
  ZipStreamWriter,
} from "./zip_writer.ts";

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
 * Checks window entries, as they come in log order, against the tree the checkpoint commits
 * to, and keeps their leaf indices for the batch proof. Throws {@linkcode CompliancePackError}
 * when an entry is not the line the tree committed to.
 */
export class CheckpointedWindow {
  #checkpoint: SignedCheckpoint;
  #tree: MerkleTree;
  #indices: number[] = [];
  #leaf = new Uint8Array(MERKLE_HASH_BYTES);
  #digest = new Uint8Array(MERKLE_HASH_BYTES);

  constructor(checkpoint: SignedCheckpoint, tree: MerkleTree) {
    this.#checkpoint = checkpoint;
    this.#tree = tree;
  }

  /** The next window entry: its hash and leaf index (0-based line number). */
  add(hash: string, leaf: number): void {
    const size = this.#checkpoint.size;
    const committed = leaf < size ? this.#tree.leaf(leaf) : undefined;
    if (!digestInto(hash, this.#digest) || committed === undefined) {
      throw new CompliancePackError(
        "compliance.not_checkpointed",
        `entry ${hash} (log line ${leaf + 1}) is not covered by the checkpoint of size ${size}`,
      );
    }
    merkleLeafHash(this.#digest, 0, this.#leaf);
    if (!sameHash(this.#leaf, committed)) {
      throw new CompliancePackError(
        "compliance.log_changed",
        `log line ${leaf + 1} is not the line the checkpoint committed to; the log changed`,
        { hint: "run 'bernstein lineage gate' to see what changed" },
      );
    }
    this.#indices.push(leaf);
  }

  /** The checkpoint members: the document and the batch proof of every entry added. */
  members(operatorPublicKey: Uint8Array): PackCheckpoint {
    const checkpoint = this.#checkpoint;
    const indices = this.#indices;
    return {
      document: renderCheckpointDocument({ checkpoint, operatorPublicKey }),
      inclusion: renderInclusionBatch({
        tree_size: checkpoint.size,
        leaf_ranges: indexRanges(indices),
        proof: this.#tree.batchProof(indices, checkpoint.size).map(merkleHashHex),
      }),
    };
  }
}

/** Two Merkle hashes compared byte by byte (no hex made per window entry). */
function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
  const window = new CheckpointedWindow(options.checkpoint, options.tree);
  for (const e of options.entries) window.add(e.hash, e.leaf);
  return window.members(options.operatorPublicKey);
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
  /** Foreign attestations of window entries, carried as they are stored (FORMATS.md §9). */
  attestations?: readonly PackAttestation[];
  /**
   * `--with-attachments`: the runs' attachment exports (FORMATS.md §7.1) as members named
   * `attachments/<run>/…` (attachmentMemberName in src/verify).
   */
  attachments?: ReadonlyMap<string, Uint8Array>;
  /** The window's fleet events, `fleet-events.jsonl` (FORMATS.md §5); absent when none. */
  fleetEvents?: Uint8Array;
}

/** One foreign attestation to carry. */
export interface PackAttestation {
  /** The entry it sits beside. */
  entryHash: string;
  /** The SHA-256 hex of its bytes (its name). */
  hex: string;
  /** Its bytes, as stored. */
  bytes: Uint8Array;
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

/** Everything a pack states besides its window's entries (see {@linkcode PackContent}). */
export type PackHeader = Omit<PackContent, "entries">;

/** A member name clash is a builder bug or a hostile card set: refused, never overwritten. */
function memberClash(name: string): CompliancePackError {
  return new CompliancePackError(
    "compliance.member_clash",
    `two pack members would be named ${name}`,
  );
}

/**
 * The members besides the window's log, CSV and signatures: README, guide, operator key and
 * agent cards, by name.
 */
function coverMembers(
  header: PackHeader,
  facts: LogFacts,
  signatureCount: number,
): Map<string, Uint8Array> {
  const members = new Map<string, Uint8Array>();
  const put = (name: string, bytes: Uint8Array) => {
    if (members.has(name)) throw memberClash(name);
    members.set(name, bytes);
  };
  for (const card of header.cards) put(cardMemberName(card.agent_id, card.kid), card.bytes);
  put(PACK_MEMBERS.operatorKey, encoder.encode(encodePublicKeyPem(header.operatorPublicKey)));
  for (const a of header.attestations ?? []) {
    put(attestationMemberName(a.entryHash, a.hex), a.bytes);
  }
  for (const [name, bytes] of header.attachments ?? []) {
    if (packMemberKind(name) !== "attachment") {
      throw new CompliancePackError(
        "compliance.bad_member",
        `${name} is not an attachment member name (attachments/<run>/…)`,
      );
    }
    put(name, bytes);
  }
  if (header.fleetEvents !== undefined && header.fleetEvents.length > 0) {
    put(PACK_FLEET_MEMBER, header.fleetEvents);
  }
  put(PACK_CHECKPOINT_MEMBER, header.checkpoint.document);
  put(PACK_INCLUSION_MEMBER, header.checkpoint.inclusion);
  put(
    PACK_MEMBERS.readme,
    encoder.encode(renderReadme({
      org: header.org,
      since: header.since,
      until: header.until,
      builder: header.builder,
      builtAt: header.builtAt,
      facts,
      article12: header.article12,
      operatorKid: operatorBlock(header.operatorPublicKey).kid,
      operatorFingerprint: operatorBlock(header.operatorPublicKey).public_key_sha256,
      signatureCount,
      cardCount: header.cards.length,
      attachmentRuns: attachmentRunsOf(header.attachments),
      fleetEventCount: lineCount(header.fleetEvents),
    })),
  );
  put(PACK_MEMBERS.instructions, encoder.encode(renderVerifyInstructions()));
  return members;
}

/** Lines (newlines) of a member, 0 when absent. */
function lineCount(bytes: Uint8Array | undefined): number {
  let n = 0;
  for (const b of bytes ?? []) if (b === 0x0a) n++;
  return n;
}

/** Run folders of the attachment members (`attachments/<run>/…`), in name order. */
function attachmentRunsOf(members: ReadonlyMap<string, Uint8Array> | undefined): string[] {
  const runs = new Set<string>();
  for (const name of members?.keys() ?? []) {
    const parts = attachmentMemberParts(name);
    if (parts !== undefined) runs.add(parts.run);
  }
  return [...runs].sort(compareCodePoints);
}

/** The manifest without `input_hashes` and `output_hash` (every other field, by type). */
function manifestBase(header: PackHeader, entryCount: number): JsonObject {
  const base: Record<ManifestBaseField, JsonValue> = {
    schema: PACK_SCHEMA,
    pack_format_version: PACK_FORMAT_VERSION,
    builder: header.builder,
    org: header.org,
    period: { since: header.since, until: header.until },
    built_at: header.builtAt,
    entry_count: entryCount,
    external_parents: [...header.externalParents].sort(byCodeUnit),
    article12: header.article12,
    operator: { ...operatorBlock(header.operatorPublicKey) },
  };
  return base;
}

/** Renders every member but the manifest and its signature. */
export function renderPackMembers(content: PackContent): RenderedPack {
  const facts = windowFacts(content.entries);
  let logSize = 0;
  for (const e of content.entries) logSize += e.line.length + 1;
  const log = new Uint8Array(logSize);
  const csv: string[] = [csvHeader()];
  const signatures = new Map<string, Uint8Array>();
  let at = 0;
  for (const e of content.entries) {
    log.set(e.line, at);
    log[at + e.line.length] = 0x0a;
    at += e.line.length + 1;
    csv.push(csvRow(e.entry));
    const name = signatureMemberName(e.hash);
    if (e.signature !== undefined && !signatures.has(name)) signatures.set(name, e.signature);
  }
  const members = coverMembers(content, facts, signatures.size);
  for (
    const [name, bytes] of [
      [PACK_MEMBERS.log, log],
      [PACK_MEMBERS.csv, encoder.encode(csv.join(""))],
      ...signatures,
    ] as [string, Uint8Array][]
  ) {
    if (members.has(name)) throw memberClash(name);
    members.set(name, bytes);
  }
  return { members, manifestBase: manifestBase(content, content.entries.length), facts };
}

/** The sealed manifest: bytes and the operator's detached JWS over them. */
interface SealedManifest {
  manifest: JsonObject;
  manifestBytes: Uint8Array;
  signature: Uint8Array;
}

/** Adds `input_hashes` (name → `sha256:` hex, any order) and `output_hash`, and signs. */
function sealManifest(
  base: JsonObject,
  inputHashes: Iterable<[string, string]>,
  signer: OperatorSigner,
): SealedManifest {
  const hashes: JsonObject = {};
  for (const [name, hash] of [...inputHashes].sort((a, b) => byCodeUnit(a[0], b[0]))) {
    if (isManifestMember(name)) continue;
    hashes[name] = hash;
  }
  const manifest: JsonObject = { ...base, input_hashes: hashes };
  manifest.output_hash = manifestOutputHash(manifest);
  const manifestBytes = canonicalBytes(manifest, "canon");
  return { manifest, manifestBytes, signature: signManifest(manifestBytes, signer) };
}

/**
 * The manifest's detached JWS (FORMATS.md §4 rules): its header names the kid of the
 * manifest's `operator` block, which the verifier compares.
 */
function signManifest(manifestBytes: Uint8Array, signer: OperatorSigner): Uint8Array {
  const { kid } = operatorBlock(signer.publicKey);
  return encoder.encode(signDetachedJws(signer.seed, manifestBytes, { kid }));
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
  const sealed = sealManifest(
    manifestBase,
    [...members].map(([name, bytes]) => [name, "sha256:" + sha256Hex(bytes)]),
    signer,
  );
  const out = new Map(members);
  out.set(PACK_MEMBERS.manifest, sealed.manifestBytes);
  out.set(PACK_MEMBERS.manifestSignature, sealed.signature);
  return { members: out, manifest: sealed.manifest, manifestBytes: sealed.manifestBytes };
}

/** What {@linkcode writePack} wrote. */
export interface WrittenPack {
  /** The archive's size in bytes. */
  bytes: number;
}

/** Options for {@linkcode writePack}. */
export interface WritePackOptions {
  /**
   * Compresses a whole member elsewhere (the builder's deflate worker: `compressMember`), the
   * same bytes as `prepareMember`; the bytes are handed over (not used again here). The
   * manifest (~16 MB at 100 000 entries) is then deflated while this thread writes the members
   * before it. Default: on this thread.
   */
  compress?: (name: string, bytes: Uint8Array) => Promise<PreparedMember>;
}

/**
 * Seals a window collected by {@linkcode WindowMembers} and writes the pack to `sink` member
 * by member: the same bytes as {@linkcode buildPack} over the same entries, without holding
 * them (only the compressed log and CSV, the signatures and the manifest).
 *
 * @example
 * ```ts ignore
 * const w = new WindowMembers();
 * for (const e of entries) w.add(e.line, e.hash, e.signature);
 * const written = await writePack(header, await w.finish(), signer, fileSink);
 * ```
 */
export async function writePack(
  header: PackHeader,
  window: CollectedWindow,
  signer: OperatorSigner,
  sink: ZipSink,
  options: WritePackOptions = {},
): Promise<WrittenPack> {
  checkSigner(header, signer);
  const cover = new Map<string, PreparedMember>();
  const rawCover = coverMembers(header, window.facts, window.signatures.count);
  for (const [name, bytes] of rawCover) cover.set(name, prepareMember(name, bytes));
  for (const name of [PACK_MEMBERS.log, PACK_MEMBERS.csv]) {
    if (cover.has(name)) throw memberClash(name);
  }
  cover.set(PACK_MEMBERS.log, window.log);
  cover.set(PACK_MEMBERS.csv, window.csv);
  const coverHashes: [string, string][] = [...cover]
    .map(([n, m]): [string, string] => [n, `sha256:${m.sha256}`])
    .sort((a, b) => compareCodePoints(a[0], b[0]));
  // Made after the JWS header, so that it is signed where it is (~16 MB not copied again).
  const { kid } = operatorBlock(signer.publicKey);
  const { bytes: manifestBytes, prefixed } = streamedManifestBytes(
    manifestBase(header, window.facts.entry_count),
    inputHashesInOrder(coverHashes, window),
    encoder.encode(detachedJwsHeaderB64(kid) + "."),
  );
  const signature = encoder.encode(signDetachedJwsInput(signer.seed, prefixed, { kid }));
  // Then the manifest's bytes are handed over to be compressed (elsewhere, when it can be)
  // while this thread writes the members before it; the archive is the same either way.
  const manifest = options.compress?.(PACK_MEMBERS.manifest, manifestBytes) ??
    Promise.resolve(prepareMember(PACK_MEMBERS.manifest, manifestBytes));
  // A rejected compression is awaited below; this only keeps it from counting as unhandled
  // if writing throws first.
  manifest.catch(() => {});
  cover.set(
    PACK_MEMBERS.manifestSignature,
    prepareMember(PACK_MEMBERS.manifestSignature, signature),
  );
  // Archive order is name order; the signatures (`signatures/…`) go in as one run.
  const writer = new ZipStreamWriter(sink);
  const names = [...cover.keys(), PACK_MEMBERS.manifest].sort(byCodeUnit);
  const before = names.filter((n) => byCodeUnit(n, "signatures/") < 0);
  const put = async (name: string) => {
    const member = name === PACK_MEMBERS.manifest ? await manifest : cover.get(name);
    writer.addPrepared(name, member as PreparedMember);
  };
  for (const name of before) await put(name);
  const run = window.signatures.storedRun();
  writer.addStoredRun(run.names, run.nameBytes, run.data);
  for (const name of names.slice(before.length)) await put(name);
  return { bytes: writer.finish() };
}

/**
 * The cover members' hashes (sorted) merged with the signature members' run (in name order)
 * in code point order of the names. A cover name inside the run's span is under
 * `signatures/`, which only signature members may use: a clash.
 */
function* inputHashesInOrder(
  cover: readonly [string, string][],
  window: CollectedWindow,
): Generator<InputHash> {
  const run = window.signatures.inputHashes();
  let c = 0;
  if (run.length > 0) {
    while (c < cover.length && compareCodePoints(cover[c][0], run.first) < 0) yield cover[c++];
    if (c < cover.length && compareCodePoints(cover[c][0], run.last) <= 0) {
      throw memberClash(cover[c][0]);
    }
    yield run;
  }
  while (c < cover.length) yield cover[c++];
}

function checkSigner(header: PackHeader, signer: OperatorSigner): void {
  const embedded = operatorBlock(header.operatorPublicKey).public_key_sha256;
  if (embedded !== operatorBlock(signer.publicKey).public_key_sha256) {
    throw new CompliancePackError(
      "compliance.operator_key_mismatch",
      "the embedded operator key is not the signing key's public half",
    );
  }
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
 * ```ts ignore
 * const pack = buildPack(content, signer);
 * await Deno.writeFile("pack.zip", pack.zip);
 * ```
 */
export function buildPack(content: PackContent, signer: OperatorSigner): BuiltPack {
  checkSigner(content, signer);
  const rendered = renderPackMembers(content);
  const sealed = sealPack(rendered.members, rendered.manifestBase, signer);
  return { ...sealed, zip: zipMembers(sealed.members), facts: rendered.facts };
}
