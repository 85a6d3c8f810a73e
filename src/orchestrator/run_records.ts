// Gathers what `runs report` shows about one run from `.sdd/`: the run's window of the audit
// chain (authenticated when the audit key is there), its tasks (the live task log, or the copy
// archived under .sdd/runs/<run-id>/ when a later run started), its summary, the tails of its
// agents' logs, and the verification of audit chain, lineage log and scorecard, done now.
import {
  type AuditKey,
  listSegments,
  readAuditKey,
  resolveAuditKeyPath,
  scanAuditLog,
  verifyAuditLog,
} from "../audit/mod.ts";
import { type JsonObject, parseJson, splitLines } from "../canonical/mod.ts";
import { projectOperatorPublicKey } from "../compliance/project/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import {
  type EnvReader,
  isSessionName,
  readFileIfExists,
  readUpTo,
  runFile,
  runtimePath,
  sddFolder,
  sessionLayout,
} from "../io/mod.ts";
import { readLedger, verifyScorecard } from "../ledger/mod.ts";
import { lineagePaths, resolveOperatorHmacKey } from "../lineage/store/mod.ts";
import {
  type CheckResult,
  numberOf,
  type RunEventRecord,
  type RunHeader,
  type RunRecords,
  selectRunEvents,
  tasksFromEvents,
  UNCHECKED,
  type Verification,
} from "../report/mod.ts";
import { readTaskLog, type Task } from "../tasks/mod.ts";
import { openDirectoryGateInput, runLineageGate } from "../verify/mod.ts";
import { readCurrentRun } from "./current_run.ts";
import { processAlive } from "./pid_liveness.ts";

/** Options of {@linkcode loadRunRecords}. */
export interface LoadRunRecordsOptions {
  /** Environment (audit key location, operator secret). */
  env: EnvReader;
  /** Verify the audit chain, lineage log and scorecard now (the report does; tests may not). */
  verify?: boolean;
  /** Bytes of each agent log's tail to keep (0 = none). */
  logTailBytes?: number;
}

/** How the audit records were read. */
interface EventsRead {
  events: RunEventRecord[];
  key: AuditKey | undefined;
  keyProblem: string | undefined;
}

const decoder = new TextDecoder();

async function readKey(env: EnvReader): Promise<{ key?: AuditKey; problem?: string }> {
  const location = resolveAuditKeyPath(env);
  try {
    return { key: await readAuditKey(location.path) };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Every record of the chain: authenticated with the key, else read as they are (marked). */
async function readEvents(sdd: string, env: EnvReader): Promise<EventsRead> {
  const dir = sddFolder(sdd, "audit");
  const { key, problem } = await readKey(env);
  if (key !== undefined) {
    const scan = await scanAuditLog(dir, key);
    return { events: scan.records.map((r) => r.record), key, keyProblem: undefined };
  }
  const events: RunEventRecord[] = [];
  for (const segment of await listSegments(dir).catch(() => [])) {
    const bytes = await readFileIfExists(segment.path) ?? new Uint8Array();
    for (const line of splitLines(bytes).lines) {
      try {
        const value = parseJson(decoder.decode(line));
        if (isEventRecord(value)) events.push(value);
      } catch {
        // A line that is not JSON is reported by `audit verify`, not here.
      }
    }
  }
  return { events, key: undefined, keyProblem: problem };
}

function isEventRecord(value: unknown): value is RunEventRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.timestamp === "string" && typeof v.event_type === "string" &&
    typeof v.resource_id === "string" && typeof v.resource_type === "string" &&
    typeof v.actor === "string" && typeof v.details === "object" && v.details !== null;
}

async function readJsonObject(path: string): Promise<JsonObject | null> {
  const bytes = await readFileIfExists(path);
  if (bytes === undefined) return null;
  try {
    const value = parseJson(decoder.decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) &&
        !(value instanceof Uint8Array)
      ? value as JsonObject
      : null;
  } catch {
    return null;
  }
}

/** The run's tasks: the live log when this is the current run, else its archived copy. */
async function readTasks(
  sdd: string,
  runId: string,
  current: boolean,
  events: RunEventRecord[],
): Promise<Task[]> {
  const paths = current ? [runtimePath(sdd, "tasks")] : [runFile(sdd, runId, "tasks")];
  for (const path of paths) {
    const exists = await Deno.stat(path).then(() => true, () => false);
    if (!exists) continue;
    try {
      return [...(await readTaskLog(path)).tasks.values()];
    } catch {
      // A damaged log: fall back to what the audit chain says.
    }
  }
  return tasksFromEvents(events);
}

async function tail(path: string, bytes: number): Promise<string | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return undefined;
  }
  try {
    const size = (await file.stat()).size;
    const start = Math.max(0, size - bytes);
    await file.seek(start, Deno.SeekMode.Start);
    let text = decoder.decode(await readUpTo(file, size - start));
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    return text;
  } finally {
    file.close();
  }
}

/** The last `bytes` of each session's output log (`.sdd/runtime/<session>.log`). */
export async function readLogTails(
  sdd: string,
  sessions: readonly string[],
  bytes: number,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (bytes <= 0) return out;
  for (const session of sessions) {
    if (!isSessionName(session)) continue;
    const text = await tail(sessionLayout(sdd, session).logPath, bytes);
    if (text !== undefined) out[session] = text;
  }
  return out;
}

function sessionsOf(events: readonly RunEventRecord[]): string[] {
  return events.filter((e) => e.event_type === "agent.spawned").map((e) => e.resource_id);
}

async function header(
  sdd: string,
  runId: string,
  events: RunEventRecord[],
): Promise<{ header: RunHeader; current: boolean }> {
  const recorded = await readCurrentRun(sdd).catch(() => undefined);
  const current = recorded?.run_id === runId;
  const started = events.find((e) => e.event_type === "run.started");
  const finished = events.some((e) => e.event_type === "run.finished");
  let open: JsonObject | undefined;
  try {
    const ledger = await readLedger(sdd, runId);
    open = ledger.rows.find((r) => r.kind === "run.open")?.payload;
  } catch {
    // No ledger: the header comes from the audit chain and the current run's record
    // (session.json) alone.
  }
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const source = current && recorded ? recorded.source : started?.details.source;
  const sourceView = typeof source === "object" && source !== null && !Array.isArray(source)
    ? sourceOf(source as Record<string, unknown>)
    : null;
  const state: RunHeader["state"] = finished || (current && recorded?.status === "finished")
    ? "finished"
    : current && recorded !== undefined && recorded.status === "running" &&
        processAlive(recorded.pid)
    ? "running"
    : "interrupted";
  return {
    current,
    header: {
      run_id: runId,
      branch: (current ? recorded?.branch : null) ?? text(started?.details.branch) ??
        text(open?.branch),
      goal: current ? recorded?.goal ?? null : null,
      source: sourceView,
      host: (current ? recorded?.host : null) ?? text(open?.host),
      started_at: (current ? recorded?.started_at : null) ?? started?.timestamp ?? null,
      max_agents: (current ? recorded?.choices.max_agents : null) ?? numberOf(open?.max_agents),
      state,
    },
  };
}

function sourceOf(source: Record<string, unknown>): RunHeader["source"] {
  const kind = typeof source.kind === "string" ? source.kind : "unknown";
  const detail = [source.path, source.dir, source.goal].find((v) => typeof v === "string");
  return { kind, detail: typeof detail === "string" ? detail : "" };
}

async function verifyAudit(sdd: string, read: EventsRead): Promise<CheckResult> {
  if (read.key === undefined) {
    return {
      status: "unchecked",
      detail: `no audit key (${read.keyProblem ?? "missing"}); records shown unauthenticated`,
    };
  }
  const report = await verifyAuditLog(sddFolder(sdd, "audit"), read.key);
  if (report.ok) {
    return {
      status: "pass",
      detail: `${report.records} records in ${report.segments.length} segment(s) authenticate`,
    };
  }
  const first = report.issues[0];
  return {
    status: "fail",
    detail: `${report.issue_count} issue(s)${
      first
        ? `; first: ${first.segment}${first.line === null ? "" : `:${first.line}`} ${first.message}`
        : ""
    }`,
  };
}

async function verifyLineage(sdd: string, env: EnvReader): Promise<CheckResult> {
  const { logPath, cardsDir } = lineagePaths(sdd);
  let operatorKey: Uint8Array | undefined;
  let hmacNote = "";
  try {
    operatorKey = await resolveOperatorHmacKey({ env });
  } catch (error) {
    hmacNote = ` (HMAC not checked: ${(error as Error).message})`;
  }
  // Checkpoint signatures are checked with the project's operator key, as `lineage gate` does.
  const { publicKey } = await projectOperatorPublicKey(sdd);
  const opened = await openDirectoryGateInput({
    logPath,
    cardsDir,
    operatorKey,
    operatorPublicKey: publicKey,
  });
  if (opened === undefined) return { status: "unchecked", detail: "no lineage log yet" };
  try {
    const result = await runLineageGate(opened.input, { workers: 0 });
    if (result.ok) {
      return {
        status: "pass",
        detail:
          `${result.entries} entries on ${result.artefacts} artefact(s), ${result.cards} agent card(s)${
            result.hmac_checked ? ", HMAC checked" : hmacNote
          }`,
      };
    }
    return {
      status: "fail",
      detail: `${result.issues.length} issue(s); first: ${result.issues[0]?.message ?? "?"}`,
    };
  } finally {
    opened.close();
  }
}

async function verifyRunScorecard(
  sdd: string,
  runId: string,
  state: RunHeader["state"],
): Promise<CheckResult> {
  const v = await verifyScorecard(sdd, runId);
  if (v.ok) return { status: "pass", detail: v.description };
  if (v.status === "artefact_missing" && state !== "finished") {
    return { status: "unchecked", detail: "the run has not finished: no scorecard yet" };
  }
  return { status: "fail", detail: v.description };
}

/**
 * Loads everything recorded about run `runId` under `sdd`. Throws `runs.not_found` when the
 * audit chain has no record of that run.
 *
 * @example
 * ```ts ignore
 * const records = await loadRunRecords(project.sdd, "brave-otter-3fa9c2", { env, verify: true });
 * const model = buildRunModel(records, { nowMs: Date.now() });
 * ```
 */
export async function loadRunRecords(
  sdd: string,
  runId: string,
  options: LoadRunRecordsOptions,
): Promise<RunRecords> {
  const read = await readEvents(sdd, options.env);
  const events = selectRunEvents(read.events, runId);
  if (events.length === 0) {
    throw new BernsteinError("runs.not_found", `the audit chain has no record of run '${runId}'`, {
      location: sddFolder(sdd, "audit"),
      hint: read.key === undefined
        ? `the audit key could not be read (${read.keyProblem}); 'bernstein runs list' lists runs`
        : "'bernstein runs list' lists runs",
    });
  }
  const { header: head, current } = await header(sdd, runId, events);
  const tasks = await readTasks(sdd, runId, current, events);
  const summary = await readJsonObject(runFile(sdd, runId, "summary"));
  const logTails = await readLogTails(sdd, sessionsOf(events), options.logTailBytes ?? 0);
  let verification: Verification = UNCHECKED;
  if (options.verify) {
    verification = {
      audit: await verifyAudit(sdd, read),
      lineage: await verifyLineage(sdd, options.env),
      scorecard: await verifyRunScorecard(sdd, runId, head.state),
    };
  }
  return { header: head, events, tasks, summary, logTails, verification };
}
