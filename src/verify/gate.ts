// The lineage gate (FORMATS.md §4): every check, in order, over a streamed log, a signature
// lookup and a card set. It trusts nothing it has not checked and never throws on bad input:
// every problem becomes one structured issue. Lines are parsed here, in log order, and feed
// the order-dependent checks at once; the signature checks (the costly part) run in batches on
// this thread or shared with workers, and their issues are put back in line order at the end.
import {
  checkLogAgainstCheckpoints,
  type CheckpointUnderTest,
  keyedHmacSha256Pure,
  sha256Hex,
} from "../crypto/mod.ts";
import {
  AgentCardSet,
  chunksOf,
  digestInto,
  DigestTable,
  LineageAnalyzer,
  type LineageEntry,
  LineFramer,
  verifyForeignAttestation,
} from "../lineage/mod.ts";
import type { FactFields } from "../pack_format/mod.ts";
import {
  type EntryLinks,
  LINE_TOO_LONG,
  type LineBatch,
  type SignatureCheckContext,
} from "./_line_check.ts";
import {
  INLINE_FIRST_BATCHES,
  inlineRunner,
  pooledRunner,
  type SignatureBatchRunner,
} from "./_pool.ts";
import type { CheckedBatch, ResultShape } from "./_shaped_batch.ts";
import { LeafDigests } from "./_leaf_digests.ts";
import { indexSidecars, orphanedSidecars, sidecarReader } from "./_sidecars.ts";
import type {
  CardFile,
  ForeignAttestationReport,
  GateCheckpointReport,
  GateInput,
  GateIssue,
  GateOptions,
  GateResult,
  SignatureFetch,
} from "./types.ts";

async function collectCards(
  cards: GateInput["cards"],
): Promise<{ set: AgentCardSet; files?: CardFile[] }> {
  if (cards instanceof AgentCardSet) return { set: cards };
  const set = new AgentCardSet();
  const files: CardFile[] = [];
  for await (const file of cards) {
    files.push(file);
    if ("problem" in file) set.addProblem(file.location, file.problem);
    else set.add(file.location, file.bytes);
  }
  return { set, files };
}

// Lines go out in batches of this many; at most MAX_IN_FLIGHT batches are out (at workers or
// waiting to be consumed in order) before this thread waits for the oldest (each holds ~60 KB
// of lines). 128 lines a batch rather than 32: a quarter of the messages, replies and event-
// loop turns (see DESIGN "Verifier and pack performance" for the paired figures).
const BATCH_LINES = 128;
const MAX_IN_FLIGHT = 16;
const SLICE_BYTES = 16 * 1024;
const BATCH_BYTES = 128 * 1024;
/** Largest {@linkcode GateInput.expectedEntries} the tables are pre-sized for (~170 B each). */
const MAX_EXPECTED_ENTRIES = 2_000_000;
/** Flag of the log's last line when it has no newline (never a checkpoint leaf). */
const LINE_OPEN = 2;

/** One buffer for a batch's signatures, and per line its length (-1 none, -2 a problem). */
function packSidecars(fetched: readonly SignatureFetch[]): NonNullable<LineBatch["sidecars"]> {
  let size = 0;
  for (const f of fetched) if (f instanceof Uint8Array) size += f.length;
  const data = new Uint8Array(size);
  const lengths = new Int32Array(fetched.length);
  const problems: string[] = [];
  let at = 0;
  fetched.forEach((f, i) => {
    if (f instanceof Uint8Array) {
      data.set(f, at);
      at += f.length;
      lengths[i] = f.length;
    } else if (f === undefined) {
      lengths[i] = -1;
    } else {
      lengths[i] = -2;
      problems.push(f.problem);
    }
  });
  return { data, lengths, problems };
}

/**
 * Worker threads the gate uses by default: one per core beyond this thread's, up to 3. Each
 * costs ~30-40 MiB (its own JS heap); on 2 cores one worker takes the 100 000-entry gate from
 * ~14 s to ~9 s.
 */
export function defaultGateWorkers(cores: number = navigator.hardwareConcurrency ?? 1): number {
  return Math.max(0, Math.min(3, cores - 1));
}

/** True when a log of `lines` lines is long enough for the gate to hand batches to workers. */
export function gateUsesWorkers(lines: number): boolean {
  return lines > INLINE_FIRST_BATCHES * BATCH_LINES;
}

/** Issue order within one line: its own checks first, then a dangling parent. */
function byLine(a: GateIssue, b: GateIssue): number {
  const rank = (i: GateIssue) => (i.kind === "dangling parent_hash" ? 1 : 0);
  return (a.line ?? 0) - (b.line ?? 0) || rank(a) - rank(b);
}

/**
 * Runs every lineage check of FORMATS.md §4 over `input`, streaming the log: framing and byte
 * binding, entry rules, kid binding (card for the signed kid; JWS header kid = entry kid), the
 * Ed25519 signature, the operator HMAC, dangling parents (a parent must be an earlier entry),
 * unresolved forks and conflicting agent cards.
 *
 * @example
 * ```ts ignore
 * const result = await runLineageGate({ log, signatures, cards, operatorKey });
 * result.ok ? "PASS" : `FAIL (${result.issues.length} issues)`;
 * ```
 */
export async function runLineageGate(
  input: GateInput,
  options: GateOptions = {},
): Promise<GateResult> {
  const logName = input.logName ?? "log.jsonl";
  const { set: cards, files: cardFiles } = await collectCards(input.cards);
  const lookup = input.signatures;
  // A lookup function (an archive) is called here; a folder is read by whichever thread
  // checks the batch.
  const fetchHere = typeof lookup === "function" ? lookup : undefined;
  // Looking for orphans lists every sidecar folder anyway: listed once, up front, and shared.
  const sidecarIndex = input.orphans === true && typeof lookup !== "function"
    ? indexSidecars(lookup.directory)
    : undefined;
  const ctx: SignatureCheckContext = {
    logName,
    cards,
    signatures: typeof lookup === "function"
      ? undefined
      : sidecarReader(lookup.directory, sidecarIndex),
    // Pure-JS HMAC: native hash objects are freed only by a major GC, and the 300 000 of a
    // 100 000-entry log (entry hash + HMAC) would add tens of MB to the peak.
    hmacKey: input.operatorKey === undefined ? undefined : keyedHmacSha256Pure(input.operatorKey),
    sidecarNames: input.sidecarNames,
  };
  if (input.onEntry !== undefined && input.window !== undefined) {
    throw new TypeError("runLineageGate: give onEntry or window, not both");
  }
  // What goes back of each entry: whole entries only for an onEntry caller.
  const shape: ResultShape = input.onEntry !== undefined
    ? "entries"
    : input.window !== undefined
    ? "window"
    : "links";
  // Workers re-parse the card files, so they need them as files.
  const runner: SignatureBatchRunner = cardFiles !== undefined && (options.workers ?? 0) > 0
    ? pooledRunner(
      options.workers ?? 0,
      ctx,
      {
        logName,
        lineageDir: typeof lookup === "function" ? undefined : lookup.directory,
        sidecarIndex,
        cards: cardFiles,
        operatorKey: input.operatorKey,
        sidecarNames: input.sidecarNames,
        shape,
      },
      options.workerUrl,
      options.started,
    )
    : inlineRunner(ctx, shape);

  // Tables sized for the expected entries up front (a hint, capped: a wrong count costs at most
  // memory or time, never a check). A lineage folder listed for orphans says how many sidecars
  // it holds, one per entry it signed: without it the tables grow by doubling from 4096, each
  // step rehashing every key (~5 % of the main thread's samples at 100 000 entries).
  const hint = input.expectedEntries ?? (sidecarIndex?.starts.at(-1) ?? 0);
  const expected = Number.isFinite(hint)
    ? Math.min(MAX_EXPECTED_ENTRIES, Math.max(0, Math.floor(hint)))
    : 0;
  const analyzer = new LineageAnalyzer(expected);
  const seen = new DigestTable(Math.max(4096, expected)); // entry hash → line
  // The entry being fed's hash (bytes 0-31) and single parent (32-63), decoded once.
  const digests = new Uint8Array(64);
  const dangling: { issue: GateIssue; parent: string }[] = [];
  // Every line's issues (framing, entry rules, signatures, dangling parents); sorted at the end.
  const lineIssues: GateIssue[] = [];
  const attested = new Map<string, { content_hash: string; artefact_path: string } | undefined>();
  for (const f of input.foreignAttestations ?? []) attested.set(f.entry_hash, undefined);
  let lines = 0;
  let entries = 0;
  let unterminated = false;
  // Line digests for the checkpoint check (only when there are checkpoints to check).
  const cp = input.checkpoints;
  const leaves = cp === undefined ? undefined : new LeafDigests(
    (cp.review?.usable.length ?? 0) + (cp.external?.length ?? 0) === 0,
    expected,
  );
  // The batch being framed: its lines' bytes back to back (in one reused buffer) and, per line,
  // number, length, flags.
  let batchBytes = new Uint8Array(BATCH_BYTES);
  let batchUsed = 0;
  let batchMeta: number[] = [];
  // Full batches wait here until the loop below hands them out (between them it lets worker
  // replies in, so the split between threads follows their speed).
  const ready: LineBatch[] = [];
  // Batches handed out, in log order; their results are consumed in that order.
  const handedOut: { batch: LineBatch; result?: CheckedBatch; done: Promise<void> }[] = [];

  function closeBatch(): void {
    if (batchMeta.length === 0) return;
    // A copy of exactly the bytes used: a view would send (and keep) the whole framing buffer,
    // which is reused for the next batch.
    ready.push({ data: batchBytes.slice(0, batchUsed), meta: Int32Array.from(batchMeta) });
    batchUsed = 0;
    batchMeta = [];
  }

  /** Archives: each line's hash, and the signature looked up by it, travel with the batch. */
  async function withSidecars(batch: LineBatch): Promise<LineBatch> {
    if (fetchHere === undefined) return batch;
    const hashes: string[] = [];
    let at = 0;
    for (let i = 0; i < batch.meta.length; i += 3) {
      hashes.push("sha256:" + sha256Hex(batch.data.subarray(at, at + batch.meta[i + 1])));
      at += batch.meta[i + 1];
    }
    const looked = hashes.map((h) => fetchHere(h));
    const fetched = looked.some((f) => f instanceof Promise) ? await Promise.all(looked) : looked;
    return { ...batch, hashes, sidecars: packSidecars(fetched as SignatureFetch[]) };
  }

  async function dispatchReady(): Promise<void> {
    for (const framed of ready.splice(0)) {
      await runner.turn();
      const batch = await withSidecars(framed);
      const run = runner.run(batch);
      const slot: (typeof handedOut)[number] = { batch, done: Promise.resolve() };
      if (run instanceof Promise) slot.done = run.then((r) => void (slot.result = r));
      else slot.result = run;
      handedOut.push(slot);
      consumeSettled();
    }
    while (handedOut.length > MAX_IN_FLIGHT) {
      await handedOut[0].done;
      consumeSettled();
    }
  }

  /** Feeds the results of the oldest batches, as long as they are in, to the in-order checks. */
  function consumeSettled(): void {
    while (handedOut.length > 0 && handedOut[0].result !== undefined) {
      const { batch, result } = handedOut.shift() as { batch: LineBatch; result: CheckedBatch };
      consume(batch, result);
    }
  }

  function consume(batch: LineBatch, result: CheckedBatch): void {
    lineIssues.push(...result.issues);
    let at = 0;
    for (let i = 0; i < batch.meta.length / 3; i++) {
      const line = batch.meta[3 * i];
      const bytes = batch.data.subarray(at, at + batch.meta[3 * i + 1]);
      at += bytes.length;
      const flags = batch.meta[3 * i + 2];
      const links = result.links[i];
      const hash = result.hashes[i];
      // True when onEntry decoded the entry hash into digests[0..32] (the leaf reuses it).
      const decoded = links !== null && hash !== null &&
        onEntry(line, links, hash, bytes, result.entries?.[i], result.window?.entries[i]);
      // A checkpoint covers terminated lines only: an open tail is not a line yet.
      if (leaves !== undefined && (flags & LINE_OPEN) === 0) {
        if (decoded) leaves.addDigest(digests, 0);
        else leaves.add(hash ?? undefined, bytes, (flags & LINE_TOO_LONG) !== 0);
      }
    }
    if (result.window !== undefined) input.window?.onCsvRows(result.window.csv);
  }

  function onEntry(
    line: number,
    entry: EntryLinks,
    hash: string,
    bytes: Uint8Array,
    whole: LineageEntry | null | undefined,
    facts: FactFields | null | undefined,
  ): boolean {
    entries++;
    // The entry hash and a single parent decoded once, for every digest table below.
    const single = entry.parent_hashes.length === 1;
    const hashDecoded = digestInto(hash, digests, 0);
    const decoded = hashDecoded && (!single || digestInto(entry.parent_hashes[0], digests, 32));
    for (const parent of entry.parent_hashes) {
      const earlier = decoded && single ? seen.hasDigest(digests, 32) : seen.has(parent);
      if (earlier || input.knownParents?.has(parent)) continue;
      const issue: GateIssue = {
        kind: "dangling parent_hash",
        line,
        entry_hash: hash,
        artefact: entry.artefact_path,
        message: "",
      };
      lineIssues.push(issue);
      dangling.push({ issue, parent });
    }
    if (decoded) seen.addDigest(digests, 0, line);
    else if (!seen.has(hash)) seen.set(hash, line);
    // Workers send whole entries back exactly when there is an `onEntry` to give them to.
    if (input.onEntry !== undefined && whole) input.onEntry(whole, hash, bytes);
    // …and the window's fact fields exactly when there is a window consumer (and no onEntry).
    if (input.window !== undefined && facts) {
      input.window.onEntry(facts, hash, decoded ? digests : undefined);
    }
    if (attested.size > 0 && attested.has(hash)) {
      attested.set(hash, { content_hash: entry.content_hash, artefact_path: entry.artefact_path });
    }
    analyzer.add({
      hash,
      artefact_path: entry.artefact_path,
      parent_hashes: entry.parent_hashes,
      content_hash: entry.content_hash,
    }, decoded ? digests : undefined);
    return hashDecoded;
  }

  const framer = new LineFramer((l) => {
    lines = l.line;
    if (!l.terminated) unterminated = true;
    // The line bytes may be a view into a chunk that is reused: the batch keeps a copy.
    if (batchUsed + l.bytes.length > batchBytes.length) {
      closeBatch();
      if (l.bytes.length > batchBytes.length) batchBytes = new Uint8Array(l.bytes.length);
    }
    batchBytes.set(l.bytes, batchUsed);
    batchUsed += l.bytes.length;
    batchMeta.push(
      l.line,
      l.bytes.length,
      (l.tooLong ? LINE_TOO_LONG : 0) | (l.terminated ? 0 : LINE_OPEN),
    );
    if (batchMeta.length >= BATCH_LINES * 3) closeBatch();
  }, { maxLineBytes: input.maxLineBytes });
  try {
    for await (const chunk of chunksOf(input.log)) {
      // Slices, so a large chunk (an archive member may come whole) is handed out as it goes.
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
        framer.push(chunk.subarray(at, at + SLICE_BYTES));
        await dispatchReady();
      }
    }
    framer.end();
    closeBatch();
    await dispatchReady();
    while (handedOut.length > 0) {
      await handedOut[0].done;
      consumeSettled();
    }
  } finally {
    runner.close();
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
  issues.push(...lineIssues.sort(byLine));
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
  const checkpoint = leaves === undefined ? null : checkCheckpoints(input, leaves, logName, issues);
  if (sidecarIndex !== undefined) {
    for (const s of orphanedSidecars(sidecarIndex, (d, at) => seen.hasDigest(d, at))) {
      issues.push({
        kind: "orphaned signature",
        entry_hash: s.hash,
        location: s.path,
        message:
          `${s.path}: orphaned signature: no line of ${logName} is entry ${s.hash} (a deleted entry leaves its signature behind)`,
      });
    }
  }
  const foreign: ForeignAttestationReport[] = (input.foreignAttestations ?? []).map((f) => {
    const record = attested.get(f.entry_hash);
    const a = f.attestation;
    const verdict = f.problem !== undefined || a === undefined
      ? {
        verdict: "malformed" as const,
        verified: false,
        trust_class: "public" as const,
        reason: f.problem ?? "no attestation",
      }
      : record === undefined
      ? {
        verdict: "rejected" as const,
        verified: false,
        trust_class: "public" as const,
        reason: `no entry ${f.entry_hash} in the log`,
      }
      : verifyForeignAttestation(a, { trustedIssuers: input.trustedIssuers, record });
    return { ...verdict, entry_hash: f.entry_hash, location: f.location };
  });
  return {
    ok: issues.length === 0,
    lines,
    entries,
    artefacts: analyzer.artefacts().length,
    cards: cards.size,
    hmac_checked: input.operatorKey !== undefined,
    issues,
    foreign,
    checkpoint,
  };
}

/** Checks the log's line digests against its checkpoints; adds issues, returns the report. */
function checkCheckpoints(
  input: GateInput,
  leaves: LeafDigests,
  logName: string,
  issues: GateIssue[],
): GateCheckpointReport {
  const cp = input.checkpoints;
  const review = cp?.review;
  for (const p of review?.problems ?? []) {
    issues.push({ kind: p.kind, location: cp?.fileName, message: p.message });
  }
  for (const p of cp?.externalProblems ?? []) issues.push({ kind: p.kind, message: p.message });
  const all: CheckpointUnderTest[] = [...(review?.usable ?? []), ...(cp?.external ?? [])];
  const log = leaves.leaves();
  const result = checkLogAgainstCheckpoints(log, all, {
    logName,
    where: (i) => `${logName}:${i + 1}`,
    committed: cp?.committed,
  });
  for (const f of result.findings) {
    issues.push({ kind: f.kind, location: f.where, message: f.message });
  }
  const latest = review?.latest;
  return {
    file: cp?.fileName ?? "",
    checkpoints: review?.lines ?? 0,
    verified_signatures: review?.verified ?? 0,
    matched: result.matched,
    external: cp?.external?.length ?? 0,
    latest: latest === undefined ? null : {
      where: latest.where,
      size: latest.checkpoint.size,
      root: latest.checkpoint.root,
      ts: latest.checkpoint.ts,
    },
    not_checkpointed: Math.max(0, log.count - (latest?.checkpoint.size ?? 0)),
  };
}
