// Builds a pack from a project's `.sdd/`: streams the lineage log for the window, reads each
// entry's signature sidecar and the signers' cards, links tool calls to the authenticated audit
// log (read-only: the audit key is read, never created), states the Article 12 facts, and
// writes the pack member by member to a sink (the output file); the verifier then runs over
// the written file before anyone sees it. One pass over the log; what stays in memory is the
// compressed log and CSV, the signatures and per-entry digests, never the parsed entries.
import { join } from "node:path";
import {
  checkpointAuditLog,
  readAuditKey,
  resolveAuditKeyPath,
  scanAuditLog,
} from "../../audit/mod.ts";
import { concatBytes, type JsonObject } from "../../canonical/mod.ts";
import { BernsteinError, type Warning } from "../../errors/mod.ts";
import type { EnvReader } from "../../io/mod.ts";
import {
  kidForPublicKey,
  LineageAnalyzer,
  LOG_FILE,
  signaturePath,
  streamLines,
} from "../../lineage/mod.ts";
import { openLineageStore } from "../../lineage/store/mod.ts";
import { CheckpointError, type CheckpointWriteResult, committedTree } from "../../tlog/mod.ts";
import type { CheckpointSigner } from "../../crypto/mod.ts";
import { compileGlob } from "../../plan/mod.ts";
import {
  type LogFacts,
  PACK_FLEET_EVENT_TYPES,
  packFleetLine,
  type PackWindow,
  packWindow,
} from "../../pack_format/mod.ts";
import {
  openFileBytes,
  type PackVerifyResult,
  readAttestationDirectory,
  readCardDirectory,
  verifyPack,
} from "../../verify/mod.ts";
import {
  AgentIsolationCollector,
  type AgentIsolationFacts,
  type AuditCrossLinks,
  AuditLinker,
  buildArticle12,
  CheckpointedWindow,
  type CollectedWindow,
  CompliancePackError,
  compressMember,
  inThreadDeflate,
  loadNativeCrc32,
  type MembersDeflate,
  offThreadDeflate,
  type OperatorSigner,
  type PackAttestation,
  selectCards,
  type SkippedLine,
  type WindowEntry,
  WindowMembers,
  type WindowSelection,
  WindowSelector,
  writePack,
  type ZipSink,
} from "../mod.ts";
import { sddFolder } from "../../io/mod.ts";
import {
  inThreadSidecars,
  offThreadSidecars,
  type SidecarSignatures,
} from "./_off_thread_sidecars.ts";

/**
 * Logs below this size are packed without the deflate and sidecar workers (each start costs
 * ~0.1-0.2 s of CPU; a 1 MiB log is ~2,300 entries, ~0.2 s of work on one thread).
 */
const IN_THREAD_LOG_BYTES = 1024 * 1024;

/** The `compliance` section of the configuration. */
export interface ComplianceSettings {
  /** Globs of artefacts whose changes are risk-relevant (Art. 12(2)(a)). */
  risk_paths: readonly string[];
  /** The system is a remote biometric identification system (Art. 12(3) applies). */
  remote_biometric_identification: boolean;
  /** How long logs are kept (Art. 19(1), 26(6)). */
  retention_days: number;
}

/** Options for {@linkcode buildProjectPack}. */
export interface ProjectPackOptions {
  /** The project's `.sdd/` folder. */
  sdd: string;
  /** Organisation. */
  org: string;
  /** First UTC day. */
  since: string;
  /** Last UTC day. */
  until: string;
  /** Build time or null. */
  builtAt: string | null;
  /** `bernstein <version>`. */
  builder: string;
  /** Configuration. */
  compliance: ComplianceSettings;
  /** The operator signing key. */
  signer: OperatorSigner;
  /** Environment (audit key location). */
  env: EnvReader;
  /** Where the ZIP goes, member by member (a file being written, or memory). */
  sink: ZipSink;
  /** `--with-attachments`: the runs' attachment exports as `attachments/<run>/…` members. */
  attachments?: ReadonlyMap<string, Uint8Array>;
}

/** What {@linkcode buildProjectPack} produced. */
export interface ProjectPackResult {
  /** Bytes written to the sink. */
  bytes: number;
  /**
   * The signed manifest's Article 12 block. (Not the whole manifest: its input hashes name
   * every member, tens of MB at 100 000 entries, which would stay alive through the self-check.)
   */
  article12: JsonObject;
  /** Facts of the window. */
  facts: LogFacts;
  /** Lines of the whole log. */
  logLines: number;
  /** Log lines left out because they are not valid entries. */
  skipped: SkippedLine[];
  /** Parents that precede the window. */
  externalParents: string[];
  /** Problems that do not stop the build (the self-check shows their effect). */
  warnings: Warning[];
}

/**
 * The self-check: `bernstein-verify pack` over the pack as written at `path`, pinned to the
 * key that signed it (read from disk, so it checks exactly what the auditor will get).
 */
export async function verifyWrittenPack(
  path: string,
  operatorPublicKey: Uint8Array,
): Promise<PackVerifyResult> {
  const file = openFileBytes(path);
  try {
    return await verifyPack(file, { operatorPublicKey });
  } finally {
    file.close();
  }
}

/** What the authenticated audit chain gives a pack. */
interface AuditFindings {
  links: AuditCrossLinks;
  isolation: AgentIsolationFacts;
  /** `fleet-events.jsonl` bytes (FORMATS.md §5), empty when the period has none. */
  fleetEvents: Uint8Array;
}

async function auditLinks(
  sdd: string,
  env: EnvReader,
  toolCallIds: ReadonlySet<string>,
  period: { since: string; until: string },
): Promise<AuditFindings> {
  const notChecked = (reason: string): AuditFindings => ({
    links: {
      checked: false,
      reason,
      tool_call_ids: toolCallIds.size,
      linked_tool_call_ids: 0,
      linked_audit_events: 0,
      audit_records_authenticated: 0,
      audit_records_rejected: 0,
    },
    isolation: { checked: false, reason, byAgent: new Map() },
    fleetEvents: new Uint8Array(0),
  });
  let key;
  try {
    // Read-only: a pack never creates the audit key (that would authenticate nothing).
    key = await readAuditKey(resolveAuditKeyPath(env).path);
  } catch (error) {
    if (error instanceof BernsteinError) {
      return notChecked(`audit key unavailable (${error.code})`);
    }
    throw error;
  }
  const linker = new AuditLinker(toolCallIds);
  const isolation = new AgentIsolationCollector();
  const fleet: Uint8Array[] = [];
  let authenticated = 0;
  const scan = await scanAuditLog(sddFolder(sdd, "audit"), key, {
    onRecord: (r) => {
      authenticated++;
      linker.add(r.record);
      isolation.add(r.record);
      const day = r.record.timestamp.slice(0, 10);
      if (
        PACK_FLEET_EVENT_TYPES.includes(r.record.event_type) && day >= period.since &&
        day <= period.until
      ) {
        fleet.push(
          packFleetLine({
            actor: r.record.actor,
            details: r.record.details,
            event_type: r.record.event_type,
            hmac: r.record.hmac,
            timestamp: r.record.timestamp,
            where: `${r.segment}:${r.line}`,
          }),
          NEWLINE,
        );
      }
    },
  });
  return {
    links: linker.result({ authenticated, rejected: scan.skipped_count }),
    isolation: isolation.result(),
    fleetEvents: concatBytes(fleet),
  };
}

const NEWLINE = new Uint8Array([0x0a]);

/**
 * Checkpoints both logs, as every pack does (FORMATS.md §8): the lineage checkpoint is the
 * one the pack carries (a failure stops the build: the pack would prove nothing); an audit
 * checkpoint that cannot be written is a warning.
 */
async function checkpointLogs(
  sdd: string,
  signer: CheckpointSigner,
  warnings: Warning[],
): Promise<CheckpointWriteResult> {
  const store = openLineageStore({
    sdd,
    operatorKey: () => Promise.reject(new Error("a pack never writes lineage entries")),
  });
  let lineage: CheckpointWriteResult;
  try {
    lineage = await store.checkpoint(signer);
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    throw new CompliancePackError(
      "compliance.checkpoint_refused",
      `the lineage log cannot be checkpointed, so no pack can prove its entries: ${error.message}`,
      { hint: error.hint, cause: error },
    );
  }
  const auditDir = sddFolder(sdd, "audit");
  const hasAudit = await Deno.lstat(auditDir).then((i) => i.isDirectory, () => false);
  if (hasAudit) {
    try {
      await checkpointAuditLog(auditDir, signer);
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      warnings.push({
        code: "compliance.audit_checkpoint_refused",
        message: `the audit log was not checkpointed: ${error.message}`,
      });
    }
  }
  return lineage;
}

interface WindowAnalysis {
  collected: CollectedWindow;
  attestations: PackAttestation[];
  selection: WindowSelection;
  toolCallIds: Set<string>;
  signers: { agent_id: string; kid: string }[];
  riskEntries: number;
  riskArtefacts: string[];
  unresolved: number;
}

function riskMatchers(riskPaths: readonly string[]): RegExp[] {
  return riskPaths.map((g) => {
    try {
      return compileGlob(g);
    } catch (cause) {
      throw new CompliancePackError(
        "compliance.bad_risk_path",
        `compliance.risk_paths: ${(cause as Error).message}`,
        { cause, exitCode: 2 },
      );
    }
  });
}

/**
 * One pass over the log in log order, up to the line the pack's checkpoint covers (lines
 * appended after it, by a run still writing, belong to the next pack): picks the window,
 * checks each window entry against the checkpoint's tree, reads its sidecar and feeds it to
 * the pack's members (compressed log and CSV, signatures), the fork analysis, the signers and
 * the risk counts. No entry is kept once it has been fed.
 */
async function analyzeWindow(
  logPath: string,
  window: PackWindow,
  lineageDir: string,
  riskPaths: readonly string[],
  warnings: Warning[],
  committed: CheckpointedWindow,
  maxLines: number,
  deflate: MembersDeflate,
  sidecars: SidecarSignatures,
): Promise<WindowAnalysis> {
  const matchers = riskMatchers(riskPaths);
  const selector = new WindowSelector(window, { keep: false });
  const toolCallIds = new Set<string>();
  const signers = new Map<string, { agent_id: string; kid: string }>();
  const analyzer = new LineageAnalyzer();
  let riskEntries = 0;
  const riskArtefacts = new Set<string>();
  // Foreign attestations stored beside entries (few): walked once, carried for window entries.
  const stored = new Map<string, PackAttestation[]>();
  for (const a of readAttestationDirectory(lineageDir)) {
    const hex = a.location.slice(-".json".length - 64, -".json".length);
    if (a.bytes === undefined) continue;
    const list = stored.get(a.entry_hash) ?? [];
    list.push({ entryHash: a.entry_hash, hex, bytes: a.bytes });
    stored.set(a.entry_hash, list);
  }
  const attestations: PackAttestation[] = [];
  const take = (w: WindowEntry) => {
    committed.add(w.hash, w.leaf);
    attestations.push(...stored.get(w.hash) ?? []);
    // Its sidecar is read and packed where `sidecars` runs (a worker); the line goes to the
    // log member here.
    sidecars.add(w.entry.artefact_path, w.hash);
    members.add(w.line, w.hash, undefined);
    toolCallIds.add(w.entry.tool_call_id);
    const signer = `${w.entry.agent_id}\u0000${w.entry.agent_card_kid}`;
    if (!signers.has(signer)) {
      signers.set(signer, { agent_id: w.entry.agent_id, kid: w.entry.agent_card_kid });
    }
    analyzer.add({
      hash: w.hash,
      artefact_path: w.entry.artefact_path,
      parent_hashes: w.entry.parent_hashes,
      content_hash: w.entry.content_hash,
    });
    if (matchers.some((m) => m.test(w.entry.artefact_path))) {
      riskEntries++;
      riskArtefacts.add(w.entry.artefact_path);
    }
  };
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(logPath, { read: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    warnings.push({ code: "compliance.no_log", message: `no lineage log at ${logPath}` });
  }
  let later = 0;
  // The log and CSV are deflated on a worker while this thread reads sidecars and parses.
  const members = new WindowMembers({ deflate });
  let collected: CollectedWindow;
  try {
    if (file !== undefined) {
      for await (const l of streamLines(file.readable)) {
        if (l.line > maxLines) {
          later++;
          continue;
        }
        if (l.tooLong) selector.skip(l.line, "line longer than the reader's limit");
        else {
          const picked = selector.add(l.line, l.bytes, l.terminated);
          if (picked === undefined) continue;
          take(picked);
          const backlog = members.backlog();
          if (backlog !== undefined) await backlog;
          const unread = sidecars.backlog();
          if (unread !== undefined) await unread;
        }
      }
    }
    const [window, signed] = await Promise.all([members.finish(), sidecars.finish()]);
    collected = { ...window, signatures: signed.signatures };
    for (const p of signed.problems) {
      const sidecar = join(lineageDir, signaturePath(p.artefact, p.hash));
      warnings.push({
        code: "compliance.signature_missing",
        message: `${sidecar}: signature of ${p.hash} ${
          p.problem ?? "is missing"
        }; the pack will fail verification`,
      });
    }
  } finally {
    members.close();
    sidecars.close();
  }
  if (later > 0) {
    warnings.push({
      code: "compliance.after_checkpoint",
      message:
        `${later} line(s) of ${logPath} were appended after the pack's checkpoint and are left for the next pack`,
    });
  }
  const selection = selector.result();
  for (const s of selection.skipped) {
    warnings.push({
      code: "compliance.log_line_skipped",
      message: `${logPath}:${s.line}: not a valid entry, left out of the pack (${s.reason})`,
    });
  }
  return {
    collected,
    attestations,
    selection,
    toolCallIds,
    signers: [...signers.values()],
    riskEntries,
    riskArtefacts: [...riskArtefacts].sort(),
    unresolved: analyzer.unresolvedForks().length + analyzer.splitHeads().length,
  };
}

/**
 * Builds the pack of `since`..`until` from the project at `sdd`. Throws
 * {@linkcode CompliancePackError} when it cannot be built honestly (conflicting cards for a
 * signer, bad risk glob); everything else becomes a warning, and the self-check
 * ({@linkcode verifyWrittenPack}) shows its effect. The phases are helper functions so that
 * what each one holds (the fork analysis, the window's members) is garbage before the next.
 *
 * @example
 * ```ts ignore
 * const out = await openAtomicFile(output);
 * const r = await buildProjectPack({ sdd, org, since, until, builtAt: null, builder,
 *   compliance: config.compliance, signer, env, sink: out });
 * await out.commit();
 * ```
 */
export async function buildProjectPack(options: ProjectPackOptions): Promise<ProjectPackResult> {
  const window = packWindow(options.since, options.until);
  if (window === undefined) {
    throw new CompliancePackError(
      "compliance.bad_period",
      `${options.since}..${options.until} is not a range of UTC days`,
      { exitCode: 2 },
    );
  }
  const warnings: Warning[] = [];
  // ~100 MB of members to checksum: the native CRC-32 (the same value as the pure one).
  await loadNativeCrc32();
  const lineageDir = sddFolder(options.sdd, "lineage");
  const signer: CheckpointSigner = {
    ...options.signer,
    kid: kidForPublicKey(options.signer.publicKey),
  };
  // Workers (each stops when its part is done; all are stopped however this ends). The
  // window's two start now, so that they load while this thread checkpoints the logs. A small
  // log is packed on this thread: a worker's start costs more than its share of so little
  // work. Either way the same code makes the same bytes (the log's size picks only the thread).
  const inThread = await Deno.stat(join(lineageDir, LOG_FILE)).then(
    (s) => s.size < IN_THREAD_LOG_BYTES,
    () => true,
  );
  const workers: { close(): void }[] = [];
  const deflate = () => {
    const d = inThread ? inThreadDeflate() : offThreadDeflate();
    workers.push(d);
    return d;
  };
  const sidecars = inThread ? inThreadSidecars(lineageDir) : offThreadSidecars(lineageDir);
  workers.push(sidecars);
  const windowDeflate = deflate();
  try {
    const checkpoint = await checkpointLogs(options.sdd, signer, warnings);
    const committed = new CheckpointedWindow(
      checkpoint.checkpoint,
      await committedTree(lineageDir, checkpoint.checkpoint),
    );
    return await analyzeAndWrite(options, window, {
      lineageDir,
      warnings,
      checkpoint,
      committed,
      deflate,
      window: { deflate: windowDeflate, sidecars },
    });
  } finally {
    for (const w of workers) w.close();
  }
}

/** The window's analysis and the pack's write (see {@linkcode buildProjectPack}). */
async function analyzeAndWrite(
  options: ProjectPackOptions,
  window: PackWindow,
  built: {
    lineageDir: string;
    warnings: Warning[];
    checkpoint: CheckpointWriteResult;
    committed: CheckpointedWindow;
    deflate: () => MembersDeflate;
    /** The window's deflate and sidecar readers. */
    window: { deflate: MembersDeflate; sidecars: SidecarSignatures };
  },
): Promise<ProjectPackResult> {
  const { lineageDir, warnings, checkpoint, committed, deflate } = built;
  const a = await analyzeWindow(
    join(lineageDir, LOG_FILE),
    window,
    lineageDir,
    options.compliance.risk_paths,
    warnings,
    committed,
    checkpoint.checkpoint.size,
    built.window.deflate,
    built.window.sidecars,
  );
  // The window's worker has stopped; the manifest gets a fresh one (not the window's grown
  // heap), which loads while this thread links the audit log and builds the manifest.
  const manifestDeflate = deflate();
  const selection = a.selection;
  const picked = selectCards(readCardDirectory(sddFolder(options.sdd, "agents")), a.signers);
  if (picked.conflicts.length > 0) {
    const c = picked.conflicts[0];
    throw new CompliancePackError(
      "compliance.conflicting_cards",
      `conflicting agent cards for agent ${JSON.stringify(c.agent_id)} kid ${
        JSON.stringify(c.kid)
      }: ${c.locations.join(" and ")} hold different keys`,
      { hint: "'bernstein lineage gate' reports it too; remove the card that is not the agent's" },
    );
  }
  for (const m of picked.missing) {
    warnings.push({
      code: "compliance.card_missing",
      message: `no agent card for agent ${JSON.stringify(m.agent_id)} kid ${
        JSON.stringify(m.kid)
      }; the pack will fail verification`,
    });
  }
  for (const u of picked.unusable) {
    warnings.push({ code: "compliance.card_unusable", message: `${u.location}: ${u.problem}` });
  }
  if (a.unresolved > 0) {
    warnings.push({
      code: "compliance.unresolved_fork",
      message:
        `${a.unresolved} unresolved fork(s) in the window; the pack will fail verification until they are merged ('bernstein lineage forks')`,
    });
  }
  const facts = a.collected.facts;
  const { links: audit, isolation, fleetEvents } = await auditLinks(
    options.sdd,
    options.env,
    a.toolCallIds,
    options,
  );
  if (!audit.checked) {
    warnings.push({
      code: "compliance.audit_not_linked",
      message: `tool calls were not linked to audit events: ${audit.reason}`,
    });
  }
  const article12 = buildArticle12({
    facts,
    riskPaths: options.compliance.risk_paths,
    riskEntryCount: a.riskEntries,
    riskArtefacts: a.riskArtefacts,
    unresolvedForkCount: a.unresolved,
    audit,
    agentIsolation: isolation,
    remoteBiometricIdentification: options.compliance.remote_biometric_identification,
    retentionDays: options.compliance.retention_days,
    periodDays: window.days,
    retainedSinceNs: selection.retainedSinceNs,
    periodEndNs: window.endNs,
    unreadableLogLines: selection.skipped.length,
  });
  const written = await writePack(
    {
      org: options.org,
      since: options.since,
      until: options.until,
      builtAt: options.builtAt,
      builder: options.builder,
      externalParents: selection.externalParents,
      cards: picked.cards,
      article12,
      operatorPublicKey: options.signer.publicKey,
      checkpoint: committed.members(options.signer.publicKey),
      attestations: a.attestations,
      ...(options.attachments ? { attachments: options.attachments } : {}),
      ...(fleetEvents.length > 0 ? { fleetEvents } : {}),
    },
    a.collected,
    options.signer,
    options.sink,
    // Deflated there while this thread writes the members before it; the worker stops then.
    { compress: (name, bytes) => compressMember(manifestDeflate, name, bytes) },
  );
  return {
    bytes: written.bytes,
    article12,
    facts,
    logLines: selection.logLines,
    skipped: selection.skipped,
    externalParents: selection.externalParents,
    warnings,
  };
}
