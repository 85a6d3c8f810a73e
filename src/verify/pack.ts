// `bernstein-verify pack`: every check of FORMATS.md §5 over a ZIP that is never extracted.
// Order: the archive's structure (names, duplicates, encryption, sizes: before any member is
// inflated), the member set, the manifest (canonical bytes, output hash, operator key and
// signature, pinning), every input hash, then the lineage gate over the window with the
// pack's own signatures and cards, and finally the cross-checks (period, entry count, CSV,
// Article 12 figures, external parents, orphan signatures).
import { decodeUtf8Strict } from "../canonical/mod.ts";
import {
  decodePublicKeyPem,
  type ParsedDetachedJws,
  parseDetachedJws,
  sha256Hex,
  sha256Stream,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import { kidForPublicKey } from "../lineage/mod.ts";
import { type CardFile, type GateResult, runLineageGate } from "./gate.ts";
import { article12LogFigures, article12Mismatches, LogFactsCollector } from "./log_facts.ts";
import {
  csvHeader,
  csvRow,
  isoOfNs,
  manifestOutputHash,
  operatorFingerprint,
  PACK_LIMITS,
  PACK_MEMBERS,
  type PackManifest,
  packMemberKind,
  packWindow,
  packZipLimits,
  parsePackManifest,
  signatureMemberName,
} from "./pack_format.ts";
import {
  type RandomAccessBytes,
  readZipDirectory,
  readZipMember,
  streamZipMember,
  type ZipMember,
  ZipMemberError,
} from "./zip_reader.ts";

/** One failed check: a stable kind (the failure words) and one human line. */
export interface VerifyIssue {
  /** Which check failed (`invalid signature`, `input hash mismatch`, …). */
  kind: string;
  /** One line naming the member, line or entry. */
  message: string;
}

/** Options for {@linkcode verifyPack}. */
export interface PackVerifyOptions {
  /** The operator's public key obtained out of band (`--operator-key`). */
  operatorPublicKey?: Uint8Array;
  /** The operator key's fingerprint obtained out of band, 64 hex (`--operator-fingerprint`). */
  operatorFingerprint?: string;
  /** Size limits (tests lower them). */
  limits?: typeof PACK_LIMITS;
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
}

/**
 * Verifies a compliance pack read through `source` (a read-only file or a buffer).
 *
 * @example
 * ```ts
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
  };
  const done = (): PackVerifyResult => ({ ok: errors.length === 0, stats, errors, notes });

  // 1. Structure, before anything is inflated.
  const directory = readZipDirectory(source, packZipLimits(options.limits ?? PACK_LIMITS));
  for (const p of directory.problems) fail(p.kind, p.message);
  if (errors.length > 0) return done();
  const members = new Map<string, ZipMember>(directory.members.map((m) => [m.name, m]));
  stats.members = members.size;
  const signatures = new Set<string>();
  const cardMembers: ZipMember[] = [];
  for (const m of directory.members) {
    const kind = packMemberKind(m.name);
    if (kind === undefined) {
      fail(
        "unexpected member",
        `${JSON.stringify(m.name)}: unexpected member (not part of the pack format)`,
      );
    } else if (kind === "signature") signatures.add(m.name);
    else if (kind === "card") cardMembers.push(m);
  }
  stats.signatures = signatures.size;
  stats.cards = cardMembers.length;
  for (const name of Object.values(PACK_MEMBERS)) {
    if (!members.has(name)) fail("missing member", `${name}: missing member`);
  }

  const read = (name: string): Uint8Array | undefined => {
    const m = members.get(name);
    if (m === undefined) return undefined;
    try {
      return readZipMember(source, m);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
      return undefined;
    }
  };

  // 2. The manifest, its output hash, the operator key and the signature.
  const manifestBytes = read(PACK_MEMBERS.manifest);
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
      const recomputed = manifestOutputHash(parsed.value);
      if (recomputed !== manifest.output_hash) {
        fail(
          "output hash mismatch",
          `${PACK_MEMBERS.manifest}: output hash mismatch: output_hash says ${manifest.output_hash}, the manifest hashes to ${recomputed}`,
        );
      }
    }
  }
  checkOperator({
    manifest,
    manifestBytes,
    keyBytes: read(PACK_MEMBERS.operatorKey),
    signatureBytes: read(PACK_MEMBERS.manifestSignature),
    options,
    stats,
    fail,
    notes,
  });

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
  if (listed !== undefined) {
    for (const name of members.keys()) {
      if (name === PACK_MEMBERS.manifest || name === PACK_MEMBERS.manifestSignature) continue;
      if (!listed.has(name)) {
        fail(
          "member not in manifest",
          `${name}: member not in manifest (added after the manifest was signed)`,
        );
      }
    }
    for (const name of listed.keys()) {
      if (name === PACK_MEMBERS.manifest || name === PACK_MEMBERS.manifestSignature) {
        fail("manifest invalid", `${PACK_MEMBERS.manifest}: manifest invalid: lists ${name}`);
      } else if (!members.has(name)) {
        fail("missing member", `${name}: missing member (listed in the manifest)`);
      }
    }
  }
  let csvHex: string | undefined;
  for (const m of directory.members) {
    const kind = packMemberKind(m.name);
    if (kind === "log" || kind === "signature" || kind === "manifest") continue;
    if (kind === "manifestSignature" || kind === undefined) continue;
    const h = sha256Stream();
    try {
      for (const chunk of streamZipMember(source, m)) h.update(chunk);
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
      continue;
    }
    const hex = h.hexDigest();
    if (kind === "csv") csvHex = hex;
    hashOk(m.name, hex);
  }

  // 4. The lineage gate over the window, fed from the archive.
  const cards: CardFile[] = [];
  for (const m of cardMembers) {
    const bytes = read(m.name);
    if (bytes !== undefined) cards.push({ location: m.name, bytes });
  }
  const window = manifest === undefined
    ? undefined
    : packWindow(manifest.period.since, manifest.period.until);
  const external = new Set(manifest?.external_parents ?? []);
  if (manifest === undefined && manifestBytes !== undefined) {
    notes.push(
      "the manifest is unusable, so its external_parents are unknown: parents that precede the period are reported as dangling",
    );
  }
  const referenced = new Set<string>();
  const facts = new LogFactsCollector();
  const csv = sha256Stream().update(new TextEncoder().encode(csvHeader()));
  const consumed = new Set<string>();
  const outside: string[] = [];
  const logMember = members.get(PACK_MEMBERS.log);
  let logHex: string | undefined;
  let gate: GateResult | undefined;
  if (logMember !== undefined) {
    const logHash = sha256Stream();
    const log = (function* () {
      for (const chunk of streamZipMember(source, logMember)) {
        logHash.update(chunk);
        yield chunk;
      }
    })();
    try {
      gate = await runLineageGate({
        log,
        logName: PACK_MEMBERS.log,
        cards,
        knownParents: external,
        signatures: (_artefact, hash) => {
          const name = signatureMemberName(hash);
          const m = members.get(name);
          if (m === undefined) return undefined;
          consumed.add(name);
          const bytes = read(name);
          if (bytes === undefined) return { problem: "member is corrupt" };
          hashOk(name, sha256Hex(bytes));
          return bytes;
        },
        onEntry: (entry, hash) => {
          facts.add(entry);
          csv.update(new TextEncoder().encode(csvRow(entry)));
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
      });
      logHex = logHash.hexDigest();
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      fail("corrupt member", error.message);
    }
  }
  if (logHex !== undefined) hashOk(PACK_MEMBERS.log, logHex);
  if (gate !== undefined) {
    for (const issue of gate.issues) fail(issue.kind, issue.message);
    stats.entries = gate.entries;
    stats.artefacts = gate.artefacts;
  }
  for (const o of outside) fail("entry outside period", o);
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
  for (const name of gate === undefined ? [] : signatures) {
    if (!consumed.has(name)) {
      fail(
        "orphan signature",
        `${name}: orphan signature: no entry of ${PACK_MEMBERS.log} has this hash`,
      );
    }
  }
  return done();
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

function checkOperator(c: OperatorCheck): void {
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
    const fingerprint = operatorFingerprint(publicKey);
    stats.operator_fingerprint = fingerprint;
    stats.operator_kid = kidForPublicKey(publicKey);
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
    if (!verifyDetachedJws(jws, c.manifestBytes, publicKey)) {
      fail(
        "manifest signature invalid",
        `${PACK_MEMBERS.manifestSignature}: manifest signature invalid: does not verify with ${PACK_MEMBERS.operatorKey}`,
      );
    }
  }
  // Pinning: the embedded key proves only that whoever built the pack held *a* key.
  if (options.operatorPublicKey !== undefined) {
    stats.operator_pinned = "key";
    const expected = operatorFingerprint(options.operatorPublicKey);
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
}
