// The per-line half of the gate: everything about one log line that does not depend on the
// lines around it (byte binding, entry rules, kid binding, JWS, Ed25519, operator HMAC). It
// runs on batches, on the main thread or in a worker, and returns compact summaries; the
// order-dependent checks (dangling parents, forks) stay with the caller.
import { parseCanonicalLine } from "../canonical/mod.ts";
import {
  JwsFormatError,
  type KeyedHmacSha256,
  type ParsedDetachedJws,
  parseDetachedJws,
  sha256Hex,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import {
  type AgentCardSet,
  computeOperatorHmac,
  type LineageEntry,
  parseEntry,
  signaturePath,
} from "../lineage/mod.ts";
import type { GateIssue, GateIssueKind, SignatureFetch } from "./types.ts";

/** Lines to check: their bytes back to back, and (line number, length, too long) each. */
export interface RawBatch {
  /** The lines' bytes. */
  data: Uint8Array;
  /** Three int32 per line: 1-based line number, byte length, 1 when longer than the limit. */
  meta: Int32Array;
}

/** What one line turned out to be. */
export interface LineSummary {
  /** 1-based line number. */
  line: number;
  /** Its issues except dangling parents, in check order; null when none. */
  issues: GateIssue[] | null;
  /** The entry's facts the order-dependent checks need; absent for a line that is no entry. */
  hash?: string;
  /** The artefact. */
  artefact?: string;
  /** The parents. */
  parents?: string[];
  /** The content hash. */
  content?: string;
  /** The parsed entry and its bytes, kept only when the gate has an entry observer. */
  kept?: { entry: LineageEntry; bytes: Uint8Array };
}

/** What the per-line checks need. */
export interface LineCheckContext {
  /** Name of the log in messages. */
  logName: string;
  /** The agent cards. */
  cards: AgentCardSet;
  /** Finds a sidecar. */
  signatures: (artefact: string, hash: string) => SignatureFetch | Promise<SignatureFetch>;
  /** The operator key (pure-JS HMAC, see gate.ts), or undefined to skip the HMAC check. */
  hmacKey?: KeyedHmacSha256;
  /** Keep each parsed entry and its bytes in its summary (for the gate's entry observer). */
  keepEntries?: boolean;
}

/** Builds a batch from line records. */
export class RawBatchBuilder {
  #parts: Uint8Array[] = [];
  #size = 0;
  #meta: number[] = [];

  /** Lines so far. */
  get length(): number {
    return this.#meta.length / 3;
  }

  /** Adds one line (its bytes are copied when the batch is built). */
  add(line: number, bytes: Uint8Array, tooLong: boolean): void {
    this.#parts.push(bytes);
    this.#size += bytes.length;
    this.#meta.push(line, bytes.length, tooLong ? 1 : 0);
  }

  /** The batch, in fresh buffers. */
  build(): RawBatch {
    const data = new Uint8Array(this.#size);
    let at = 0;
    for (const p of this.#parts) {
      data.set(p, at);
      at += p.length;
    }
    return { data, meta: Int32Array.from(this.#meta) };
  }
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
 * key (inside a string every `"` is escaped and no entry field is a nested object), so the
 * input is the line with the value cut out. A value that needs escaping is re-serialised.
 */
function hmacMatches(entry: LineageEntry, line: Uint8Array, key: KeyedHmacSha256): boolean {
  let expected: string;
  const at = /^[0-9A-Za-z]*$/.test(entry.operator_hmac) ? indexOfBytes(line, MARKER) : -1;
  if (at < 0) {
    expected = computeOperatorHmac(entry, key);
  } else {
    const from = at + MARKER.length;
    expected = key.hex(line.subarray(0, from), line.subarray(from + entry.operator_hmac.length));
  }
  return constantTimeEqual(expected, entry.operator_hmac);
}

async function checkLine(
  line: number,
  bytes: Uint8Array,
  tooLong: boolean,
  ctx: LineCheckContext,
): Promise<LineSummary> {
  let issues: GateIssue[] | null = null;
  const add = (kind: GateIssueKind, detail: string, extra: Partial<GateIssue> = {}) => {
    const issue: GateIssue = {
      kind,
      line,
      ...extra,
      message: `${ctx.logName}:${line}: ${kind}: ${detail}`,
    };
    if (issues === null) issues = [issue];
    else issues.push(issue);
  };
  if (tooLong) {
    add("non-canonical line bytes", "line is longer than the limit");
    return { line, issues };
  }
  const parsed = parseCanonicalLine(bytes, "canon");
  if (!parsed.ok) {
    add(
      "non-canonical line bytes",
      bytes.length === 0 ? "empty line" : `${parsed.reason}: ${parsed.detail}`,
    );
    return { line, issues };
  }
  let entry: LineageEntry;
  try {
    entry = parseEntry(parsed.value);
  } catch (error) {
    add("invalid entry", (error as Error).message);
    return { line, issues };
  }
  const hash = "sha256:" + sha256Hex(bytes);
  const ids = { entry_hash: hash, artefact: entry.artefact_path };
  const who = () =>
    `agent ${JSON.stringify(entry.agent_id)} kid ${JSON.stringify(entry.agent_card_kid)}`;
  const sidecar = () => signaturePath(entry.artefact_path, hash);

  // Kid binding: a card for exactly the (agent_id, kid) the entry signed with.
  const card = ctx.cards.lookup(entry.agent_id, entry.agent_card_kid);
  if (card.status === "missing") {
    add("kid binding cannot be established", `no agent card for ${who()}`, ids);
  } else if (card.status === "conflict") {
    add(
      "kid binding cannot be established",
      `${who()} has conflicting cards (${card.locations.join(", ")})`,
      ids,
    );
  }
  const lookup = ctx.signatures(entry.artefact_path, hash);
  // Awaiting only real promises keeps a synchronous lookup from yielding between lines.
  const fetched = lookup instanceof Promise ? await lookup : lookup;
  let jws: ParsedDetachedJws | undefined;
  if (fetched === undefined) {
    add("invalid signature", `no signature sidecar ${sidecar()}`, { ...ids, location: sidecar() });
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
  if (jws !== undefined && jws.header.kid !== entry.agent_card_kid) {
    add(
      "kid binding mismatch",
      `entry kid ${JSON.stringify(entry.agent_card_kid)} but JWS header kid ${
        JSON.stringify(jws.header.kid)
      }`,
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
  if (ctx.hmacKey !== undefined && !hmacMatches(entry, bytes, ctx.hmacKey)) {
    add("HMAC mismatch", "operator_hmac does not match the operator key", ids);
  }
  return {
    line,
    issues,
    hash,
    artefact: entry.artefact_path,
    parents: entry.parent_hashes,
    content: entry.content_hash,
    ...(ctx.keepEntries ? { kept: { entry, bytes } } : {}),
  };
}

/** Checks every line of a batch, in order. */
export async function checkLines(batch: RawBatch, ctx: LineCheckContext): Promise<LineSummary[]> {
  const out: LineSummary[] = [];
  let at = 0;
  for (let i = 0; i < batch.meta.length; i += 3) {
    const length = batch.meta[i + 1];
    const bytes = batch.data.subarray(at, at + length);
    at += length;
    out.push(await checkLine(batch.meta[i], bytes, batch.meta[i + 2] === 1, ctx));
  }
  return out;
}
