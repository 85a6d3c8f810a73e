// `bernstein-verify pack`: every check of FORMATS.md §5 over a ZIP that is never extracted.
// Order: the archive's structure (names, duplicates, encryption, sizes: before any member is
// inflated), the member set, the manifest (canonical bytes, output hash, operator key and
// signature, pinning), every input hash, then the lineage gate over the window with the
// pack's own signatures and cards, and finally the cross-checks (period, entry count, CSV,
// Article 12 figures, external parents, orphan signatures).
import { compareCodePoints, decodeUtf8Strict } from "../canonical/mod.ts";
import {
  decodePublicKeyPem,
  type ParsedDetachedJws,
  parseDetachedJws,
  sha256HexPure,
  sha256IntoPure,
  sha256Stream,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import { DigestTable, digestText } from "../lineage/mod.ts";
import { DeferredChecks } from "./_deferred_checks.ts";
import { type StartedWorkers, startGateWorkers } from "./_pool.ts";
import { defaultGateWorkers, gateUsesWorkers } from "./gate.ts";
import { checkPackCheckpoint, type PackCheckpointFacts } from "./_pack_checkpoint.ts";
import { verifyAttachmentExport } from "./attachments_dir.ts";
import { type PackWindowInput, runWindowPhase, type WindowOutcome } from "./pack_window.ts";
import { attestationInput } from "./directory.ts";
import { checkPackFleetEvents } from "./fleet_events.ts";
import type {
  CardFile,
  ForeignAttestationInput,
  ForeignAttestationReport,
  GateResult,
  VerifyIssue,
} from "./types.ts";
import {
  article12LogFigures,
  article12Mismatches,
  attachmentMemberParts,
  attestationMemberParts,
  type InputHashes,
  isManifestMember,
  type LogFacts,
  memberSegment,
  operatorBlock,
  PACK_CHECKPOINT_MEMBER,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
  type PackManifest,
  type PackMemberKind,
  packMemberKind,
  parsePackManifest,
  signatureMemberDigestInto,
  signatureMemberName,
} from "../pack_format/mod.ts";
import { PACK_LIMITS, packZipLimits } from "./pack_limits.ts";
import {
  type RandomAccessBytes,
  readStoredMemberView,
  readZipDirectory,
  readZipMember,
  readZipMemberNative,
  streamZipMember,
  type ZipMember,
  ZipMemberError,
} from "./zip_reader.ts";

export type { VerifyIssue } from "./types.ts";

/** Options for {@linkcode verifyPack}. */
export interface PackVerifyOptions {
  /** The operator's public key obtained out of band (`--operator-key`). */
  operatorPublicKey?: Uint8Array;
  /** The operator key's fingerprint obtained out of band, 64 hex (`--operator-fingerprint`). */
  operatorFingerprint?: string;
  /** Size limits (tests lower them). */
  limits?: typeof PACK_LIMITS;
  /** Worker threads for the signature checks (default: one per spare core, up to 3). */
  workers?: number;
  /** Where the gate's worker module is (tests substitute one). */
  workerUrl?: URL;
  /** Issuer keys pinned for foreign attestations: issuer key id → Ed25519 public key. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
}

/** Figures of a verified (or refused) pack. */
export interface PackStats {
  /** Members in the archive. */
  members: number;
  /** Lines of the log that parsed as entries. */
  entries: number;
  /** Distinct signing agents. */
  agents: number;
  /** Distinct artefacts. */
  artefacts: number;
  /** Agent card members. */
  cards: number;
  /** Signature members. */
  signatures: number;
  /** From the manifest, when it parsed. */
  org: string | null;
  /** From the manifest, when it parsed. */
  period: { since: string; until: string } | null;
  /** From the manifest, when it parsed. */
  built_at: string | null;
  /** The kid of the key that signed the manifest. */
  operator_kid: string | null;
  /** SHA-256 of that key's SPKI DER (hex). */
  operator_fingerprint: string | null;
  /** How the operator key was pinned: by `--operator-key`, `--operator-fingerprint`, or not. */
  operator_pinned: "key" | "fingerprint" | null;
  /** Operator HMACs need the operator's secret, which a pack never carries. */
  hmac_checked: false;
  /** `pack_format_version` of the manifest, when it parsed. */
  pack_format_version: number | null;
  /** The checkpoint a format-3 pack carries: lines of the whole log covered, root, time. */
  checkpoint: PackCheckpointFacts | null;
}

/** The verdict on one pack. */
export interface PackVerifyResult {
  /** True when every check passed. */
  ok: boolean;
  /** Figures. */
  stats: PackStats;
  /** Every failed check, in check order. */
  errors: VerifyIssue[];
  /** Remarks that are not failures (e.g. the operator key was not pinned). */
  notes: string[];
  /** Verdicts on the foreign attestations the pack carries (never part of `ok`). */
  foreign: ForeignAttestationReport[];
}

/** A verification's verdict so far: every phase adds its failures, notes and figures. */
class Verdict {
  readonly errors: VerifyIssue[] = [];
  readonly notes: string[] = [];
  readonly foreign: ForeignAttestationReport[] = [];
  /** Phase 3's checks that run while the gate checks the log (their failures placed back). */
  readonly deferred = new DeferredChecks();
  readonly stats: PackStats = {
    members: 0,
    entries: 0,
    agents: 0,
    artefacts: 0,
    cards: 0,
    signatures: 0,
    org: null,
    period: null,
    built_at: null,
    operator_kid: null,
    operator_fingerprint: null,
    operator_pinned: null,
    hmac_checked: false,
    pack_format_version: null,
    checkpoint: null,
  };

  /** Records one failed check. */
  readonly fail = (kind: string, message: string): void => {
    this.errors.push({ kind, message });
  };

  /** The verdict. */
  result(): PackVerifyResult {
    const { stats, notes, foreign } = this;
    const errors = this.deferred.placeInto(this.errors);
    return { ok: errors.length === 0, stats, errors, notes, foreign };
  }
}

/**
 * Verifies a compliance pack read through `source` (a read-only file or a buffer), in five
 * phases: the archive's structure, the signed manifest, the members against its input
 * hashes, the lineage gate over the window, and the cross-checks between the log and what
 * the manifest and CSV state about it.
 *
 * @example
 * ```ts ignore
 * const result = await verifyPack(memoryBytes(zip), { operatorFingerprint: hex });
 * result.ok ? "PASS" : result.errors.map((e) => e.message);
 * ```
 */
export async function verifyPack(
  source: RandomAccessBytes,
  options: PackVerifyOptions = {},
): Promise<PackVerifyResult> {
  const verdict = new Verdict();
  // Held here only until phase 3 is done with it (see verifyOpened).
  const opened: { directory?: PackDirectory } = {
    directory: checkStructure(source, options, verdict),
  };
  if (opened.directory === undefined) return verdict.result();
  // A window long enough for the gate's workers (a signature member per entry): they start
  // now, so their thread start and module load overlap phases 2 and 3.
  const workers = options.workers ?? defaultGateWorkers();
  const started = gateUsesWorkers(verdict.stats.signatures)
    ? startGateWorkers(workers, options.workerUrl)
    : undefined;
  try {
    return await verifyOpened(source, opened, options, verdict, started);
  } finally {
    started?.close();
  }
}

/** Phases 2 to 5, once the archive's structure is known. */
async function verifyOpened(
  source: RandomAccessBytes,
  opened: { directory?: PackDirectory },
  options: PackVerifyOptions,
  verdict: Verdict,
  started: StartedWorkers | undefined,
): Promise<PackVerifyResult> {
  let directory = opened.directory;
  opened.directory = undefined;
  if (directory === undefined) return verdict.result();
  const sealed = await checkManifest(source, directory, options, verdict);
  const contents = await checkMembers(source, directory, sealed, verdict);
  // A million-entry pack has as many members: the directory is not kept through the gate.
  directory = undefined;
  checkFleetMember(contents.fleet, sealed.manifest, verdict);
  const window = await checkWindow(source, contents, sealed, { ...options, started }, verdict);
  // Whatever the window's log did not leave time for.
  await verdict.deferred.finish();
  crossCheck(window, contents, sealed.manifest, verdict);
  return verdict.result();
}

/** The archive's members as phase 1 found them. */
interface PackDirectory {
  /** Every member, in central-directory order. */
  members: ZipMember[];
  /** The members of fixed name (README, manifest, log …), by name. */
  fixed: Map<string, ZipMember>;
  /** Each member's kind (by index), decided once: a pack has a member per entry. */
  kinds: (PackMemberKind | undefined)[];
  /** Declared bytes of all signature members (the store's one buffer). */
  signatureBytes: number;
}

/**
 * Phase 1, before anything is inflated: the archive's structure (names, duplicates,
 * encryption, sizes) and the member set (no unknown member, every fixed one present).
 */
function checkStructure(
  source: RandomAccessBytes,
  options: PackVerifyOptions,
  verdict: Verdict,
): PackDirectory | undefined {
  const { fail, stats } = verdict;
  // Each member's kind, decided once, as the reader sizes the member against its kind's limit.
  const kinds: (PackMemberKind | undefined)[] = [];
  const read = readZipDirectory(source, packZipLimits(options.limits ?? PACK_LIMITS, kinds));
  for (const p of read.problems) fail(p.kind, p.message);
  if (read.problems.length > 0) return undefined;
  const fixed = new Map<string, ZipMember>();
  let signatureBytes = 0;
  stats.members = read.members.length;
  for (let i = 0; i < read.members.length; i++) {
    const m = read.members[i];
    // Without problems the reader sized every member (an unknown one is named again: rare).
    const kind = kinds[i] ??= packMemberKind(m.name);
    if (kind === undefined) {
      fail(
        "unexpected member",
        `${JSON.stringify(m.name)}: unexpected member (not part of the pack format)`,
      );
    } else if (kind === "signature") {
      stats.signatures++;
      signatureBytes += m.size;
    } else if (kind === "card") stats.cards++;
    else if (FIXED_KINDS.has(kind)) fixed.set(m.name, m);
  }
  for (const name of Object.values(PACK_MEMBERS)) {
    if (!fixed.has(name)) fail("missing member", `${name}: missing member`);
  }
  return { members: read.members, fixed, kinds, signatureBytes };
}

const FIXED_KINDS: ReadonlySet<PackMemberKind> = new Set<PackMemberKind>([
  ...(Object.keys(PACK_MEMBERS) as (keyof typeof PACK_MEMBERS)[]),
  "checkpoint",
  "inclusion",
  "fleet",
]);

/** A member's whole bytes, or undefined after reporting why they cannot be read. */
function readMember(
  source: RandomAccessBytes,
  m: ZipMember | undefined,
  verdict: Verdict,
): Uint8Array | undefined {
  if (m === undefined) return undefined;
  try {
    return readZipMember(source, m);
  } catch (error) {
    if (!(error instanceof ZipMemberError)) throw error;
    verdict.fail("corrupt member", error.message);
    return undefined;
  }
}

/** The manifest's facts besides its list of members. */
type ManifestFacts = Omit<PackManifest, "input_hashes">;

/** What phase 2 established about the signed manifest. */
interface SealedManifest {
  /** The manifest, when it parsed. */
  manifest: ManifestFacts | undefined;
  /** Its `input_hashes` (dropped once phase 3 has used them). */
  listed: InputHashes | undefined;
  /** The manifest's bytes could be read (whether or not they parsed). */
  read: boolean;
  /** `pack_format_version`, when the manifest parsed. */
  version: number | null;
  /** `operator.pub`, when it is a usable key. */
  operatorKey: Uint8Array | undefined;
}

/**
 * Phase 2: the manifest (canonical bytes, fields), its output hash, the checkpoint members its
 * format version requires, the operator key and the manifest's signature, and the pinning.
 */
async function checkManifest(
  source: RandomAccessBytes,
  directory: PackDirectory,
  options: PackVerifyOptions,
  verdict: Verdict,
): Promise<SealedManifest> {
  const { fail, stats } = verdict;
  // ~16 MB for a 100 000-entry pack: inflated natively.
  let bytes: Uint8Array | undefined;
  const member = directory.fixed.get(PACK_MEMBERS.manifest);
  if (member !== undefined) {
    try {
      bytes = await readZipMemberNative(source, member);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
    }
  }
  let manifest: ManifestFacts | undefined;
  let listed: InputHashes | undefined;
  if (bytes !== undefined) {
    const parsed = parsePackManifest(bytes);
    if (!parsed.ok) {
      for (const p of parsed.problems) {
        fail("manifest invalid", `${PACK_MEMBERS.manifest}: manifest invalid: ${p}`);
      }
    } else {
      const { input_hashes, ...facts } = parsed.manifest;
      manifest = facts;
      listed = input_hashes;
      stats.org = facts.org;
      stats.period = facts.period;
      stats.built_at = facts.built_at;
      const recomputed = parsed.recomputedOutputHash;
      if (recomputed !== facts.output_hash) {
        fail(
          "output hash mismatch",
          `${PACK_MEMBERS.manifest}: output hash mismatch: output_hash says ${facts.output_hash}, the manifest hashes to ${recomputed}`,
        );
      }
    }
  }
  // Format 3 carries the checkpoint members; format 2 has none.
  const version = manifest?.pack_format_version ?? null;
  stats.pack_format_version = version;
  for (const name of [PACK_CHECKPOINT_MEMBER, PACK_INCLUSION_MEMBER]) {
    const present = directory.fixed.has(name);
    if (version === 3 && !present) fail("missing member", `${name}: missing member`);
    if (version === 2 && present) {
      fail(
        "unexpected member",
        `${JSON.stringify(name)}: unexpected member (a format-2 pack carries no checkpoint)`,
      );
    }
  }
  const operatorKey = checkOperator({
    manifest,
    manifestBytes: bytes,
    keyBytes: readMember(source, directory.fixed.get(PACK_MEMBERS.operatorKey), verdict),
    signatureBytes: readMember(
      source,
      directory.fixed.get(PACK_MEMBERS.manifestSignature),
      verdict,
    ),
    options,
    stats,
    fail,
    notes: verdict.notes,
  });
  return { manifest, listed, read: bytes !== undefined, version, operatorKey };
}

/** What phase 3 read out of the members for the later phases. */
interface PackContents {
  /** The signature members, for the gate. */
  signatures: SignatureStore;
  /** The agent cards, for the gate. */
  cards: CardFile[];
  /** Foreign attestations, for the gate. */
  attestations: ForeignAttestationInput[];
  /** `fleet-events.jsonl`, when present and readable. */
  fleet: Uint8Array | undefined;
  /** `checkpoint.json`, when present and readable. */
  checkpoint: Uint8Array | undefined;
  /** `inclusion-proof.json`, when present and readable. */
  inclusion: Uint8Array | undefined;
  /** SHA-256 hex of the CSV member as stored, when it could be read. */
  csvHex: string | undefined;
  /** The log member (hashed as it streams into the gate). */
  log: ZipMember | undefined;
  /** The hash the manifest lists for the log. */
  logExpected: string | undefined;
}

/**
 * Phase 3: the manifest lists exactly the other members, and each member hashes to what it
 * lists. Signatures, cards, attestations, attachment exports, the fleet events and the
 * checkpoint members are read here, in archive order (sequential reads), for the later phases.
 */
async function checkMembers(
  source: RandomAccessBytes,
  directory: PackDirectory,
  sealed: SealedManifest,
  verdict: Verdict,
): Promise<PackContents> {
  const { fail, stats } = verdict;
  const { members } = directory;
  const listing = sealed.listed === undefined
    ? undefined
    : matchListing(members, sealed.listed, fail);
  // The list holds the manifest's bytes (~160 MB at a million entries): each member's listed
  // hash is in `listing` now, so they go before the signatures are read in.
  sealed.listed = undefined;
  const hashOk = (i: number, hex: string) => {
    const problem = hashProblem(listing, i, members[i].name, hex);
    if (problem !== undefined) fail("input hash mismatch", problem);
  };
  const contents: PackContents = {
    signatures: new SignatureStore(stats.signatures, directory.signatureBytes),
    cards: [],
    attestations: [],
    fleet: undefined,
    checkpoint: undefined,
    inclusion: undefined,
    csvHex: undefined,
    log: directory.fixed.get(PACK_MEMBERS.log),
    logExpected: undefined,
  };
  // `--with-attachments`: each run's export, file name → bytes, checked after the loop.
  const attachmentRuns = new Map<string, Map<string, Uint8Array>>();
  const digest = new Uint8Array(32);
  // Signature members whose hash is checked later: member index, stored index, failures so far.
  const pendingHashes = new Int32Array(3 * stats.signatures);
  let pending = 0;
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    const kind = directory.kinds[i];
    if (kind === "signature") {
      // A view the store copies from: one copy per signature, not two.
      let bytes: Uint8Array | undefined;
      try {
        bytes = readStoredMemberView(source, m);
      } catch (error) {
        if (!(error instanceof ZipMemberError)) throw error;
        fail("corrupt member", error.message);
      }
      const stored = contents.signatures.add(m.name, bytes);
      if (bytes === undefined || listing === undefined || listing.isListed[i] === 0) continue;
      if (stored >= 0) {
        pendingHashes[pending++] = i;
        pendingHashes[pending++] = stored;
        pendingHashes[pending++] = verdict.errors.length;
        continue;
      }
      // Pure JS: a native hash per member leaves ~30 MB of native objects for the next major
      // GC on 100 000 signatures (peak RSS that glibc keeps). Compared as bytes, no hex made.
      sha256IntoPure(bytes, digest);
      if (!listing.matches(i, digest)) hashOk(i, digestText(digest).slice("sha256:".length));
      continue;
    }
    if (kind === "log") {
      if (listing?.isListed[i] === 1) contents.logExpected = listing.expectedHash(i);
      continue;
    }
    if (kind === "manifest" || kind === "manifestSignature" || kind === undefined) continue;
    if (kind === "readme" || kind === "instructions" || kind === "csv" || kind === "operatorKey") {
      const h = sha256Stream();
      try {
        for await (const chunk of streamZipMember(source, m)) h.update(chunk);
      } catch (error) {
        if (!(error instanceof ZipMemberError)) throw error;
        fail("corrupt member", error.message);
        continue;
      }
      const hex = h.hexDigest();
      if (kind === "csv") contents.csvHex = hex;
      hashOk(i, hex);
      continue;
    }
    const bytes = readMember(source, m, verdict);
    if (bytes === undefined) continue;
    hashOk(i, sha256HexPure(bytes));
    if (kind === "card") contents.cards.push({ location: m.name, bytes });
    else if (kind === "attestation") {
      const parts = attestationMemberParts(m.name);
      if (parts !== undefined) {
        contents.attestations.push(attestationInput(parts.entryHash, m.name, parts.hex, bytes));
      }
    } else if (kind === "attachment") {
      const parts = attachmentMemberParts(m.name);
      if (parts === undefined) continue;
      const files = attachmentRuns.get(parts.run) ?? new Map<string, Uint8Array>();
      files.set(parts.file, bytes);
      attachmentRuns.set(parts.run, files);
    } else if (kind === "fleet") contents.fleet = bytes;
    else if (kind === "checkpoint") contents.checkpoint = bytes;
    else if (kind === "inclusion") contents.inclusion = bytes;
  }
  if (listing !== undefined && pending > 0) {
    const hashes = pendingHashes.subarray(0, pending);
    verdict.deferred.add(signatureHashes(hashes, listing, contents.signatures, verdict));
  }
  checkAttachmentExports(attachmentRuns, verdict.fail, verdict.notes);
  return contents;
}

/** Why member `i` (named `name`) does not hash to what the manifest lists, if it does not. */
function hashProblem(
  listing: Listing | undefined,
  i: number,
  name: string,
  hex: string,
): string | undefined {
  if (listing === undefined || listing.isListed[i] === 0) return undefined;
  const expected = listing.expectedHash(i);
  if (expected === `sha256:${hex}`) return undefined;
  return `${name}: input hash mismatch: the manifest says ${expected}, the member hashes to sha256:${hex}`;
}

/** Signature members hashed between the log's chunks: a step is this many members (~0.5 ms). */
const SIGNATURES_PER_STEP = 512;

/**
 * The signature members' hashes against the manifest's list (phase 3, deferred): `pending`
 * holds per member its index, its place in the store and the failures reported before it.
 */
function* signatureHashes(
  pending: Int32Array,
  listing: Listing,
  store: SignatureStore,
  verdict: Verdict,
): Generator<void> {
  const digest = new Uint8Array(32);
  for (let k = 0; k < pending.length; k += 3) {
    const i = pending[k];
    // Pure JS: a native hash per member leaves ~30 MB of native objects for the next major
    // GC on 100 000 signatures (peak RSS that glibc keeps). Compared as bytes, no hex made.
    sha256IntoPure(store.bytesAt(pending[k + 1]), digest);
    if (!listing.matches(i, digest)) {
      const hex = digestText(digest).slice("sha256:".length);
      const problem = hashProblem(listing, i, store.nameAt(pending[k + 1]), hex);
      if (problem !== undefined) {
        verdict.deferred.fail(i, pending[k + 2], "input hash mismatch", problem);
      }
    }
    if ((k / 3) % SIGNATURES_PER_STEP === SIGNATURES_PER_STEP - 1) yield;
  }
}

/** Which members the manifest lists, and the hash it lists for each. */
interface Listing {
  /** 1 when member i is listed. */
  isListed: Uint8Array;
  /** The listed hash of member i (`sha256:` hex). */
  expectedHash(i: number): string;
  /** True when member i's listed hash is `digest`. */
  matches(i: number, digest: Uint8Array): boolean;
}

/**
 * Matches the archive's members with the manifest's list in one merge of the two name orders
 * (no lookup table of a million names): a member the list lacks, a listed name no member has,
 * and the manifest or its signature listed are failures. Failures come in the order the
 * checks always reported them: unlisted members in archive order, then the list's problems in
 * its order.
 */
function matchListing(
  members: readonly ZipMember[],
  listed: InputHashes,
  fail: (kind: string, message: string) => void,
): Listing {
  const n = members.length;
  const expected = new Uint8Array(32 * n);
  const isListed = new Uint8Array(n);
  const unlisted: number[] = [];
  const listProblems: VerifyIssue[] = [];
  const listedOnly = (name: string) => {
    if (isManifestMember(name)) {
      listProblems.push({
        kind: "manifest invalid",
        message: `${PACK_MEMBERS.manifest}: manifest invalid: lists ${name}`,
      });
    } else {
      listProblems.push({
        kind: "missing member",
        message: `${name}: missing member (listed in the manifest)`,
      });
    }
  };
  let j = 0;
  let listedName = listed.count > 0 ? listed.name(0) : "";
  for (const i of nameOrder(members)) {
    const name = members[i].name;
    while (j < listed.count && compareCodePoints(listedName, name) < 0) {
      listedOnly(listedName);
      listedName = ++j < listed.count ? listed.name(j) : "";
    }
    if (j < listed.count && listedName === name) {
      if (isManifestMember(name)) listedOnly(name);
      else {
        isListed[i] = 1;
        listed.digestInto(j, expected, 32 * i);
      }
      listedName = ++j < listed.count ? listed.name(j) : "";
    } else if (!isManifestMember(name)) unlisted.push(i);
  }
  for (; j < listed.count; j++) listedOnly(listed.name(j));
  for (const i of unlisted.sort((a, b) => a - b)) {
    fail(
      "member not in manifest",
      `${members[i].name}: member not in manifest (added after the manifest was signed)`,
    );
  }
  for (const p of listProblems) fail(p.kind, p.message);
  return {
    isListed,
    expectedHash: (i) => digestText(expected, 32 * i),
    matches: (i, digest) => {
      for (let k = 0; k < 32; k++) if (expected[32 * i + k] !== digest[k]) return false;
      return true;
    },
  };
}

/** Member indices in code point order of their names (archive order, unless a writer mixed it). */
function nameOrder(members: readonly ZipMember[]): Iterable<number> {
  const order = Array.from(members.keys());
  for (let i = 1; i < members.length; i++) {
    if (compareCodePoints(members[i - 1].name, members[i].name) > 0) {
      return order.sort((a, b) => compareCodePoints(members[a].name, members[b].name));
    }
  }
  return order;
}

/** The window's fleet events: their form, period, order and the family's rules. */
function checkFleetMember(
  fleet: Uint8Array | undefined,
  manifest: ManifestFacts | undefined,
  verdict: Verdict,
): void {
  if (fleet === undefined) return;
  for (const p of checkPackFleetEvents(fleet, manifest?.period)) {
    verdict.fail("fleet events invalid", p);
  }
}

/** What phase 4 learnt from the window's log, for the cross-checks. */
interface WindowFacts {
  /** The gate's result, when the log could be read through. */
  gate: GateResult | undefined;
  /** The log's facts (Article 12 figures). */
  facts: LogFacts;
  /** External parents some window entry names. */
  referenced: Set<string>;
  /** The manifest's external parents. */
  external: ReadonlySet<string>;
  /** SHA-256 hex of the CSV the log's entries make. */
  csvHex: string;
}

/** The window phase's inputs as the archive holds them (phases 2 and 3 read them). */
function windowInput(
  source: RandomAccessBytes,
  contents: PackContents,
  sealed: SealedManifest,
  options: PackVerifyOptions,
  stats: PackStats,
  deferred: DeferredChecks,
): PackWindowInput {
  const { manifest, version } = sealed;
  const logMember = contents.log;
  return {
    log: logMember === undefined ? undefined : streamZipMember(source, logMember),
    signatures: contents.signatures,
    cards: contents.cards,
    attestations: contents.attestations,
    period: manifest?.period,
    externalParents: new Set(manifest?.external_parents ?? []),
    // Only sizes tables (the count itself is checked against the log's lines below); every
    // entry has a signature member, so a count the archive's members do not back is cut.
    expectedEntries: Math.min(manifest?.entry_count ?? 0, stats.signatures),
    // The window's line digests (entry hashes), for the inclusion proof of a format-3 pack.
    leaves: hasInclusionProof(version, contents),
    trustedIssuers: options.trustedIssuers,
    // Phase 3's deferred member checks, a step per chunk of the log.
    between: () => deferred.step(),
  };
}

/** A format-3 pack whose checkpoint members could be read: its leaves are checked. */
function hasInclusionProof(version: number | null, contents: PackContents): boolean {
  return version === 3 && contents.checkpoint !== undefined && contents.inclusion !== undefined;
}

/**
 * Phase 4: the lineage gate over the window, fed from the archive with the pack's own
 * signatures and cards (src/verify/pack_window.ts); on the way, the log's hash, each entry
 * against the period and the external parents, the rows of the CSV, the facts, and the
 * leaves of the inclusion proof.
 */
async function checkWindow(
  source: RandomAccessBytes,
  contents: PackContents,
  sealed: SealedManifest,
  options: PackVerifyOptions & { started?: StartedWorkers },
  verdict: Verdict,
): Promise<WindowFacts> {
  const input = windowInput(source, contents, sealed, options, verdict.stats, verdict.deferred);
  noteUnusableManifest(sealed, verdict);
  const outcome = await runWindowPhase(input, {
    workers: options.workers,
    workerUrl: options.workerUrl,
    started: options.started,
  });
  return applyWindow(outcome, input.externalParents, contents, sealed, verdict);
}

function noteUnusableManifest(sealed: SealedManifest, verdict: Verdict): void {
  if (sealed.manifest === undefined && sealed.read) {
    verdict.notes.push(
      "the manifest is unusable, so its external_parents are unknown: parents that precede the period are reported as dangling",
    );
  }
}

/**
 * The window phase's outcome as failures, notes and figures, in the order the checks always
 * reported them: entries named as external parents, a log that could not be read, its input
 * hash, the gate's issues, entries outside the period, then the checkpoint and inclusion proof.
 */
function applyWindow(
  outcome: WindowOutcome,
  external: ReadonlySet<string>,
  contents: PackContents,
  sealed: SealedManifest,
  verdict: Verdict,
): WindowFacts {
  const { fail, notes, stats } = verdict;
  const { gate, logHex, leaves } = outcome;
  for (const issue of outcome.inline) fail(issue.kind, issue.message);
  if (outcome.readProblem !== undefined) fail("corrupt member", outcome.readProblem);
  const logExpected = contents.logExpected;
  if (logHex !== undefined && logExpected !== undefined && logExpected !== `sha256:${logHex}`) {
    fail(
      "input hash mismatch",
      `${PACK_MEMBERS.log}: input hash mismatch: the manifest says ${logExpected}, the member hashes to sha256:${logHex}`,
    );
  }
  if (gate !== undefined) {
    verdict.foreign.push(...gate.foreign);
    for (const issue of gate.issues) fail(issue.kind, issue.message);
    stats.entries = gate.entries;
    stats.artefacts = gate.artefacts;
  }
  for (const o of outcome.outside) fail("entry outside period", o);
  if (gate !== undefined && leaves !== undefined && hasInclusionProof(sealed.version, contents)) {
    if (gate.entries === gate.lines) {
      stats.checkpoint = checkPackCheckpoint({
        document: contents.checkpoint as Uint8Array,
        inclusion: contents.inclusion as Uint8Array,
        operatorPublicKey: sealed.operatorKey,
        digests: leaves.digests(),
        count: leaves.count,
      }, fail) ?? null;
    } else {
      notes.push(
        `the inclusion proof was not checked: ${
          gate.lines - gate.entries
        } log line(s) did not parse`,
      );
    }
  }
  // Facts of a log read only partly (a corrupt member) would depend on how far the threads
  // got before the read failed: like the entries, they are counted only for a log read through.
  stats.agents = gate === undefined ? 0 : outcome.facts.agents.length;
  return {
    gate,
    facts: outcome.facts,
    referenced: outcome.referenced,
    external,
    csvHex: outcome.csvHex,
  };
}

/**
 * Phase 5: the log against what the manifest and the CSV state about it — entry count,
 * external parents, the CSV's rows, the Article 12 figures — and no signature member without
 * its entry.
 */
function crossCheck(
  window: WindowFacts,
  contents: PackContents,
  manifest: ManifestFacts | undefined,
  verdict: Verdict,
): void {
  const { fail, notes } = verdict;
  const { gate } = window;
  if (gate !== undefined && manifest !== undefined) {
    if (manifest.entry_count !== gate.lines) {
      fail(
        "entry count mismatch",
        `${PACK_MEMBERS.manifest}: entry count mismatch: entry_count is ${manifest.entry_count}, ${PACK_MEMBERS.log} has ${gate.lines} lines`,
      );
    }
    for (const p of window.external) {
      if (!window.referenced.has(p)) {
        fail(
          "external parent invalid",
          `${PACK_MEMBERS.manifest}: external parent invalid: ${p} is named as a parent by no entry of the window`,
        );
      }
    }
    if (gate.entries === gate.lines) {
      const csvExpected = window.csvHex;
      if (contents.csvHex !== undefined && contents.csvHex !== csvExpected) {
        fail(
          "CSV mismatch",
          `${PACK_MEMBERS.csv}: CSV mismatch: the rows are not exactly the entries of ${PACK_MEMBERS.log}`,
        );
      }
      const figures = article12LogFigures(window.facts);
      for (const path of article12Mismatches(manifest.article12, figures)) {
        fail(
          "article12 facts mismatch",
          `${PACK_MEMBERS.manifest}: article12 facts mismatch: ${path} differs from the figure recomputed from ${PACK_MEMBERS.log}`,
        );
      }
    } else {
      notes.push(
        `the CSV and the Article 12 figures were not cross-checked: ${
          gate.lines - gate.entries
        } log line(s) did not parse`,
      );
    }
  }
  for (const name of gate === undefined ? [] : contents.signatures.unused()) {
    fail(
      "orphan signature",
      `${name}: orphan signature: no entry of ${PACK_MEMBERS.log} has this hash`,
    );
  }
}

/**
 * The pack's signature members, packed into one growing buffer with their offsets: a
 * 100 000-entry pack has as many 180-byte members, and one small object per member would
 * cost several times their size.
 */
class SignatureStore {
  // Keyed by entry digest (members are `signatures/<entry-hex>.jws`): 100 000 signatures
  // index in ~6 MB instead of ~25 MB for a map of member names.
  #index: DigestTable;
  #count = 0;
  #offsets: Uint32Array;
  #lengths: Int32Array; // -1: the member could not be read
  #used: Uint8Array;
  #bytes: Uint8Array;
  #end = 0;
  #names: { at: Int32Array; keys: Uint8Array } | undefined;
  #digest = new Uint8Array(32);

  /** `expected` members of `bytes` declared bytes in all (a member larger than declared fails). */
  constructor(expected: number, bytes: number) {
    const n = Math.max(1, expected);
    this.#bytes = new Uint8Array(bytes);
    this.#index = new DigestTable(n);
    this.#offsets = new Uint32Array(n);
    this.#lengths = new Int32Array(n);
    this.#used = new Uint8Array(n);
  }

  /** Stores a member's bytes (a copy); returns its place, or -1 when it is not stored. */
  add(name: string, bytes: Uint8Array | undefined): number {
    const i = this.#count;
    if (i >= this.#offsets.length) return -1; // cannot happen: `expected` counted every member
    // The name's digest goes straight into the index (no `sha256:` string per member).
    if (!signatureMemberDigestInto(name, this.#digest)) return -1;
    this.#index.setDigest(this.#digest, 0, i);
    this.#count++;
    if (bytes === undefined) {
      this.#lengths[i] = -1;
      return -1;
    }
    if (this.#end + bytes.length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#end + bytes.length));
      grown.set(this.#bytes.subarray(0, this.#end));
      this.#bytes = grown;
    }
    this.#bytes.set(bytes, this.#end);
    this.#offsets[i] = this.#end;
    this.#lengths[i] = bytes.length;
    this.#end += bytes.length;
    return i;
  }

  /** The bytes stored at place `i` (a view). */
  bytesAt(i: number): Uint8Array {
    return this.#bytes.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
  }

  /** The member name stored at place `i` (looked up once all are stored: failures only). */
  nameAt(i: number): string {
    if (this.#names === undefined) {
      // Place → where the index keeps its digest (no second copy of every digest is kept).
      const at = new Int32Array(this.#count);
      let keys: Uint8Array = new Uint8Array(0);
      for (const e of this.#index.entries()) {
        at[e.value] = e.at;
        keys = e.digests;
      }
      this.#names = { at, keys };
    }
    return signatureMemberName(digestText(this.#names.keys, this.#names.at[i]));
  }

  /** The signature member of a hash (undefined: no such member). */
  get(entryHash: string): Uint8Array | { problem: string } | undefined {
    const i = this.#index.get(entryHash);
    if (i === undefined) return undefined;
    if (this.#lengths[i] < 0) return { problem: "member is corrupt" };
    return this.#bytes.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
  }

  /** Marks the member of an entry of the log as used (not an orphan). */
  use(entryHash: string, digest?: Uint8Array): void {
    const i = digest === undefined ? this.#index.get(entryHash) : this.#index.getDigest(digest);
    if (i !== undefined) this.#used[i] = 1;
  }

  /** Names of members no entry of the log has, in archive order. */
  *unused(): Generator<string> {
    // The index holds each member's digest: no second copy of a million of them.
    const orphans: { i: number; name: string }[] = [];
    for (const e of this.#index.entries()) {
      if (this.#used[e.value] === 0) {
        orphans.push({ i: e.value, name: signatureMemberName(digestText(e.digests, e.at)) });
      }
    }
    yield* orphans.sort((a, b) => a.i - b.i).map((o) => o.name);
  }
}

interface OperatorCheck {
  manifest: Omit<PackManifest, "input_hashes"> | undefined;
  manifestBytes: Uint8Array | undefined;
  keyBytes: Uint8Array | undefined;
  signatureBytes: Uint8Array | undefined;
  options: PackVerifyOptions;
  stats: PackStats;
  fail: (kind: string, message: string) => void;
  notes: string[];
}

/** Checks the operator key and the manifest signature; returns `operator.pub` when usable. */
function checkOperator(c: OperatorCheck): Uint8Array | undefined {
  const { manifest, stats, fail, options } = c;
  let publicKey: Uint8Array | undefined;
  if (c.keyBytes !== undefined) {
    try {
      publicKey = decodePublicKeyPem(decodeUtf8Strict(c.keyBytes));
    } catch (error) {
      fail(
        "operator key invalid",
        `${PACK_MEMBERS.operatorKey}: operator key invalid: ${(error as Error).message}`,
      );
    }
  }
  if (publicKey !== undefined) {
    const block = operatorBlock(publicKey);
    const fingerprint = block.public_key_sha256;
    stats.operator_fingerprint = fingerprint;
    stats.operator_kid = block.kid;
    if (manifest !== undefined) {
      if (manifest.operator.public_key_sha256 !== fingerprint) {
        fail(
          "operator key mismatch",
          `${PACK_MEMBERS.operatorKey}: operator key mismatch: the manifest names key ${manifest.operator.public_key_sha256}, ${PACK_MEMBERS.operatorKey} is ${fingerprint}`,
        );
      }
      if (manifest.operator.kid !== stats.operator_kid) {
        fail(
          "operator key mismatch",
          `${PACK_MEMBERS.manifest}: operator key mismatch: operator.kid is ${
            JSON.stringify(manifest.operator.kid)
          }, the key's kid is ${JSON.stringify(stats.operator_kid)}`,
        );
      }
    }
  }
  let jws: ParsedDetachedJws | undefined;
  if (c.signatureBytes !== undefined) {
    try {
      jws = parseDetachedJws(c.signatureBytes);
    } catch (error) {
      fail(
        "manifest signature invalid",
        `${PACK_MEMBERS.manifestSignature}: manifest signature invalid: ${
          (error as Error).message
        }`,
      );
    }
  }
  if (jws !== undefined && manifest !== undefined && jws.header.kid !== manifest.operator.kid) {
    fail(
      "manifest signature invalid",
      `${PACK_MEMBERS.manifestSignature}: manifest signature invalid: signed with kid ${
        JSON.stringify(jws.header.kid)
      }, the manifest names ${JSON.stringify(manifest.operator.kid)}`,
    );
  }
  if (jws !== undefined && publicKey !== undefined && c.manifestBytes !== undefined) {
    if (!verifyDetachedJws(jws, { payload: c.manifestBytes, publicKey })) {
      fail(
        "manifest signature invalid",
        `${PACK_MEMBERS.manifestSignature}: manifest signature invalid: does not verify with ${PACK_MEMBERS.operatorKey}`,
      );
    }
  }
  // Pinning: the embedded key proves only that whoever built the pack held *a* key.
  if (options.operatorPublicKey !== undefined) {
    stats.operator_pinned = "key";
    const expected = operatorBlock(options.operatorPublicKey).public_key_sha256;
    if (publicKey === undefined || stats.operator_fingerprint !== expected) {
      fail(
        "operator key mismatch",
        `${PACK_MEMBERS.operatorKey}: operator key mismatch: the pack is signed by ${
          stats.operator_fingerprint ?? "no usable key"
        }, --operator-key is ${expected}`,
      );
    }
  } else if (options.operatorFingerprint !== undefined) {
    stats.operator_pinned = "fingerprint";
    if (publicKey === undefined || stats.operator_fingerprint !== options.operatorFingerprint) {
      fail(
        "operator key mismatch",
        `${PACK_MEMBERS.operatorKey}: operator key mismatch: the pack is signed by ${
          stats.operator_fingerprint ?? "no usable key"
        }, --operator-fingerprint is ${options.operatorFingerprint}`,
      );
    }
  } else {
    c.notes.push(
      "operator key not pinned: the manifest signature was checked against the key inside the pack; pass --operator-fingerprint HEX (obtained from the operator out of band) to check who signed it",
    );
  }
  return publicKey;
}

/**
 * The attachment exports a pack carries (`compliance pack --with-attachments`): each run's
 * folder checked as `bernstein-verify attachments` checks one (bytes against digests, events
 * against bytes, spawns against events, lineage digests against both); the member hashes were
 * checked against the signed manifest already.
 */
function checkAttachmentExports(
  runs: ReadonlyMap<string, ReadonlyMap<string, Uint8Array>>,
  fail: (kind: string, message: string) => void,
  notes: string[],
): void {
  for (const [run, files] of [...runs].sort((a, b) => compareCodePoints(a[0], b[0]))) {
    const where = `attachments/${run}/`;
    const read = new Set<string>();
    const result = verifyAttachmentExport((name) => {
      read.add(name);
      return files.get(name);
    });
    for (const e of result.errors) fail(e.kind, `${where}${e.message}`);
    const id = result.stats.run_id;
    if (id !== null && memberSegment(id) !== run) {
      fail(
        "malformed manifest",
        `${where}manifest.json: run_id ${JSON.stringify(id)} is not ${run}`,
      );
    }
    // Bytes the export's manifest does not list were never looked at: not part of the export.
    for (const name of files.keys()) {
      if (!read.has(name)) {
        fail(
          "unexpected member",
          `${where}${name}: unexpected member (not in its export's manifest)`,
        );
      }
    }
  }
  if (runs.size > 0) {
    notes.push(
      `attachments: ${runs.size} run export(s) checked (attach events' HMACs need the operator's audit key: 'bernstein audit verify')`,
    );
  }
}
