// `bernstein-verify chain` and `forks`: one artefact's history in a `.sdd/lineage/` folder.
// `chain` runs the whole gate (so parents in other artefacts resolve and the log's framing is
// checked) and keeps what concerns the artefact; `forks` is the structural fork analysis.
import { join } from "node:path";
import { parseCanonicalLine } from "../canonical/mod.ts";
import {
  artefactDigest,
  entryHashOfBytes,
  LineageAnalyzer,
  type LineageEntry,
  LOG_FILE,
  parseEntry,
  streamLines,
} from "../lineage/mod.ts";
import { decodePublicKeyPem } from "../crypto/mod.ts";
import { openDirectoryGateInput } from "./directory.ts";
import { runLineageGate } from "./gate.ts";
import type { VerifyIssue } from "./pack.ts";
import { operatorFingerprint } from "../pack_format/mod.ts";
import type { ForeignAttestationReport, GateCheckpointReport } from "./types.ts";

/** The key checkpoint signatures are checked with, how it is pinned, or why there is none. */
function chainOperatorKey(options: ChainOptions, result: LineageDirResult): Uint8Array | undefined {
  if (options.operatorPublicKey !== undefined) {
    result.stats.operator_pinned = "key";
    return options.operatorPublicKey;
  }
  const path = join(options.lineageDir, "..", "keys", "operator.pub");
  let published: Uint8Array | undefined;
  try {
    published = decodePublicKeyPem(new TextDecoder().decode(Deno.readFileSync(path)));
  } catch {
    published = undefined;
  }
  if (options.operatorFingerprint !== undefined) {
    result.stats.operator_pinned = "fingerprint";
    if (published === undefined || operatorFingerprint(published) !== options.operatorFingerprint) {
      result.errors.push({
        kind: "operator key mismatch",
        message: `${path}: operator key mismatch: ${
          published === undefined
            ? "no usable key there"
            : `it is ${operatorFingerprint(published)}`
        }, --operator-fingerprint is ${options.operatorFingerprint}`,
      });
      return undefined;
    }
    return published;
  }
  result.stats.operator_pinned = null;
  if (published !== undefined) {
    result.notes.push(
      `operator key not pinned: checkpoint signatures were checked with ${path}; pass --operator-fingerprint HEX (from the operator, out of band) to check who signed them`,
    );
  }
  return published;
}

/** The verdict on one artefact's lineage. */
export interface LineageDirResult {
  /** True when every check passed. */
  ok: boolean;
  /** Figures. */
  stats: {
    artefact: string;
    log: string;
    entries: number;
    agents: number;
    open_tips: string[];
    unresolved_forks: number;
    log_lines: number;
    cards?: number;
    hmac_checked: false;
    checkpoint?: GateCheckpointReport | null;
    operator_pinned?: "key" | "fingerprint" | null;
  };
  /** Every failed check. */
  errors: VerifyIssue[];
  /** Remarks that are not failures. */
  notes: string[];
  /** Verdicts on the foreign attestations of this artefact's entries (never part of `ok`). */
  foreign: ForeignAttestationReport[];
}

/** Options for {@linkcode verifyChain}. */
export interface ChainOptions {
  /** The lineage folder (`.sdd/lineage`). */
  lineageDir: string;
  /** The agent cards folder (default: `agents/` next to the lineage folder). */
  cardsDir?: string;
  /**
   * The operator's public key for checkpoint signatures, obtained out of band. Default: the
   * published `keys/operator.pub` next to the lineage folder (not pinned: a note says so).
   */
  operatorPublicKey?: Uint8Array;
  /** With no key given: the fingerprint (64 hex) the published key must have. */
  operatorFingerprint?: string;
  /** Checkpoint documents kept elsewhere: the log must still match them. */
  externalCheckpoints?: readonly { name: string; bytes: Uint8Array }[];
  /** Issuer keys pinned for foreign attestations: issuer key id → Ed25519 public key. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
}

function emptyResult(artefact: string, log: string): LineageDirResult {
  return {
    ok: false,
    stats: {
      artefact,
      log,
      entries: 0,
      agents: 0,
      open_tips: [],
      unresolved_forks: 0,
      log_lines: 0,
      hmac_checked: false,
    },
    errors: [],
    notes: [],
    foreign: [],
  };
}

function noEntries(result: LineageDirResult, artefact: string, log: string): void {
  result.errors.push({
    kind: "no entries",
    message: `${log}: no entries: no lineage entry for ${JSON.stringify(artefact)}`,
  });
}

/**
 * Verifies one artefact's chain: every check of the lineage gate over the whole log (byte
 * binding, entry rules, kid binding, signatures, dangling parents, forks, card conflicts),
 * keeping the problems of this artefact's entries and those of the log as a whole.
 *
 * @example
 * ```ts
 * const r = await verifyChain("src/app.ts", { lineageDir: ".sdd/lineage" });
 * ```
 */
export async function verifyChain(
  artefact: string,
  options: ChainOptions,
): Promise<LineageDirResult> {
  const logPath = join(options.lineageDir, LOG_FILE);
  const cardsDir = options.cardsDir ?? join(options.lineageDir, "..", "agents");
  const result = emptyResult(artefact, logPath);
  const operatorPublicKey = chainOperatorKey(options, result);
  let opened;
  try {
    opened = await openDirectoryGateInput({
      logPath,
      cardsDir,
      operatorPublicKey,
      externalCheckpoints: options.externalCheckpoints,
      trustedIssuers: options.trustedIssuers,
    });
  } catch (error) {
    result.errors.push({
      kind: "unreadable log",
      message: `${logPath}: unreadable log: ${(error as Error).message.split("\n")[0]}`,
    });
    return result;
  }
  if (opened === undefined) {
    result.errors.push({
      kind: "unreadable log",
      message: `${logPath}: unreadable log: no such file`,
    });
    return result;
  }
  const agents = new Set<string>();
  const mine = new Set<string>();
  let gate;
  try {
    gate = await runLineageGate({
      ...opened.input,
      onEntry: (entry: LineageEntry, hash: string) => {
        if (entry.artefact_path !== artefact) return;
        result.stats.entries++;
        agents.add(entry.agent_id);
        mine.add(hash);
      },
    });
  } finally {
    opened.close();
  }
  result.stats.agents = agents.size;
  result.stats.log_lines = gate.lines;
  result.stats.cards = gate.cards;
  const sidecars = `signatures/${artefactDigest(artefact).slice(0, 2)}/${
    artefactDigest(artefact)
  }/`;
  for (const issue of gate.issues) {
    // Issues of other artefacts' entries are theirs; lines that did not parse, card problems
    // and checkpoint mismatches could concern anyone, so they count here too.
    if (issue.artefact !== undefined && issue.artefact !== artefact) continue;
    // An orphaned sidecar is filed under its artefact's folder.
    if (issue.kind === "orphaned signature" && !issue.location?.startsWith(sidecars)) continue;
    result.errors.push({ kind: issue.kind, message: issue.message });
  }
  result.stats.unresolved_forks =
    gate.issues.filter((i) => i.kind === "unresolved fork" && i.artefact === artefact).length;
  result.stats.checkpoint = gate.checkpoint;
  result.foreign = gate.foreign.filter((f) => mine.has(f.entry_hash));
  const cp = gate.checkpoint;
  if (cp !== null && cp.not_checkpointed > 0) {
    result.notes.push(
      `${cp.not_checkpointed} line${cp.not_checkpointed === 1 ? "" : "s"} of ${LOG_FILE} ${
        cp.not_checkpointed === 1 ? "is" : "are"
      } not yet checkpointed (${
        cp.latest === null ? "there is no checkpoint" : `after ${cp.latest.where}`
      }): a deleted line among them would show only as an orphaned signature`,
    );
  }
  if (result.stats.entries === 0) noEntries(result, artefact, logPath);
  result.notes.push(
    "operator HMACs were not checked (they need the operator's secret; bernstein lineage gate checks them)",
  );
  result.ok = result.errors.length === 0;
  return result;
}

/**
 * Lists the unresolved forks (and split heads) of one artefact. Structural only: lines must be
 * canonical entries, but signatures are not checked (that is `verifyChain`).
 */
export async function verifyForks(
  artefact: string,
  options: { lineageDir: string },
): Promise<LineageDirResult> {
  const logPath = join(options.lineageDir, LOG_FILE);
  const result = emptyResult(artefact, logPath);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(logPath, { read: true });
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message;
    result.errors.push({ kind: "unreadable log", message: `${logPath}: unreadable log: ${why}` });
    return result;
  }
  const analyzer = new LineageAnalyzer();
  const agents = new Set<string>();
  let lines = 0;
  try {
    for await (const l of streamLines(file.readable)) {
      lines = l.line;
      const where = `${LOG_FILE}:${l.line}`;
      if (!l.terminated) {
        result.errors.push({
          kind: "missing trailing newline",
          message: `${where}: missing trailing newline (torn or truncated last record)`,
        });
      }
      const parsed = l.tooLong ? undefined : parseCanonicalLine(l.bytes, "canon");
      if (parsed === undefined || !parsed.ok) {
        result.errors.push({
          kind: "non-canonical line bytes",
          message: `${where}: non-canonical line bytes: ${
            parsed === undefined ? "line is longer than the limit" : parsed.detail
          }`,
        });
        continue;
      }
      let entry: LineageEntry;
      try {
        entry = parseEntry(parsed.value);
      } catch (error) {
        result.errors.push({
          kind: "invalid entry",
          message: `${where}: invalid entry: ${(error as Error).message}`,
        });
        continue;
      }
      if (entry.artefact_path === artefact) {
        result.stats.entries++;
        agents.add(entry.agent_id);
      }
      analyzer.add({
        hash: entryHashOfBytes(l.bytes),
        artefact_path: entry.artefact_path,
        parent_hashes: entry.parent_hashes,
        content_hash: entry.content_hash,
      });
    }
  } finally {
    try {
      file.close();
    } catch {
      // The readable stream closes the file when it is fully consumed.
    }
  }
  result.stats.log_lines = lines;
  result.stats.agents = agents.size;
  result.stats.open_tips = analyzer.openTips(artefact);
  const forks = analyzer.unresolvedForks(artefact);
  for (const f of forks) {
    result.errors.push({
      kind: "unresolved fork",
      message: `${artefact}: unresolved fork: parent ${f.parent_hash} has children ${
        f.children.join(", ")
      } with different content and no merge entry lists them all`,
    });
  }
  const split = analyzer.splitHeads().filter((s) => s.artefact_path === artefact);
  for (const s of split) {
    result.errors.push({
      kind: "unresolved fork",
      message: `${artefact}: unresolved fork: ${s.open.length} open tips (${
        s.open.join(", ")
      }) and no merge entry joins them`,
    });
  }
  result.stats.unresolved_forks = forks.length + split.length;
  if (result.stats.entries === 0) noEntries(result, artefact, logPath);
  result.notes.push("signatures were not checked by 'forks' (use 'chain')");
  result.ok = result.errors.length === 0;
  return result;
}
