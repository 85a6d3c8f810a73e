// The lineage gate (FORMATS.md §4): every check, in order, over a streamed log, a signature
// lookup and a card set. It trusts nothing it has not checked and never throws on bad input:
// every problem becomes one structured issue.
import { type JsonValue, parseCanonicalLine } from "../canonical/mod.ts";
import {
  JwsFormatError,
  type KeyedHmacSha256,
  keyedHmacSha256,
  type ParsedDetachedJws,
  parseDetachedJws,
  timingSafeEqualBytes,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import {
  AgentCardSet,
  type ByteSource,
  computeOperatorHmac,
  entryHashOfBytes,
  type ForeignAttestationResult,
  LineageAnalyzer,
  type LineageEntry,
  parseEntry,
  signaturePath,
  streamLines,
  verifyForeignAttestation,
} from "../lineage/mod.ts";

/** The failure words of FORMATS.md §4, plus the two card/entry problems they do not name. */
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

/** Finds the detached JWS of an entry (sidecar file, archive member, …). */
export type SignatureLookup = (
  artefactPath: string,
  entryHash: string,
) => SignatureFetch | Promise<SignatureFetch>;

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
  /** The envelope as parsed JSON. */
  attestation: JsonValue;
  /** The issuer's Ed25519 key, when the verifier has one. */
  issuerPublicKey?: Uint8Array | string;
}

/** The verdict on one foreign attestation (never part of `ok`). */
export interface ForeignAttestationReport extends ForeignAttestationResult {
  /** The entry it sits beside. */
  entry_hash: string;
  /** Where it came from. */
  location: string;
}

/** Everything the gate reads; a directory reader and an archive reader both produce this. */
export interface GateInput {
  /** The log bytes, whole or as a stream of chunks. */
  log: ByteSource;
  /** Name of the log in messages (default `log.jsonl`). */
  logName?: string;
  /** Finds each entry's detached JWS. */
  signatures: SignatureLookup;
  /** The agent cards. */
  cards: AgentCardSet | Iterable<CardFile> | AsyncIterable<CardFile>;
  /** The operator key; when absent the HMAC check is skipped and the result says so. */
  operatorKey?: Uint8Array;
  /** Foreign attestations to classify; they never change `ok`. */
  foreignAttestations?: readonly ForeignAttestationInput[];
  /** Longest log line accepted (default 1 MiB). */
  maxLineBytes?: number;
  /**
   * Entry hashes known to precede the log (a compliance pack's window starts after them):
   * parents naming them are not dangling.
   */
  knownParents?: ReadonlySet<string>;
  /** Receives every entry that parsed, in log order, with its hash and raw line bytes. */
  onEntry?: (entry: LineageEntry, hash: string, line: Uint8Array) => void;
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
}

async function collectCards(cards: GateInput["cards"]): Promise<AgentCardSet> {
  if (cards instanceof AgentCardSet) return cards;
  const set = new AgentCardSet();
  for await (const file of cards) {
    if ("problem" in file) set.addProblem(file.location, file.problem);
    else set.add(file.location, file.bytes);
  }
  return set;
}

const MARKER = new TextEncoder().encode('"operator_hmac":"');

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  let at = haystack.indexOf(needle[0]);
  while (at >= 0 && at + needle.length <= haystack.length) {
    let i = 1;
    while (i < needle.length && haystack[at + i] === needle[i]) i++;
    if (i === needle.length) return at;
    at = haystack.indexOf(needle[0], at + 1);
  }
  return -1;
}

function hmacInput(entry: LineageEntry, line: Uint8Array): Uint8Array[] | undefined {
  // The HMAC covers the line with operator_hmac blanked. In canon bytes the first
  // `"operator_hmac":"` is the top-level key: inside a string every `"` is escaped, and no
  // entry field is a nested object. A value that needs escaping takes the slow path.
  if (!/^[0-9A-Za-z]*$/.test(entry.operator_hmac)) return undefined;
  const at = indexOfBytes(line, MARKER);
  if (at < 0) return undefined;
  const valueStart = at + MARKER.length;
  return [line.subarray(0, valueStart), line.subarray(valueStart + entry.operator_hmac.length)];
}

function hmacMatches(entry: LineageEntry, line: Uint8Array, key: KeyedHmacSha256): boolean {
  const parts = hmacInput(entry, line);
  const expected = parts === undefined ? computeOperatorHmac(entry, key) : key.hex(...parts);
  const enc = new TextEncoder();
  return timingSafeEqualBytes(enc.encode(expected), enc.encode(entry.operator_hmac));
}

/**
 * Runs every lineage check of FORMATS.md §4 over `input`, streaming the log: framing and byte
 * binding, entry rules, kid binding (card for the signed kid; JWS header kid = entry kid), the
 * Ed25519 signature, the operator HMAC, dangling parents (a parent must be an earlier entry),
 * unresolved forks and conflicting agent cards.
 *
 * @example
 * ```ts
 * const result = await runLineageGate({ log, signatures, cards, operatorKey });
 * result.ok ? "PASS" : `FAIL (${result.issues.length} issues)`;
 * ```
 */
export async function runLineageGate(input: GateInput): Promise<GateResult> {
  const logName = input.logName ?? "log.jsonl";
  const cards = await collectCards(input.cards);
  const hmacKey = input.operatorKey === undefined ? undefined : keyedHmacSha256(input.operatorKey);
  const analyzer = new LineageAnalyzer();
  const seen = new Map<string, number>(); // entry hash → line
  const dangling: { issue: GateIssue; parent: string }[] = [];
  const lineIssues: GateIssue[] = [];
  const attested = new Map<string, string | undefined>();
  for (const f of input.foreignAttestations ?? []) attested.set(f.entry_hash, undefined);
  let lines = 0;
  let entries = 0;
  let unterminated = false;

  for await (const l of streamLines(input.log, { maxLineBytes: input.maxLineBytes })) {
    lines = l.line;
    if (!l.terminated) unterminated = true;
    const where = `${logName}:${l.line}`;
    const add = (issue: Omit<GateIssue, "message" | "line">, detail: string) =>
      lineIssues.push({ ...issue, line: l.line, message: `${where}: ${issue.kind}: ${detail}` });
    if (l.tooLong) {
      add({ kind: "non-canonical line bytes" }, "line is longer than the limit");
      continue;
    }
    const parsed = parseCanonicalLine(l.bytes, "canon");
    if (!parsed.ok) {
      const detail = l.bytes.length === 0 ? "empty line" : `${parsed.reason}: ${parsed.detail}`;
      add({ kind: "non-canonical line bytes" }, detail);
      continue;
    }
    let entry: LineageEntry;
    try {
      entry = parseEntry(parsed.value);
    } catch (error) {
      add({ kind: "invalid entry" }, (error as Error).message);
      continue;
    }
    entries++;
    const hash = entryHashOfBytes(l.bytes);
    const ids = { entry_hash: hash, artefact: entry.artefact_path };
    if (attested.has(hash)) attested.set(hash, entry.content_hash);

    // Kid binding: a card for exactly the (agent_id, kid) the entry signed with.
    const card = cards.lookup(entry.agent_id, entry.agent_card_kid);
    if (card.status === "missing") {
      add(
        { kind: "kid binding cannot be established", ...ids },
        `no agent card for agent ${JSON.stringify(entry.agent_id)} kid ${
          JSON.stringify(entry.agent_card_kid)
        }`,
      );
    } else if (card.status === "conflict") {
      add(
        { kind: "kid binding cannot be established", ...ids },
        `agent ${JSON.stringify(entry.agent_id)} kid ${
          JSON.stringify(entry.agent_card_kid)
        } has conflicting cards (${card.locations.join(", ")})`,
      );
    }
    const sidecar = signaturePath(entry.artefact_path, hash);
    const fetched = await input.signatures(entry.artefact_path, hash);
    let jws: ParsedDetachedJws | undefined;
    if (fetched === undefined) {
      add(
        { kind: "invalid signature", ...ids, location: sidecar },
        `no signature sidecar ${sidecar}`,
      );
    } else if (!(fetched instanceof Uint8Array)) {
      add(
        { kind: "invalid signature", ...ids, location: sidecar },
        `${sidecar}: ${fetched.problem}`,
      );
    } else {
      try {
        jws = parseDetachedJws(fetched);
      } catch (error) {
        const why = error instanceof JwsFormatError ? error.message : String(error);
        add(
          { kind: "invalid signature", ...ids, location: sidecar },
          `${sidecar}: malformed JWS: ${why}`,
        );
      }
    }
    if (jws !== undefined && jws.header.kid !== entry.agent_card_kid) {
      add(
        { kind: "kid binding mismatch", ...ids, location: sidecar },
        `entry kid ${JSON.stringify(entry.agent_card_kid)} but JWS header kid ${
          JSON.stringify(jws.header.kid)
        }`,
      );
    } else if (jws !== undefined && card.status === "found") {
      if (!verifyDetachedJws(jws, l.bytes, card.publicKey)) {
        add(
          { kind: "invalid signature", ...ids, location: sidecar },
          `signature does not verify with the card of agent ${JSON.stringify(entry.agent_id)} kid ${
            JSON.stringify(entry.agent_card_kid)
          }`,
        );
      }
    }
    if (hmacKey !== undefined && !hmacMatches(entry, l.bytes, hmacKey)) {
      add({ kind: "HMAC mismatch", ...ids }, "operator_hmac does not match the operator key");
    }
    for (const parent of entry.parent_hashes) {
      if (seen.has(parent) || input.knownParents?.has(parent)) continue;
      const issue: GateIssue = {
        kind: "dangling parent_hash",
        line: l.line,
        ...ids,
        message: "",
      };
      lineIssues.push(issue);
      dangling.push({ issue, parent });
    }
    if (!seen.has(hash)) seen.set(hash, l.line);
    input.onEntry?.(entry, hash, l.bytes);
    analyzer.add({
      hash,
      artefact_path: entry.artefact_path,
      parent_hashes: entry.parent_hashes,
      content_hash: entry.content_hash,
    });
  }

  for (const { issue, parent } of dangling) {
    const later = seen.get(parent);
    const detail = later === undefined
      ? `parent ${parent} is not in the log`
      : `parent ${parent} appears only later, on line ${later}`;
    issue.message = `${logName}:${issue.line}: dangling parent_hash: ${detail}`;
  }
  const issues: GateIssue[] = [];
  if (unterminated) {
    issues.push({
      kind: "missing trailing newline",
      line: lines,
      message: `${logName}:${lines}: missing trailing newline (torn or truncated last record)`,
    });
  }
  issues.push(...lineIssues);
  for (const fork of analyzer.unresolvedForks()) {
    issues.push({
      kind: "unresolved fork",
      entry_hash: fork.parent_hash,
      artefact: fork.artefact_path,
      message: `${fork.artefact_path}: unresolved fork: parent ${fork.parent_hash} has children ${
        fork.children.join(", ")
      } with different content and no merge entry lists them all`,
    });
  }
  const broken = new Set(dangling.map((d) => d.issue.artefact ?? ""));
  for (const split of analyzer.splitHeads(broken)) {
    issues.push({
      kind: "unresolved fork",
      artefact: split.artefact_path,
      message: `${split.artefact_path}: unresolved fork: ${split.open.length} open tips (${
        split.open.join(", ")
      }) and no merge entry joins them`,
    });
  }
  for (const c of cards.issues()) {
    issues.push({ kind: c.kind, location: c.location, message: c.message });
  }
  const foreign: ForeignAttestationReport[] = (input.foreignAttestations ?? []).map((f) => {
    const content = attested.get(f.entry_hash);
    const verdict = content === undefined
      ? {
        verdict: "rejected" as const,
        verified: false,
        trust_class: "public" as const,
        reason: `no entry ${f.entry_hash} in the log`,
      }
      : verifyForeignAttestation(f.attestation, {
        issuerPublicKey: f.issuerPublicKey,
        record: { content_hash: content },
      });
    return { ...verdict, entry_hash: f.entry_hash, location: f.location };
  });
  return {
    ok: issues.length === 0,
    lines,
    entries,
    artefacts: analyzer.artefacts().length,
    cards: cards.size,
    hmac_checked: hmacKey !== undefined,
    issues,
    foreign,
  };
}
