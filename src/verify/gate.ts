// The lineage gate (FORMATS.md §4): every check, in order, over a streamed log, a signature
// lookup and a card set. It trusts nothing it has not checked and never throws on bad input:
// every problem becomes one structured issue. Lines are parsed here, in log order, and feed
// the order-dependent checks at once; the signature checks (the costly part) run in batches on
// this thread or shared with workers, and their issues are put back in line order at the end.
import {
  checkLogAgainstCheckpoints,
  type CheckpointUnderTest,
  keyedHmacSha256Pure,
} from "../crypto/mod.ts";
import {
  AgentCardSet,
  chunksOf,
  DigestTable,
  LineageAnalyzer,
  LineFramer,
  verifyForeignAttestation,
} from "../lineage/mod.ts";
import {
  parseLine,
  type SignatureCheckContext,
  type SignatureJob,
  signatureJob,
} from "./_line_check.ts";
import { inlineRunner, pooledRunner, type SignatureBatchRunner } from "./_pool.ts";
import { LeafDigests } from "./_leaf_digests.ts";
import { listSidecars, sidecarReader } from "./_sidecars.ts";
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

// Signature checks go out in batches of this many entries; at most MAX_IN_FLIGHT batches are
// out at workers before this thread waits for one (each holds ~16 KB of lines).
const BATCH_LINES = 32;
const MAX_IN_FLIGHT = 16;
const SLICE_BYTES = 16 * 1024;
const BATCH_BYTES = 32 * 1024;

/**
 * Worker threads the gate uses by default: one per core beyond this thread's, up to 3. Each
 * costs ~30-40 MiB (its own JS heap); on 2 cores one worker takes the 100 000-entry gate from
 * ~14 s to ~9 s.
 */
export function defaultGateWorkers(cores: number = navigator.hardwareConcurrency ?? 1): number {
  return Math.max(0, Math.min(3, cores - 1));
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
 * ```ts
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
  const ctx: SignatureCheckContext = {
    logName,
    cards,
    signatures: typeof lookup === "function" ? undefined : sidecarReader(lookup.directory),
    // Pure-JS HMAC: native hash objects are freed only by a major GC, and the 300 000 of a
    // 100 000-entry log (entry hash + HMAC) would add tens of MB to the peak.
    hmacKey: input.operatorKey === undefined ? undefined : keyedHmacSha256Pure(input.operatorKey),
    sidecarNames: input.sidecarNames,
  };
  // Workers re-parse the card files, so they need them as files.
  const runner: SignatureBatchRunner = cardFiles !== undefined && (options.workers ?? 0) > 0
    ? pooledRunner(options.workers ?? 0, ctx, {
      logName,
      lineageDir: typeof lookup === "function" ? undefined : lookup.directory,
      cards: cardFiles,
      operatorKey: input.operatorKey,
      sidecarNames: input.sidecarNames,
    }, options.workerUrl)
    : inlineRunner(ctx);

  const analyzer = new LineageAnalyzer();
  const seen = new DigestTable(4096); // entry hash → line
  const dangling: { issue: GateIssue; parent: string }[] = [];
  // Framing, entry and dangling-parent issues, in line order; signature issues as they come.
  const lineIssues: GateIssue[] = [];
  const signatureIssues: GateIssue[] = [];
  const attested = new Map<string, { content_hash: string; artefact_path: string } | undefined>();
  for (const f of input.foreignAttestations ?? []) attested.set(f.entry_hash, undefined);
  let lines = 0;
  let entries = 0;
  let unterminated = false;
  // Line digests for the checkpoint check (only when there are checkpoints to check).
  const cp = input.checkpoints;
  const leaves = cp === undefined
    ? undefined
    : new LeafDigests((cp.review?.usable.length ?? 0) + (cp.external?.length ?? 0) === 0);
  let jobs: SignatureJob[] = [];
  // The current batch's line bytes, copied back to back (one buffer a batch, not one a line).
  let batchBytes = new Uint8Array(BATCH_BYTES);
  let batchUsed = 0;
  const inFlight: Promise<void>[] = [];

  function track(result: GateIssue[] | Promise<GateIssue[]>): void {
    if (Array.isArray(result)) signatureIssues.push(...result);
    else inFlight.push(result.then((issues) => void signatureIssues.push(...issues)));
  }

  // Full batches wait here until the loop below hands them out (between them it lets worker
  // replies in, so the split between threads follows their speed).
  const ready: SignatureJob[][] = [];

  function dispatch(batch: SignatureJob[]): void {
    if (fetchHere === undefined) return track(runner.run(batch));
    const fetched = batch.map((j) => fetchHere(j.artefact, j.hash));
    if (!fetched.some((f) => f instanceof Promise)) {
      fetched.forEach((f, i) => (batch[i].fetched = f as SignatureFetch));
      return track(runner.run(batch));
    }
    track(
      Promise.all(fetched).then((all) => {
        all.forEach((f, i) => (batch[i].fetched = f));
        return runner.run(batch);
      }),
    );
  }

  async function dispatchReady(): Promise<void> {
    for (const batch of ready.splice(0)) {
      await runner.turn();
      dispatch(batch);
    }
    while (inFlight.length > MAX_IN_FLIGHT) await inFlight.shift();
  }

  function onLine(line: number, bytes: Uint8Array, tooLong: boolean): string | undefined {
    const parsed = parseLine(line, bytes, tooLong, logName);
    if (parsed.issues !== null) lineIssues.push(...parsed.issues);
    const { entry, hash } = parsed;
    if (entry === undefined || hash === undefined) return undefined;
    entries++;
    // The line bytes may be a view into a chunk that is reused: the job keeps a copy.
    if (batchUsed + bytes.length > batchBytes.length) {
      batchBytes = new Uint8Array(Math.max(BATCH_BYTES, bytes.length));
      batchUsed = 0;
    }
    const copy = batchBytes.subarray(batchUsed, batchUsed + bytes.length);
    copy.set(bytes);
    batchUsed += bytes.length;
    jobs.push(signatureJob(line, copy, entry, hash));
    if (jobs.length >= BATCH_LINES) {
      ready.push(jobs);
      jobs = [];
      batchBytes = new Uint8Array(BATCH_BYTES);
      batchUsed = 0;
    }
    for (const parent of entry.parent_hashes) {
      if (seen.has(parent) || input.knownParents?.has(parent)) continue;
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
    if (!seen.has(hash)) seen.set(hash, line);
    input.onEntry?.(entry, hash, bytes);
    if (attested.has(hash)) {
      attested.set(hash, { content_hash: entry.content_hash, artefact_path: entry.artefact_path });
    }
    analyzer.add({
      hash,
      artefact_path: entry.artefact_path,
      parent_hashes: entry.parent_hashes,
      content_hash: entry.content_hash,
    });
    return hash;
  }

  const framer = new LineFramer((l) => {
    lines = l.line;
    if (!l.terminated) unterminated = true;
    const hash = onLine(l.line, l.bytes, l.tooLong);
    // A checkpoint covers terminated lines only: an open tail is not a line yet.
    if (leaves !== undefined && l.terminated) leaves.add(hash, l.bytes, l.tooLong);
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
    if (jobs.length > 0) ready.push(jobs);
    await dispatchReady();
    await Promise.all(inFlight);
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
  issues.push(...[...lineIssues, ...signatureIssues].sort(byLine));
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
  if (input.orphans === true && typeof lookup !== "function") {
    for (const s of listSidecars(lookup.directory)) {
      if (seen.has(s.hash)) continue;
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
