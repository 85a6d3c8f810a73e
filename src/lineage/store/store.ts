// The lineage writer: appends signed entries to `.sdd/lineage/log.jsonl` under an exclusive
// lock with fsync, keeps the projections and signature sidecars, and answers the read queries
// of the CLI (chain, walk, forks) from the log itself.
import { join } from "node:path";
import { isJsonObject, type JsonObject, parseCanonicalLine } from "../../canonical/mod.ts";
import {
  type CheckpointSigner,
  parseDetachedJws,
  sha256Hex,
  signDetachedJws,
  verifyDetachedJws,
} from "../../crypto/mod.ts";
import { type CheckpointWriteResult, writeCheckpoint } from "../../tlog/mod.ts";
import { BernsteinError, type Warning } from "../../errors/mod.ts";
import {
  appendDurable,
  type Clock,
  type Random,
  readFileIfExists,
  systemClock,
  systemRandom,
  withFileLock,
  writeFileAtomic,
} from "../../io/mod.ts";
import {
  type ArtefactKind,
  buildMergeEntry,
  checkArtefactKey,
  chooseMergeWinner,
  entryBytes,
  entryHashOfBytes,
  type Fork,
  LineageAnalyzer,
  type LineageEntry,
  LOG_FILE,
  type MergeCandidate,
  type MergePolicy,
  parseEntry,
  sealEntry,
  signaturePath,
  type SplitHead,
  streamLines,
  type TrustClass,
} from "../mod.ts";
import { type AgentSigner, ensureAgentSigner, STEWARD_AGENT_ID } from "./identity.ts";
import { type LineagePaths, lineagePaths } from "./paths.ts";
import {
  catchUpProjections,
  markProjected,
  projectEntry,
  readTips,
  rebuildProjections,
} from "./projections.ts";

/** A lineage write that could not be recorded (strict mode refuses the artefact write). */
export class LineageWriteError extends BernsteinError {
  constructor(message: string, options: { cause?: unknown; hint?: string } = {}) {
    super("lineage.write_failed", message, options);
  }
}

/** Options for {@linkcode openLineageStore}. */
export interface LineageStoreOptions {
  /** The project's `.sdd/` folder. */
  sdd: string;
  /** The operator key, or a function resolving it on first need (see `resolveOperatorHmacKey`). */
  operatorKey: Uint8Array | (() => Promise<Uint8Array>);
  /** `lineage.enabled` (default true): false records nothing. */
  enabled?: boolean;
  /** `lineage.strict` (default false): true makes a failed record throw instead of warn. */
  strict?: boolean;
  /** Clock for `ts_ns`. */
  clock?: Clock;
  /** Randomness for minting agent keys. */
  random?: Random;
  /** Where non-strict failures and torn-tail notices go. */
  warn?: (warning: Warning) => void;
}

/**
 * A signer whose private key lives elsewhere (the worker host that ran the agent): it returns
 * the compact detached JWS of the entry bytes. The signature is checked against `publicKey`
 * before anything is written.
 */
export interface ExternalSigner {
  /** The key id it signs with (its card is published beside the log). */
  kid: string;
  /** The 32-byte Ed25519 public key of `kid`. */
  publicKey: Uint8Array;
  /** Signs the canon entry bytes: `<header_b64>..<signature_b64url>`. */
  sign(entryBytes: Uint8Array): Promise<string>;
}

function localSign(signer: AgentSigner): (line: Uint8Array) => Promise<string> {
  return (line) => Promise.resolve(signDetachedJws(signer.seed, line, { kid: signer.kid }));
}

/** Options of one recorded write. */
export interface RecordWriteOptions {
  /** The agent identity that wrote (its key is minted on first use). */
  agent: string;
  /** Sign with this remote key instead of a local one (the agent ran on another host). */
  signer?: ExternalSigner;
  /** Cross-link to the audit log. */
  toolCallId: string;
  /** Cross-link to the trace. */
  spanId: string;
  /** Artefact kind (default `file`). */
  kind?: ArtefactKind;
  /** Optional trust class. */
  trustClass?: TrustClass;
  /** Hex SHA-256 of attachments the producing turn consumed (never parents). */
  attachmentDigests?: readonly string[];
  /** Entries of other artefacts this write derives from (recorded after the own tip). */
  extraParents?: readonly string[];
}

/** The outcome of a recorded write. */
export type RecordWriteResult =
  | { status: "recorded"; entryHash: string; entry: LineageEntry; parent?: string }
  | { status: "disabled" }
  | { status: "failed"; error: BernsteinError };

/** An entry of the log with where it sits. */
export interface LoggedEntry {
  /** 1-based line in log.jsonl. */
  line: number;
  /** The entry hash. */
  hash: string;
  /** The entry. */
  entry: LineageEntry;
}

/** Options for {@linkcode LineageStore.merge}. */
export interface MergeOptions {
  /** How the winner is chosen. */
  policy: MergePolicy;
  /** Cross-link to the audit log (default `lineage-merge`). */
  toolCallId?: string;
  /** Cross-link to the trace (default empty). */
  spanId?: string;
}

/** What a merge wrote. */
export interface MergeResult {
  /** The merge entry's hash. */
  entryHash: string;
  /** The merge entry. */
  entry: LineageEntry;
  /** The head whose content won. */
  winner: string;
  /** The forks it resolves. */
  forks: Fork[];
}

const NEWLINE = new Uint8Array([0x0a]);

/** The append in progress (its entry hash, sidecar and where its line goes). */
const APPEND_INTENT = "append-intent.json";

/** The complete line (without `\n`) that starts at `offset`, or undefined when there is none. */
async function lineAt(path: string, offset: number): Promise<Uint8Array | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    const parts: Uint8Array[] = [];
    let length = 0;
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await file.read(buf);
      if (n === null) return undefined;
      const nl = buf.subarray(0, n).indexOf(0x0a);
      const piece = buf.slice(0, nl < 0 ? n : nl);
      parts.push(piece);
      length += piece.length;
      if (nl >= 0) break;
      if (length > 16 * 1024 * 1024) return undefined;
    }
    const out = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  } finally {
    file.close();
  }
}

function withNewline(line: Uint8Array): Uint8Array {
  const out = new Uint8Array(line.length + 1);
  out.set(line);
  out.set(NEWLINE, line.length);
  return out;
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
}

async function lastByte(path: string, size: number): Promise<number | undefined> {
  if (size === 0) return undefined;
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(size - 1, Deno.SeekMode.Start);
    const buf = new Uint8Array(1);
    return (await file.read(buf)) === 1 ? buf[0] : undefined;
  } finally {
    file.close();
  }
}

/**
 * The lineage store of one `.sdd/` folder. Appends are serialised by an exclusive lock on
 * log.jsonl itself (the file the Python writer locks too), so processes of either
 * implementation never interleave, and the parent of each write is read under that lock.
 *
 * @example
 * ```ts ignore
 * const store = openLineageStore({ sdd: ".sdd", operatorKey: key });
 * await store.recordWrite("src/app.ts", bytes, { agent: "claude-1", toolCallId, spanId });
 * ```
 */
export class LineageStore {
  /** Where everything lives. */
  readonly paths: LineagePaths;
  readonly #options: LineageStoreOptions;
  readonly #clock: Clock;
  readonly #random: Random;
  #operatorKey?: Uint8Array;
  #signers = new Map<string, AgentSigner>();
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<(entryHash: string) => void>();

  constructor(options: LineageStoreOptions) {
    this.#options = options;
    this.paths = lineagePaths(options.sdd);
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
  }

  /**
   * Calls `listener` with the hash of each entry this store appends, once its line is durable;
   * returns the unsubscribe function. A listener that throws is ignored.
   */
  onAppend(listener: (entryHash: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `lineage.enabled`. */
  get enabled(): boolean {
    return this.#options.enabled ?? true;
  }

  /** `lineage.strict`. */
  get strict(): boolean {
    return this.#options.strict ?? false;
  }

  async #key(): Promise<Uint8Array> {
    if (this.#operatorKey === undefined) {
      const k = this.#options.operatorKey;
      this.#operatorKey = k instanceof Uint8Array ? k : await k();
    }
    return this.#operatorKey;
  }

  /** The signing identity of an agent, minted on first use. */
  async signer(agentId: string): Promise<AgentSigner> {
    let s = this.#signers.get(agentId);
    if (s === undefined) {
      s = await ensureAgentSigner(this.paths, agentId, { random: this.#random });
      this.#signers.set(agentId, s);
    }
    return s;
  }

  /** Who signs a write: the remote signer (checked), or the agent's local key. */
  async #signerFor(
    options: RecordWriteOptions,
  ): Promise<{ agentId: string; kid: string; sign: (line: Uint8Array) => Promise<string> }> {
    const remote = options.signer;
    if (remote === undefined) {
      const local = await this.signer(options.agent);
      return { agentId: local.agentId, kid: local.kid, sign: localSign(local) };
    }
    return {
      agentId: options.agent,
      kid: remote.kid,
      sign: async (line) => {
        const jws = await remote.sign(line);
        const parsed = parseDetachedJws(jws);
        if (parsed.header.kid !== remote.kid) {
          throw new LineageWriteError(
            `the remote signature names kid ${parsed.header.kid}, not ${remote.kid}`,
          );
        }
        if (!verifyDetachedJws(parsed, { payload: line, publicKey: remote.publicKey })) {
          throw new LineageWriteError(`the remote signature of ${options.agent} does not verify`);
        }
        return jws;
      },
    };
  }

  /** Forgets cached identities (after a key rotation by this or another process). */
  forgetSigners(): void {
    this.#signers.clear();
  }

  /** Runs `fn` holding the in-process queue and the cross-process lock on log.jsonl. */
  #locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      await Deno.mkdir(this.paths.lineageDir, { recursive: true, mode: 0o700 });
      return await withFileLock(this.paths.logPath, fn);
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Removes what an append killed half-way left behind: its signature sidecar (written first)
   * when its line never made it into the log. Without this the sidecar would stay an orphaned
   * signature, which the gate reports as the trace of a deleted entry. The intent file names
   * the one append that was in progress, and its line is looked for exactly where it would be.
   */
  async #recoverInterruptedAppend(): Promise<void> {
    const path = join(this.paths.lineageDir, APPEND_INTENT);
    const bytes = await readFileIfExists(path);
    if (bytes === undefined) return;
    let intent: JsonObject = {};
    try {
      const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes));
      // Not an object (a damaged write): as unreadable.
      if (isJsonObject(parsed)) intent = parsed;
    } catch {
      // Unreadable: nothing can be said about the append; leave its sidecar to the gate.
    }
    const { hash, sidecar, log_size: at } = intent;
    if (
      typeof hash === "string" && typeof sidecar === "string" && typeof at === "number" &&
      /^signatures\/[0-9a-f]{2}\/[0-9a-f]{64}\/[0-9a-f]{64}\.jws$/.test(sidecar)
    ) {
      const line = await lineAt(this.paths.logPath, at);
      if (line === undefined || entryHashOfBytes(line) !== hash) {
        await Deno.remove(join(this.paths.lineageDir, sidecar)).catch(() => {});
        this.#options.warn?.({
          code: "lineage.interrupted_append",
          message:
            `an append was interrupted before entry ${hash} reached ${this.paths.logPath}; its signature ${sidecar} was removed`,
        });
      }
    }
    await Deno.remove(path).catch(() => {});
  }

  /** Seals a torn tail with a newline so the next line is never glued to it. */
  async #sealTornTail(): Promise<number> {
    await this.#recoverInterruptedAppend();
    let size = await fileSize(this.paths.logPath);
    const last = await lastByte(this.paths.logPath, size);
    if (last !== undefined && last !== 0x0a) {
      // Never truncate: the fragment stays as evidence and the gate reports it.
      await appendDurable(this.paths.logPath, NEWLINE, { mode: 0o600 });
      size += 1;
      this.#options.warn?.({
        code: "lineage.torn_tail",
        message:
          `${this.paths.logPath} ended in an incomplete record; it was closed with a newline ` +
          "and is kept as evidence ('bernstein lineage gate' reports it)",
      });
    }
    return size;
  }

  /** Appends one signed entry; call under the lock with the projections caught up. */
  async #append(
    entry: LineageEntry,
    sign: (line: Uint8Array) => Promise<string>,
    logSize: number,
  ): Promise<string> {
    const line = entryBytes(entry);
    const hash = entryHashOfBytes(line);
    const jws = await sign(line);
    // The sidecar goes first: a crash then leaves an unused signature, never an unsigned entry.
    const relative = signaturePath(entry.artefact_path, hash);
    const sidecar = join(this.paths.lineageDir, relative);
    // The intent lets the next writer remove this sidecar if the append dies before the log
    // line is written. Not fsynced: it matters after a killed process, whose writes the page
    // cache keeps; after a power loss an orphaned signature is reported, not hidden.
    const intent = join(this.paths.lineageDir, APPEND_INTENT);
    await Deno.writeTextFile(
      intent,
      JSON.stringify({ hash, sidecar: relative, log_size: logSize }),
      { mode: 0o600 },
    );
    await Deno.mkdir(join(sidecar, ".."), { recursive: true, mode: 0o755 });
    await writeFileAtomic(sidecar, jws, { mode: 0o644 });
    await appendDurable(this.paths.logPath, withNewline(line), { mode: 0o600 });
    await Deno.remove(intent);
    await projectEntry(this.paths, entry, line);
    await markProjected(this.paths, logSize + line.length + 1);
    for (const listener of this.#listeners) {
      try {
        listener(hash);
      } catch {
        // An observer's failure is its own; the entry is written.
      }
    }
    return hash;
  }

  /**
   * Records that `bytes` were written to `artefact` by `options.agent`: content hash, the
   * artefact's open tip as parent (genesis when none), operator HMAC, Ed25519 signature,
   * sidecar, append. With `lineage.enabled: false` nothing is recorded. On failure: strict
   * throws {@linkcode LineageWriteError} (the caller must refuse the write), otherwise a
   * warning is emitted and `{status: "failed"}` returned so the write can proceed.
   */
  async recordWrite(
    artefact: string,
    bytes: Uint8Array,
    options: RecordWriteOptions,
  ): Promise<RecordWriteResult> {
    if (!this.enabled) return { status: "disabled" };
    try {
      checkArtefactKey(artefact);
      const contentHash = "sha256:" + sha256Hex(bytes);
      const signer = await this.#signerFor(options);
      const key = await this.#key();
      return await this.#locked(async () => {
        const size = await this.#sealTornTail();
        await catchUpProjections(this.paths, size);
        const tips = await readTips(this.paths, artefact);
        const parents = tips.open.slice(0, 1);
        for (const p of options.extraParents ?? []) if (!parents.includes(p)) parents.push(p);
        const entry = sealEntry({
          artefact_path: artefact,
          artefact_kind: options.kind ?? "file",
          content_hash: contentHash,
          parent_hashes: parents,
          agent_id: signer.agentId,
          agent_card_kid: signer.kid,
          tool_call_id: options.toolCallId,
          span_id: options.spanId,
          ts_ns: this.#clock.nowNs(),
          trust_class: options.trustClass,
          attachment_digests: options.attachmentDigests === undefined
            ? undefined
            : [...options.attachmentDigests],
        }, key);
        const entryHash = await this.#append(entry, signer.sign, size);
        return { status: "recorded" as const, entryHash, entry, parent: parents[0] };
      });
    } catch (cause) {
      const error = cause instanceof BernsteinError ? cause : new LineageWriteError(
        `recording lineage for ${artefact} failed: ${(cause as Error).message}`,
        { cause },
      );
      if (this.strict) {
        throw new LineageWriteError(
          `lineage for ${artefact} could not be recorded (lineage.strict is on, so the write is refused): ${error.message}`,
          { cause: error },
        );
      }
      this.#options.warn?.({
        code: "lineage.not_recorded",
        message: `lineage for ${artefact} was not recorded: ${error.message}`,
        hint: "the write proceeds because lineage.strict is false",
      });
      return { status: "failed", error };
    }
  }

  /** Streams the log's valid entries in order (bad lines and a torn tail are skipped). */
  async *entries(): AsyncGenerator<LoggedEntry> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.paths.logPath, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    try {
      for await (const l of streamLines(file.readable)) {
        if (!l.terminated || l.tooLong) continue;
        const parsed = parseCanonicalLine(l.bytes, "canon");
        if (!parsed.ok) continue;
        let entry: LineageEntry;
        try {
          entry = parseEntry(parsed.value);
        } catch {
          continue;
        }
        yield { line: l.line, hash: entryHashOfBytes(l.bytes), entry };
      }
    } finally {
      try {
        file.close();
      } catch {
        // Already closed by the exhausted stream.
      }
    }
  }

  /** Every entry of one artefact, oldest first. */
  async chain(artefact: string): Promise<LoggedEntry[]> {
    checkArtefactKey(artefact);
    const out: LoggedEntry[] = [];
    for await (const e of this.entries()) if (e.entry.artefact_path === artefact) out.push(e);
    return out;
  }

  /**
   * The ancestry of an artefact across artefacts: its entries and, transitively, every entry
   * named as a parent, oldest first. Parents missing from the log are listed separately.
   */
  async walk(artefact: string): Promise<{ entries: LoggedEntry[]; missing: string[] }> {
    checkArtefactKey(artefact);
    const byHash = new Map<string, LoggedEntry>();
    const start: string[] = [];
    for await (const e of this.entries()) {
      if (!byHash.has(e.hash)) byHash.set(e.hash, e);
      if (e.entry.artefact_path === artefact) start.push(e.hash);
    }
    const wanted = new Set<string>();
    const missing = new Set<string>();
    const stack = [...start];
    while (stack.length > 0) {
      const h = stack.pop() as string;
      if (wanted.has(h)) continue;
      const e = byHash.get(h);
      if (e === undefined) {
        missing.add(h);
        continue;
      }
      wanted.add(h);
      stack.push(...e.entry.parent_hashes);
    }
    const entries = [...wanted].map((h) => byHash.get(h) as LoggedEntry).sort((a, b) =>
      a.line - b.line
    );
    return { entries, missing: [...missing].sort() };
  }

  /** Unresolved forks (and split heads) of one artefact or of all, from the log. */
  async forks(artefact?: string): Promise<{ forks: Fork[]; splitHeads: SplitHead[] }> {
    if (artefact !== undefined) checkArtefactKey(artefact);
    const analyzer = new LineageAnalyzer();
    for await (const e of this.entries()) {
      analyzer.add({ hash: e.hash, ...e.entry });
    }
    const splitHeads = analyzer.splitHeads().filter((s) =>
      artefact === undefined || s.artefact_path === artefact
    );
    return { forks: analyzer.unresolvedForks(artefact), splitHeads };
  }

  /**
   * Resolves the forks of `artefact` with one merge entry signed by the steward identity. Its
   * parents are every child of every unresolved fork plus every other open head (so exactly
   * one head remains); its content is the winning head's under `options.policy`.
   */
  async merge(artefact: string, options: MergeOptions): Promise<MergeResult> {
    checkArtefactKey(artefact);
    const steward = await this.signer(STEWARD_AGENT_ID);
    const key = await this.#key();
    return await this.#locked(async () => {
      const size = await this.#sealTornTail();
      await catchUpProjections(this.paths, size);
      const analyzer = new LineageAnalyzer();
      const byHash = new Map<string, LoggedEntry>();
      for await (const e of this.entries()) {
        byHash.set(e.hash, e);
        analyzer.add({ hash: e.hash, ...e.entry });
      }
      const forks = analyzer.unresolvedForks(artefact);
      const open = analyzer.openTips(artefact);
      if (forks.length === 0 && open.length < 2) {
        throw new BernsteinError("lineage.no_fork", `${artefact} has no unresolved fork`, {
          hint: "'bernstein lineage forks' lists the artefacts that need a merge",
        });
      }
      const parents: string[] = [];
      const add = (h: string) => parents.includes(h) || parents.push(h);
      for (const f of forks) f.children.forEach(add);
      open.forEach(add);
      parents.sort((a, b) => (byHash.get(a)?.line ?? 0) - (byHash.get(b)?.line ?? 0));
      const candidates: MergeCandidate[] = open.map((h) => ({
        hash: h,
        entry: (byHash.get(h) as LoggedEntry).entry,
      }));
      const winner = chooseMergeWinner(options.policy, candidates);
      const entry = buildMergeEntry({
        artefactPath: artefact,
        parents,
        winner: winner.entry,
        steward: { agentId: steward.agentId, kid: steward.kid },
        toolCallId: options.toolCallId ?? "lineage-merge",
        spanId: options.spanId ?? "",
        tsNs: this.#clock.nowNs(),
      }, key);
      const entryHash = await this.#append(entry, localSign(steward), size);
      return { entryHash, entry, winner: winner.hash, forks };
    });
  }

  /**
   * Appends a signed checkpoint of log.jsonl (FORMATS.md §8) under the append lock: the
   * RFC 9162 root of every line, signed by the operator key. Nothing is written when the log
   * has not grown since the latest checkpoint.
   */
  checkpoint(signer: CheckpointSigner): Promise<CheckpointWriteResult> {
    return this.#locked(() =>
      writeCheckpoint({
        dir: this.paths.lineageDir,
        log: "lineage",
        files: [{ name: LOG_FILE, path: this.paths.logPath }],
        signer,
        clock: this.#clock,
      })
    );
  }

  /** Rebuilds `by-artefact/` and `tips/` from log.jsonl (under the lock). */
  reindex(): Promise<{ applied: number; skipped: number }> {
    return this.#locked(async () => {
      const report = await rebuildProjections(this.paths);
      return { applied: report.applied, skipped: report.skipped };
    });
  }
}

/** Opens the lineage store of a `.sdd/` folder (nothing is created until the first write). */
export function openLineageStore(options: LineageStoreOptions): LineageStore {
  return new LineageStore(options);
}
