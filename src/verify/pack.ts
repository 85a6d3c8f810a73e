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
import { digestInto, DigestTable, digestText } from "../lineage/mod.ts";
import { checkPackCheckpoint, type PackCheckpointFacts } from "./_pack_checkpoint.ts";
import { verifyAttachmentExport } from "./attachments_dir.ts";
import { defaultGateWorkers, runLineageGate } from "./gate.ts";
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
  csvHeader,
  csvRow,
  isManifestMember,
  isoOfNs,
  LogFactsCollector,
  memberSegment,
  operatorBlock,
  PACK_CHECKPOINT_MEMBER,
  PACK_INCLUSION_MEMBER,
  PACK_MEMBERS,
  type PackManifest,
  packMemberKind,
  packWindow,
  parsePackManifest,
  signatureMemberHash,
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

/**
 * Verifies a compliance pack read through `source` (a read-only file or a buffer).
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
  const errors: VerifyIssue[] = [];
  const notes: string[] = [];
  const fail = (kind: string, message: string) => errors.push({ kind, message });
  const stats: PackStats = {
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
  const foreignReports: ForeignAttestationReport[] = [];
  const done = (): PackVerifyResult => ({
    ok: errors.length === 0,
    stats,
    errors,
    notes,
    foreign: foreignReports,
  });

  // 1. Structure, before anything is inflated.
  let directory: ZipMember[] | undefined;
  {
    const read = readZipDirectory(source, packZipLimits(options.limits ?? PACK_LIMITS));
    for (const p of read.problems) fail(p.kind, p.message);
    if (errors.length > 0) return done();
    directory = read.members;
  }
  // Only what the later phases need is kept past phase 3: a 100 000-entry pack has as many
  // members, and the gate needs the memory.
  let members: Map<string, ZipMember> | undefined = new Map(directory.map((m) => [m.name, m]));
  let signatureBytes = 0; // declared sizes, checked against the limits: the store's one buffer
  stats.members = members.size;
  for (const m of directory) {
    const kind = packMemberKind(m.name);
    if (kind === undefined) {
      fail(
        "unexpected member",
        `${JSON.stringify(m.name)}: unexpected member (not part of the pack format)`,
      );
    } else if (kind === "signature") {
      stats.signatures++;
      signatureBytes += m.size;
    } else if (kind === "card") stats.cards++;
  }
  for (const name of Object.values(PACK_MEMBERS)) {
    if (!members.has(name)) fail("missing member", `${name}: missing member`);
  }

  const readMember = (m: ZipMember): Uint8Array | undefined => {
    try {
      return readZipMember(source, m);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
      return undefined;
    }
  };
  const read = (name: string): Uint8Array | undefined => {
    const m = members?.get(name);
    return m === undefined ? undefined : readMember(m);
  };

  // 2. The manifest, its output hash, the operator key and the signature.
  // ~16 MB for a 100 000-entry pack: inflated natively.
  let manifestBytes: Uint8Array | undefined;
  const manifestMember = members.get(PACK_MEMBERS.manifest);
  if (manifestMember !== undefined) {
    try {
      manifestBytes = await readZipMemberNative(source, manifestMember);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
    }
  }
  let manifest: PackManifest | undefined;
  if (manifestBytes !== undefined) {
    const parsed = parsePackManifest(manifestBytes);
    if (!parsed.ok) {
      for (const p of parsed.problems) {
        fail("manifest invalid", `${PACK_MEMBERS.manifest}: manifest invalid: ${p}`);
      }
    } else {
      manifest = parsed.manifest;
      stats.org = manifest.org;
      stats.period = manifest.period;
      stats.built_at = manifest.built_at;
      const recomputed = parsed.recomputedOutputHash;
      if (recomputed !== manifest.output_hash) {
        fail(
          "output hash mismatch",
          `${PACK_MEMBERS.manifest}: output hash mismatch: output_hash says ${manifest.output_hash}, the manifest hashes to ${recomputed}`,
        );
      }
    }
  }
  const manifestRead = manifestBytes !== undefined;
  // Format 3 carries the checkpoint members; format 2 has none.
  const version = manifest?.pack_format_version ?? null;
  stats.pack_format_version = version;
  for (const name of [PACK_CHECKPOINT_MEMBER, PACK_INCLUSION_MEMBER]) {
    if (version === 3 && !members.has(name)) fail("missing member", `${name}: missing member`);
    if (version === 2 && members.has(name)) {
      fail(
        "unexpected member",
        `${JSON.stringify(name)}: unexpected member (a format-2 pack carries no checkpoint)`,
      );
    }
  }
  const packOperatorKey = checkOperator({
    manifest,
    manifestBytes,
    keyBytes: read(PACK_MEMBERS.operatorKey),
    signatureBytes: read(PACK_MEMBERS.manifestSignature),
    options,
    stats,
    fail,
    notes,
  });

  manifestBytes = undefined; // 16 MB for a 100 000-entry pack: not kept through the gate

  // 3. Input hashes: the manifest lists exactly the other members, each with its hash.
  const listed = manifest?.input_hashes;
  const hashOk = (name: string, hex: string) => {
    const expected = listed?.get(name);
    if (listed === undefined || expected === undefined) return;
    if (expected !== `sha256:${hex}`) {
      fail(
        "input hash mismatch",
        `${name}: input hash mismatch: the manifest says ${expected}, the member hashes to sha256:${hex}`,
      );
    }
  };
  const digestOk = (name: string, digest: Uint8Array) => {
    const expected = listed?.get(name);
    if (expected === undefined || hexDigestEquals(expected, digest)) return;
    hashOk(name, digestText(digest).slice("sha256:".length));
  };
  if (listed !== undefined) {
    for (const name of members.keys()) {
      if (isManifestMember(name)) continue;
      if (!listed.has(name)) {
        fail(
          "member not in manifest",
          `${name}: member not in manifest (added after the manifest was signed)`,
        );
      }
    }
    for (const name of listed.keys()) {
      if (isManifestMember(name)) {
        fail("manifest invalid", `${PACK_MEMBERS.manifest}: manifest invalid: lists ${name}`);
      } else if (!members.has(name)) {
        fail("missing member", `${name}: missing member (listed in the manifest)`);
      }
    }
  }
  let csvHex: string | undefined;
  let checkpointBytes: Uint8Array | undefined;
  let inclusionBytes: Uint8Array | undefined;
  let fleetBytes: Uint8Array | undefined;
  const attestations: ForeignAttestationInput[] = [];
  // `--with-attachments`: each run's export, file name → bytes, checked after the loop.
  const attachmentRuns = new Map<string, Map<string, Uint8Array>>();
  // Signatures and cards are read here, in archive order (sequential reads), for the gate.
  const signatures = new SignatureStore(stats.signatures, signatureBytes);
  const cards: CardFile[] = [];
  const digest = new Uint8Array(32);
  for (const m of directory) {
    const kind = packMemberKind(m.name);
    if (kind === "signature") {
      // A view the store copies from: one copy per signature, not two.
      let bytes: Uint8Array | undefined;
      try {
        bytes = readStoredMemberView(source, m);
      } catch (error) {
        if (!(error instanceof ZipMemberError)) throw error;
        fail("corrupt member", error.message);
      }
      signatures.add(m.name, bytes);
      if (bytes === undefined) continue;
      // Pure JS: a native hash per member leaves ~30 MB of native objects for the next major
      // GC on 100 000 signatures (peak RSS that glibc keeps). Compared as bytes, no hex made.
      sha256IntoPure(bytes, digest);
      digestOk(m.name, digest);
      continue;
    }
    if (kind === "card") {
      const bytes = readMember(m);
      if (bytes === undefined) continue;
      hashOk(m.name, sha256HexPure(bytes));
      cards.push({ location: m.name, bytes });
      continue;
    }
    if (kind === "attestation") {
      const parts = attestationMemberParts(m.name);
      const bytes = readMember(m);
      if (bytes === undefined || parts === undefined) continue;
      hashOk(m.name, sha256HexPure(bytes));
      attestations.push(attestationInput(parts.entryHash, m.name, parts.hex, bytes));
      continue;
    }
    if (kind === "attachment") {
      const parts = attachmentMemberParts(m.name);
      const bytes = readMember(m);
      if (bytes === undefined || parts === undefined) continue;
      hashOk(m.name, sha256HexPure(bytes));
      const files = attachmentRuns.get(parts.run) ?? new Map<string, Uint8Array>();
      files.set(parts.file, bytes);
      attachmentRuns.set(parts.run, files);
      continue;
    }
    if (kind === "fleet") {
      fleetBytes = readMember(m);
      if (fleetBytes !== undefined) hashOk(m.name, sha256HexPure(fleetBytes));
      continue;
    }
    if (kind === "checkpoint" || kind === "inclusion") {
      const bytes = readMember(m);
      if (bytes === undefined) continue;
      hashOk(m.name, sha256HexPure(bytes));
      if (kind === "checkpoint") checkpointBytes = bytes;
      else inclusionBytes = bytes;
      continue;
    }
    if (kind === "log" || kind === "manifest") continue;
    if (kind === "manifestSignature" || kind === undefined) continue;
    const h = sha256Stream();
    try {
      for await (const chunk of streamZipMember(source, m)) h.update(chunk);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
      continue;
    }
    const hex = h.hexDigest();
    if (kind === "csv") csvHex = hex;
    hashOk(m.name, hex);
  }
  checkAttachmentExports(attachmentRuns, fail, notes);
  const logMember = members.get(PACK_MEMBERS.log);
  const logExpected = listed?.get(PACK_MEMBERS.log);
  listed?.clear();
  members = undefined;
  directory = undefined;

  // The window's fleet events: their form, period, order and the family's rules.
  if (fleetBytes !== undefined) {
    for (const p of checkPackFleetEvents(fleetBytes, manifest?.period)) {
      fail("fleet events invalid", p);
    }
  }

  // 4. The lineage gate over the window, fed from the archive.
  const window = manifest === undefined
    ? undefined
    : packWindow(manifest.period.since, manifest.period.until);
  const external = new Set(manifest?.external_parents ?? []);
  if (manifest === undefined && manifestRead) {
    notes.push(
      "the manifest is unusable, so its external_parents are unknown: parents that precede the period are reported as dangling",
    );
  }
  const referenced = new Set<string>();
  const facts = new LogFactsCollector();
  const csv = sha256Stream();
  // Rows are hashed in batches: one encode per ~64 KiB instead of one per entry.
  let csvPending = csvHeader();
  const flushCsv = () => {
    csv.update(new TextEncoder().encode(csvPending));
    csvPending = "";
  };
  const outside: string[] = [];
  // The window's line digests (entry hashes), for the inclusion proof of a format-3 pack.
  const wantDigests = version === 3 && checkpointBytes !== undefined &&
    inclusionBytes !== undefined;
  let digests = new Uint8Array(wantDigests ? 32 * 1024 : 0);
  let digestCount = 0;
  let logHex: string | undefined;
  let gate: GateResult | undefined;
  if (logMember !== undefined) {
    const logHash = sha256Stream();
    const log = (async function* () {
      for await (const chunk of streamZipMember(source, logMember)) {
        logHash.update(chunk);
        yield chunk;
      }
    })();
    try {
      gate = await runLineageGate({
        log,
        logName: PACK_MEMBERS.log,
        sidecarNames: "pack",
        foreignAttestations: attestations,
        trustedIssuers: options.trustedIssuers,
        cards,
        knownParents: external,
        // Asked for every line's hash; only entries (onEntry) make a member used.
        signatures: (hash) => signatures.get(hash),
        onEntry: (entry, hash) => {
          signatures.use(hash);
          if (wantDigests) {
            if (digests.length < (digestCount + 1) * 32) {
              const grown = new Uint8Array(digests.length * 2);
              grown.set(digests);
              digests = grown;
            }
            digestInto(hash, digests, digestCount * 32);
            digestCount++;
          }
          facts.add(entry);
          csvPending += csvRow(entry);
          if (csvPending.length > 65536) flushCsv();
          for (const p of entry.parent_hashes) if (external.has(p)) referenced.add(p);
          if (external.has(hash)) {
            fail(
              "external parent invalid",
              `${PACK_MEMBERS.manifest}: external parent invalid: ${hash} is an entry of the window itself`,
            );
          }
          if (
            window !== undefined && (entry.ts_ns < window.startNs || entry.ts_ns > window.endNs)
          ) {
            outside.push(
              `${PACK_MEMBERS.log}: entry outside period: entry ${hash} has ts_ns ${entry.ts_ns} (${
                isoOfNs(entry.ts_ns)
              }), outside ${manifest?.period.since}..${manifest?.period.until}`,
            );
          }
        },
      }, { workers: options.workers ?? defaultGateWorkers(), workerUrl: options.workerUrl });
      logHex = logHash.hexDigest();
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
    }
  }
  if (logHex !== undefined && logExpected !== undefined && logExpected !== `sha256:${logHex}`) {
    fail(
      "input hash mismatch",
      `${PACK_MEMBERS.log}: input hash mismatch: the manifest says ${logExpected}, the member hashes to sha256:${logHex}`,
    );
  }
  if (gate !== undefined) {
    foreignReports.push(...gate.foreign);
    for (const issue of gate.issues) fail(issue.kind, issue.message);
    stats.entries = gate.entries;
    stats.artefacts = gate.artefacts;
  }
  for (const o of outside) fail("entry outside period", o);
  if (gate !== undefined && wantDigests) {
    if (gate.entries === gate.lines) {
      stats.checkpoint = checkPackCheckpoint({
        document: checkpointBytes as Uint8Array,
        inclusion: inclusionBytes as Uint8Array,
        operatorPublicKey: packOperatorKey,
        digests: digests.subarray(0, digestCount * 32),
        count: digestCount,
      }, fail) ?? null;
    } else {
      notes.push(
        `the inclusion proof was not checked: ${
          gate.lines - gate.entries
        } log line(s) did not parse`,
      );
    }
  }
  const logFacts = facts.facts();
  stats.agents = logFacts.agents.length;

  // 5. Cross-checks between the log and what the manifest and CSV state about it.
  if (gate !== undefined && manifest !== undefined) {
    if (manifest.entry_count !== gate.lines) {
      fail(
        "entry count mismatch",
        `${PACK_MEMBERS.manifest}: entry count mismatch: entry_count is ${manifest.entry_count}, ${PACK_MEMBERS.log} has ${gate.lines} lines`,
      );
    }
    for (const p of external) {
      if (!referenced.has(p)) {
        fail(
          "external parent invalid",
          `${PACK_MEMBERS.manifest}: external parent invalid: ${p} is named as a parent by no entry of the window`,
        );
      }
    }
    if (gate.entries === gate.lines) {
      flushCsv();
      const csvExpected = csv.hexDigest();
      if (csvHex !== undefined && csvHex !== csvExpected) {
        fail(
          "CSV mismatch",
          `${PACK_MEMBERS.csv}: CSV mismatch: the rows are not exactly the entries of ${PACK_MEMBERS.log}`,
        );
      }
      for (const path of article12Mismatches(manifest.article12, article12LogFigures(logFacts))) {
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
  for (const name of gate === undefined ? [] : signatures.unused()) {
    fail(
      "orphan signature",
      `${name}: orphan signature: no entry of ${PACK_MEMBERS.log} has this hash`,
    );
  }
  return done();
}

/** True when `expected` is `sha256:` + the lowercase hex of `digest` (no string is made). */
function hexDigestEquals(expected: string, digest: Uint8Array): boolean {
  if (expected.length !== 71 || !expected.startsWith("sha256:")) return false;
  for (let i = 0; i < 32; i++) {
    const hi = expected.charCodeAt(7 + 2 * i);
    const lo = expected.charCodeAt(8 + 2 * i);
    if (hi !== HEX_CODES[digest[i] >> 4] || lo !== HEX_CODES[digest[i] & 15]) return false;
  }
  return true;
}

const HEX_CODES = new TextEncoder().encode("0123456789abcdef");

/**
 * The pack's signature members, packed into one growing buffer with their offsets: a
 * 100 000-entry pack has as many 180-byte members, and one small object per member would
 * cost several times their size.
 */
class SignatureStore {
  // Keyed by entry digest (members are `signatures/<entry-hex>.jws`): 100 000 signatures
  // index in ~6 MB instead of ~25 MB for a map of member names.
  #index: DigestTable;
  #digests: Uint8Array;
  #count = 0;
  #offsets: Uint32Array;
  #lengths: Int32Array; // -1: the member could not be read
  #used: Uint8Array;
  #bytes: Uint8Array;
  #end = 0;

  /** `expected` members of `bytes` declared bytes in all (a member larger than declared fails). */
  constructor(expected: number, bytes: number) {
    const n = Math.max(1, expected);
    this.#bytes = new Uint8Array(bytes);
    this.#index = new DigestTable(n);
    this.#digests = new Uint8Array(n * 32);
    this.#offsets = new Uint32Array(n);
    this.#lengths = new Int32Array(n);
    this.#used = new Uint8Array(n);
  }

  add(name: string, bytes: Uint8Array | undefined): void {
    const i = this.#count;
    if (i >= this.#offsets.length) return; // cannot happen: `expected` counted every member
    const hash = signatureMemberHash(name);
    if (hash === undefined || !digestInto(hash, this.#digests, i * 32)) return;
    if (!this.#index.set(hash, i)) return;
    this.#count++;
    if (bytes === undefined) {
      this.#lengths[i] = -1;
      return;
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
  }

  /** The signature member of a hash (undefined: no such member). */
  get(entryHash: string): Uint8Array | { problem: string } | undefined {
    const i = this.#index.get(entryHash);
    if (i === undefined) return undefined;
    if (this.#lengths[i] < 0) return { problem: "member is corrupt" };
    return this.#bytes.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
  }

  /** Marks the member of an entry of the log as used (not an orphan). */
  use(entryHash: string): void {
    const i = this.#index.get(entryHash);
    if (i !== undefined) this.#used[i] = 1;
  }

  /** Names of members no entry of the log has. */
  *unused(): Generator<string> {
    for (let i = 0; i < this.#count; i++) {
      if (this.#used[i] === 0) yield signatureMemberName(digestText(this.#digests, i * 32));
    }
  }
}

interface OperatorCheck {
  manifest: PackManifest | undefined;
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
