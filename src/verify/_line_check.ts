// The per-line halves of the gate. `parseLine` (framing, byte binding, entry rules, entry
// hash) runs on the main thread in log order, feeding the order-dependent checks (dangling
// parents, forks) at once; `checkSignature` (kid binding, JWS, Ed25519, operator HMAC) depends
// on nothing around the line, so its batches run on the main thread or in workers, in any
// order, and report only issues.
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
import { signatureMemberName } from "./pack_format.ts";
import type { GateIssue, GateIssueKind, SignatureFetch } from "./types.ts";

/** Lines whose signatures to check: their bytes back to back, and (line number, length) each. */
export interface RawBatch {
  /** The lines' bytes. */
  data: Uint8Array;
  /** Two int32 per line: 1-based line number, byte length. */
  meta: Int32Array;
  /**
   * Five strings per line: entry hash, artefact_path, agent_id, agent_card_kid, operator_hmac.
   * Absent: the lines are parsed again for them.
   */
  fields?: string[];
  /**
   * The sidecars when the main thread looked them up (archives); absent: read them here. One
   * buffer for the batch, and per line its length, -1 for none, -2 for a problem.
   */
  sidecars?: { data: Uint8Array; lengths: Int32Array; problems: string[] };
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

const JOB_FIELDS = 5;

/** Packs jobs for a worker: line bytes back to back, and the entry fields the checks read. */
export function packJobs(jobs: readonly SignatureJob[], withFetched: boolean): RawBatch {
  let size = 0;
  for (const j of jobs) size += j.bytes.length;
  const data = new Uint8Array(size);
  const meta = new Int32Array(jobs.length * 2);
  const fields: string[] = [];
  let at = 0;
  jobs.forEach((j, i) => {
    data.set(j.bytes, at);
    at += j.bytes.length;
    meta[2 * i] = j.line;
    meta[2 * i + 1] = j.bytes.length;
    fields.push(j.hash, j.artefact, j.agentId, j.kid, j.operatorHmac);
  });
  if (!withFetched) return { data, meta, fields };
  // One buffer, not a clone per signature: views would post their whole backing buffer, and
  // 32 small buffers a batch cost more to post than the copy.
  let sigSize = 0;
  for (const j of jobs) if (j.fetched instanceof Uint8Array) sigSize += j.fetched.length;
  const sigData = new Uint8Array(sigSize);
  const lengths = new Int32Array(jobs.length);
  const problems: string[] = [];
  let sigAt = 0;
  jobs.forEach((j, i) => {
    const f = j.fetched;
    if (f instanceof Uint8Array) {
      sigData.set(f, sigAt);
      sigAt += f.length;
      lengths[i] = f.length;
    } else if (f === undefined) {
      lengths[i] = -1;
    } else {
      lengths[i] = -2;
      problems.push(f.problem);
    }
  });
  return { data, meta, fields, sidecars: { data: sigData, lengths, problems } };
}

/** Unpacks a batch into jobs (parsing the lines again when it carries no fields). */
export function unpackJobs(batch: RawBatch, logName: string): SignatureJob[] {
  const jobs: SignatureJob[] = [];
  const sidecars = batch.sidecars;
  let at = 0;
  let sigAt = 0;
  let problem = 0;
  for (let i = 0; i < batch.meta.length / 2; i++) {
    const line = batch.meta[2 * i];
    const bytes = batch.data.subarray(at, at + batch.meta[2 * i + 1]);
    at += bytes.length;
    let fields: string[];
    let f = i * JOB_FIELDS;
    if (batch.fields !== undefined) {
      fields = batch.fields;
    } else {
      // The main thread sent only lines that parsed; the same bytes parse the same way here.
      const parsed = parseLine(line, bytes, false, logName);
      if (parsed.entry === undefined || parsed.hash === undefined) {
        throw new Error(`gate: line ${line} did not parse again`);
      }
      const job = signatureJob(line, bytes, parsed.entry, parsed.hash);
      fields = [job.hash, job.artefact, job.agentId, job.kid, job.operatorHmac];
      f = 0;
    }
    let fetched: SignatureFetch;
    if (sidecars !== undefined) {
      const length = sidecars.lengths[i];
      if (length >= 0) {
        fetched = sidecars.data.subarray(sigAt, sigAt + length);
        sigAt += length;
      } else if (length === -2) {
        fetched = { problem: sidecars.problems[problem++] };
      }
    }
    jobs.push({
      line,
      bytes,
      hash: fields[f],
      artefact: fields[f + 1],
      agentId: fields[f + 2],
      kid: fields[f + 3],
      operatorHmac: fields[f + 4],
      fetched,
    });
  }
  return jobs;
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
function hmacMatches(job: SignatureJob, key: KeyedHmacSha256, logName: string): boolean {
  const { bytes, operatorHmac } = job;
  let expected: string | undefined;
  const at = /^[0-9A-Za-z]*$/.test(operatorHmac) ? indexOfBytes(bytes, MARKER) : -1;
  if (at < 0) {
    // Rare (a forged or odd value): re-serialise the entry, parsing the line again. (Jobs do
    // not keep the parsed entry: they wait for a worker long enough to be promoted to V8's old
    // generation, and the entry is most of their size.)
    const entry = parseLine(job.line, bytes, false, logName).entry;
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

/** Framing, byte binding, entry rules and the entry hash: all that needs no sidecar. */
export function parseLine(
  line: number,
  bytes: Uint8Array,
  tooLong: boolean,
  logName: string,
): ParsedLine {
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
  return { line, issues: null, entry, hash: "sha256:" + sha256Hex(bytes) };
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
  if (ctx.hmacKey !== undefined && !hmacMatches(job, ctx.hmacKey, ctx.logName)) {
    add("HMAC mismatch", "operator_hmac does not match the operator key", ids);
  }
  return holder.issues;
}

/**
 * Checks the signatures of a batch of jobs; returns only the issues found (in job order).
 * Sidecars are read through `ctx.signatures` when it is set, else each job brings its own.
 */
export function checkSignatures(
  jobs: readonly SignatureJob[],
  ctx: SignatureCheckContext,
): GateIssue[] {
  const out: GateIssue[] = [];
  for (const job of jobs) {
    const fetched = ctx.signatures === undefined
      ? job.fetched
      : ctx.signatures(job.artefact, job.hash);
    const issues = checkSignature(job, fetched, ctx);
    if (issues !== null) out.push(...issues);
  }
  return out;
}
