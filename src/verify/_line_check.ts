// The per-line half of the gate: everything about one line that depends on nothing around it.
// `checkBatch` parses each line of a batch (framing, byte binding, entry rules, entry hash) and
// checks each entry's signature (kid binding, JWS, Ed25519, operator HMAC); batches run on the
// main thread or in workers, in any order, and return their entries, hashes and issues, which
// the main thread then feeds, in log order, to the order-dependent checks (dangling parents,
// forks, the caller's `onEntry`).
import { parseCanonicalLine } from "../canonical/mod.ts";
import {
  JwsFormatError,
  type KeyedHmacSha256,
  type ParsedDetachedJws,
  parseDetachedJws,
  scanDetachedJws,
  sha256Hex,
  verifyDetachedJws,
  verifyScannedJws,
} from "../crypto/mod.ts";
import {
  type AgentCardSet,
  computeOperatorHmac,
  type LineageEntry,
  parseEntry,
  plainEntryOfLine,
  signaturePath,
} from "../lineage/mod.ts";
import { signatureMemberName } from "../pack_format/mod.ts";
import type { GateIssue, GateIssueKind, SignatureFetch } from "./types.ts";

/**
 * Lines to check, as the main thread frames them: their bytes back to back and, per line, its
 * number, byte length and flags. Parsing and every per-line check happen where the batch is
 * checked (this thread or a worker); the in-order checks run on the results.
 */
export interface LineBatch {
  /** The lines' bytes. */
  data: Uint8Array;
  /** Three int32 per line: 1-based line number, byte length, flags ({@linkcode LINE_TOO_LONG}). */
  meta: Int32Array;
  /**
   * Each line's entry hash (`sha256:` hex of its bytes) when the main thread computed it to
   * look its signature up (archives); absent: computed where the batch is checked.
   */
  hashes?: string[];
  /**
   * The signatures the main thread looked up by each line's hash (archives); absent: read
   * from the lineage folder where the batch is checked. One buffer for the batch, and per
   * line its length, -1 for none, -2 for a problem.
   */
  sidecars?: { data: Uint8Array; lengths: Int32Array; problems: string[] };
}

/** Flag of a line longer than the framer's limit (only its start was kept). */
export const LINE_TOO_LONG = 1;

/**
 * What the in-order checks read of an entry (dangling parents, forks, attestations): all a
 * worker sends back when the caller wants no entries, so ~3 strings a line are cloned back
 * instead of a whole entry (measured: ~0.5-1 s of CPU per 100 000 entries, clone and garbage).
 */
export type EntryLinks = Pick<LineageEntry, "artefact_path" | "parent_hashes" | "content_hash">;

/** What checking a batch found, per line and in all. */
export interface BatchResult {
  /** Per line: the entry (or only its links, see {@linkcode EntryLinks}), or null when none. */
  links: (EntryLinks | null)[];
  /** Per line: the whole entry or null; absent when the batch's caller wants no entries. */
  entries?: (LineageEntry | null)[];
  /** Per line: the entry hash, or null when the line is not an entry. */
  hashes: (string | null)[];
  /** Every issue of the batch's lines (framing, entry rules, signatures, HMAC). */
  issues: GateIssue[];
}

/** A line parsed as far as the in-order checks need. */
export interface ParsedLine {
  /** 1-based line number. */
  line: number;
  /** Framing, byte-binding or entry-rule issues; null when none. */
  issues: GateIssue[] | null;
  /** The entry, when the line is one. */
  entry?: LineageEntry;
  /** Its entry hash (`sha256:` + hex of the line bytes). */
  hash?: string;
}

/** What the signature checks need. */
export interface SignatureCheckContext {
  /** Name of the log in messages. */
  logName: string;
  /** The agent cards. */
  cards: AgentCardSet;
  /** Reads a sidecar; absent when every job brings its own (looked up on the main thread). */
  signatures?: (artefact: string, hash: string) => SignatureFetch;
  /** The operator key (pure-JS HMAC, see gate.ts), or undefined to skip the HMAC check. */
  hmacKey?: KeyedHmacSha256;
  /**
   * How sidecars are named in messages: their path in a lineage folder (default), or the
   * member name in a compliance pack (`signatures/<entry-hex>.jws`).
   */
  sidecarNames?: "lineage" | "pack";
}

/** One entry whose signature is to be checked: the line and the entry fields the checks read. */
export interface SignatureJob {
  /** 1-based line number. */
  line: number;
  /** The line bytes. */
  bytes: Uint8Array;
  /** Its entry hash. */
  hash: string;
  /** The entry's artefact_path. */
  artefact: string;
  /** The entry's agent_id. */
  agentId: string;
  /** The entry's agent_card_kid. */
  kid: string;
  /** The entry's operator_hmac. */
  operatorHmac: string;
  /** Its sidecar, when looked up already. */
  fetched?: SignatureFetch;
}

/** The job for an entry. */
export function signatureJob(
  line: number,
  bytes: Uint8Array,
  entry: LineageEntry,
  hash: string,
): SignatureJob {
  return {
    line,
    bytes,
    hash,
    artefact: entry.artefact_path,
    agentId: entry.agent_id,
    kid: entry.agent_card_kid,
    operatorHmac: entry.operator_hmac,
  };
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

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The operator HMAC of an entry whose canonical bytes are `line`. The HMAC covers the line
 * with operator_hmac blanked: in canon bytes the first `"operator_hmac":"` is the top-level
 * key (inside a string every `"` is escaped, and the one nested object an entry may hold,
 * `model_ref`, has no such key), so the
 * input is the line with the value cut out. A value that needs escaping is re-serialised.
 */
function hmacMatches(
  line: number,
  bytes: Uint8Array,
  operatorHmac: string,
  key: KeyedHmacSha256,
  logName: string,
): boolean {
  let expected: string | undefined;
  const at = /^[0-9A-Za-z]*$/.test(operatorHmac) ? indexOfBytes(bytes, MARKER) : -1;
  if (at < 0) {
    // Rare (a forged or odd value): re-serialise the entry, parsing the line again.
    const entry = parseLine(line, bytes, false, logName).entry;
    if (entry === undefined) return false;
    expected = computeOperatorHmac(entry, key);
  } else {
    const from = at + MARKER.length;
    expected = key.hex(bytes.subarray(0, from), bytes.subarray(from + operatorHmac.length));
  }
  return constantTimeEqual(expected, operatorHmac);
}

function issueAdder(
  line: number,
  logName: string,
  holder: { issues: GateIssue[] | null },
): (kind: GateIssueKind, detail: string, extra?: Partial<GateIssue>) => void {
  return (kind, detail, extra = {}) => {
    const issue: GateIssue = {
      kind,
      line,
      ...extra,
      message: `${logName}:${line}: ${kind}: ${detail}`,
    };
    if (holder.issues === null) holder.issues = [issue];
    else holder.issues.push(issue);
  };
}

/**
 * Framing, byte binding, entry rules and the entry hash (`knownHash` when the caller hashed the
 * same bytes already): all that needs no sidecar.
 */
export function parseLine(
  line: number,
  bytes: Uint8Array,
  tooLong: boolean,
  logName: string,
  knownHash?: string,
): ParsedLine {
  // The plain canonical form every writer produces is read straight from its bytes; any other
  // line (every bad one included) goes the strict way below, which words its problems.
  const plain = tooLong ? undefined : plainEntryOfLine(bytes);
  if (plain !== undefined) {
    return { line, issues: null, entry: plain, hash: knownHash ?? "sha256:" + sha256Hex(bytes) };
  }
  const holder: { issues: GateIssue[] | null } = { issues: null };
  const add = issueAdder(line, logName, holder);
  if (tooLong) {
    add("non-canonical line bytes", "line is longer than the limit");
    return { line, issues: holder.issues };
  }
  const parsed = parseCanonicalLine(bytes, "canon");
  if (!parsed.ok) {
    add(
      "non-canonical line bytes",
      bytes.length === 0 ? "empty line" : `${parsed.reason}: ${parsed.detail}`,
    );
    return { line, issues: holder.issues };
  }
  let entry: LineageEntry;
  try {
    entry = parseEntry(parsed.value);
  } catch (error) {
    add("invalid entry", (error as Error).message);
    return { line, issues: holder.issues };
  }
  // Native one-shot: ~1 µs a line against ~3 µs in pure JS, and (measured on a 100 000-entry
  // pack) no higher peak: `hash()` keeps no hash object alive.
  return { line, issues: null, entry, hash: knownHash ?? "sha256:" + sha256Hex(bytes) };
}

/** Kid binding, the JWS, the Ed25519 signature and the operator HMAC of one entry. */
function checkSignature(
  job: SignatureJob,
  fetched: SignatureFetch,
  ctx: SignatureCheckContext,
): GateIssue[] | null {
  const { line, bytes, hash, artefact } = job;
  const holder: { issues: GateIssue[] | null } = { issues: null };
  const add = issueAdder(line, ctx.logName, holder);
  const ids = { entry_hash: hash, artefact };
  const who = () => `agent ${JSON.stringify(job.agentId)} kid ${JSON.stringify(job.kid)}`;
  const pack = ctx.sidecarNames === "pack";
  const sidecar = () => pack ? signatureMemberName(hash) : signaturePath(artefact, hash);

  // Kid binding: a card for exactly the (agent_id, kid) the entry signed with.
  const card = ctx.cards.lookup(job.agentId, job.kid);
  if (card.status === "missing") {
    add("kid binding cannot be established", `no agent card for ${who()}`, ids);
  } else if (card.status === "conflict") {
    add(
      "kid binding cannot be established",
      `${who()} has conflicting cards (${card.locations.join(", ")})`,
      ids,
    );
  }
  let jws: ParsedDetachedJws | undefined;
  if (fetched === undefined) {
    add("invalid signature", `no signature ${pack ? "member" : "sidecar"} ${sidecar()}`, {
      ...ids,
      location: sidecar(),
    });
  } else if (!(fetched instanceof Uint8Array)) {
    add("invalid signature", `${sidecar()}: ${fetched.problem}`, { ...ids, location: sidecar() });
  } else {
    try {
      jws = parseDetachedJws(fetched);
    } catch (error) {
      const why = error instanceof JwsFormatError ? error.message : String(error);
      add("invalid signature", `${sidecar()}: malformed JWS: ${why}`, {
        ...ids,
        location: sidecar(),
      });
    }
  }
  if (jws !== undefined && jws.header.kid !== job.kid) {
    add(
      "kid binding mismatch",
      `entry kid ${JSON.stringify(job.kid)} but JWS header kid ${JSON.stringify(jws.header.kid)}`,
      { ...ids, location: sidecar() },
    );
  } else if (jws !== undefined && card.status === "found") {
    if (!verifyDetachedJws(jws, { payload: bytes, publicKey: card.publicKey })) {
      add("invalid signature", `signature does not verify with the card of ${who()}`, {
        ...ids,
        location: sidecar(),
      });
    }
  }
  if (
    ctx.hmacKey !== undefined &&
    !hmacMatches(line, bytes, job.operatorHmac, ctx.hmacKey, ctx.logName)
  ) {
    add("HMAC mismatch", "operator_hmac does not match the operator key", ids);
  }
  return holder.issues;
}

/**
 * Every signature check of an entry on its clean path, building nothing: true only when all
 * of them pass (a card found for its agent and kid, its sidecar read, a JWS scanned with that
 * kid, the Ed25519 signature, the operator HMAC). False says only "not all clean":
 * {@linkcode checkSignature} then runs every check again and words each problem.
 */
function signatureClean(
  line: number,
  bytes: Uint8Array,
  entry: LineageEntry,
  fetched: SignatureFetch,
  ctx: SignatureCheckContext,
): boolean {
  if (!(fetched instanceof Uint8Array)) return false;
  const card = ctx.cards.lookup(entry.agent_id, entry.agent_card_kid);
  if (card.status !== "found") return false;
  const jws = scanDetachedJws(fetched);
  if (jws === undefined || jws.kid !== entry.agent_card_kid) return false;
  if (!verifyScannedJws(jws, bytes, card.publicKey)) return false;
  return ctx.hmacKey === undefined ||
    hmacMatches(line, bytes, entry.operator_hmac, ctx.hmacKey, ctx.logName);
}

/** The signature a batch brought for its line `i` (archives), or undefined when none. */
function carriedSidecar(
  sidecars: NonNullable<LineBatch["sidecars"]>,
  offsets: { data: number; problem: number },
  i: number,
): SignatureFetch {
  const length = sidecars.lengths[i];
  if (length >= 0) {
    const bytes = sidecars.data.subarray(offsets.data, offsets.data + length);
    offsets.data += length;
    return bytes;
  }
  if (length === -2) return { problem: sidecars.problems[offsets.problem++] };
  return undefined;
}

/** The result without its whole entries: only their links (what a worker sends back then). */
export function linksOnly(result: BatchResult): BatchResult {
  const links = result.links.map((e) =>
    e === null ? null : {
      artefact_path: e.artefact_path,
      parent_hashes: e.parent_hashes,
      content_hash: e.content_hash,
    }
  );
  return { links, hashes: result.hashes, issues: result.issues };
}

/**
 * Checks every line of a batch: framing and byte binding, entry rules and the entry hash, then
 * for entries the kid binding, the JWS, the Ed25519 signature and the operator HMAC. The
 * signatures come with the batch (archives) or are read through `ctx.signatures`.
 */
export function checkBatch(
  batch: LineBatch,
  ctx: SignatureCheckContext,
): BatchResult & { entries: (LineageEntry | null)[] } {
  const n = batch.meta.length / 3;
  const entries: (LineageEntry | null)[] = new Array(n);
  const result = {
    links: entries,
    entries,
    hashes: new Array<string | null>(n),
    issues: [] as GateIssue[],
  };
  const offsets = { data: 0, problem: 0 };
  let at = 0;
  for (let i = 0; i < n; i++) {
    const line = batch.meta[3 * i];
    const length = batch.meta[3 * i + 1];
    const bytes = batch.data.subarray(at, at + length);
    at += length;
    const carried = batch.sidecars === undefined
      ? undefined
      : carriedSidecar(batch.sidecars, offsets, i);
    const parsed = parseLine(
      line,
      bytes,
      (batch.meta[3 * i + 2] & LINE_TOO_LONG) !== 0,
      ctx.logName,
      batch.hashes?.[i],
    );
    if (parsed.issues !== null) result.issues.push(...parsed.issues);
    const { entry, hash } = parsed;
    if (entry === undefined || hash === undefined) {
      entries[i] = null;
      result.hashes[i] = null;
      continue;
    }
    entries[i] = entry;
    result.hashes[i] = hash;
    const fetched = batch.sidecars !== undefined || ctx.signatures === undefined
      ? carried
      : ctx.signatures(entry.artefact_path, hash);
    if (signatureClean(line, bytes, entry, fetched, ctx)) continue;
    const issues = checkSignature(signatureJob(line, bytes, entry, hash), fetched, ctx);
    if (issues !== null) result.issues.push(...issues);
  }
  return result;
}
