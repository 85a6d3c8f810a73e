// The layout of a project's `.sdd/` folder: the one place that names its folders and the files
// of a run's record folder, and checks every run id and session name before it becomes a path.
// Other folders own the insides of their own subfolders (src/ledger, src/lineage, src/cas …),
// but reach `.sdd/<folder>` through here.

import { join } from "node:path";
import { UsageError } from "../errors/mod.ts";

/** What a run id may look like on disk (the generated ones are `adjective-noun-hex6`). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks a run id from outside (CLI argument, folder name, a state file) before it becomes a
 * path; `runs.bad_id` (exit 2) otherwise.
 *
 * @example
 * ```ts
 * import { equal, throws } from "node:assert/strict";
 * equal(checkRunId("brave-otter-3fa9c2"), "brave-otter-3fa9c2");
 * throws(() => checkRunId("../x"));
 * ```
 */
export function checkRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId) || runId.includes("..")) {
    throw new UsageError(
      "runs.bad_id",
      `'${runId}' is not a run id (letters, digits, '.', '_', '-'; e.g. brave-otter-3fa9c2)`,
    );
  }
  return runId;
}

/** What a session name may look like (it names a worktree, a branch and a log file). */
const SESSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,159}$/;

/** True when `name` may name an agent session (a worktree, a branch, a log file). */
export function isSessionName(name: string): boolean {
  return SESSION_PATTERN.test(name) && !name.includes("..");
}

/** Checks an agent session name before it becomes a path; `runs.bad_session` otherwise. */
export function checkSessionName(session: string): string {
  if (!isSessionName(session)) {
    throw new UsageError("runs.bad_session", `'${session}' is not a session name`);
  }
  return session;
}

/** The name of the project's state folder, at the repository root. */
export const SDD_DIR = ".sdd";

/** `<root>/.sdd`. */
export function sddOf(root: string): string {
  return join(root, SDD_DIR);
}

/** The folders directly under `.sdd/`, by what they hold. */
export const SDD_FOLDERS = {
  /** HMAC-chained audit log (kept). */
  audit: "audit",
  /** Lineage log, run spines, receipts (kept). */
  lineage: "lineage",
  /** Agent cards (public keys and identities) the lineage log's signatures are checked with. */
  agents: "agents",
  /** Content-addressed blobs (kept). */
  cas: "cas",
  /** Operator, install and agent keys (kept, private). */
  keys: "keys",
  /** One folder per run: summary, decisions, report, scorecard (kept). */
  runs: "runs",
  /** Live state of the current run: task log, tokens, homes, logs (disposable). */
  runtime: "runtime",
  /** One git worktree per agent session (disposable). */
  worktrees: "worktrees",
  /** Backlog items waiting to be planned (`open/`) and done (`closed/`). */
  backlog: "backlog",
  /** Endpoint certification receipts (src/providers). */
  endpoints: "endpoints",
  /** Worker tokens and their records (src/workers). */
  workers: "workers",
} as const;

/** `<sdd>/<folder>` for one of {@linkcode SDD_FOLDERS}. */
export function sddFolder(sdd: string, folder: keyof typeof SDD_FOLDERS): string {
  return join(sdd, SDD_FOLDERS[folder]);
}

/** The files directly under `.sdd/`. */
export const SDD_FILES = {
  /** The workspace configuration layer. */
  config: "config.yaml",
  /** The run lock a running `bernstein run` holds. */
  runLock: "run.lock",
  /** This install's id (attachment attestations name it). */
  installId: "install_id",
  /** Keeps disposable state and private keys out of git. */
  gitignore: ".gitignore",
} as const;

/** `<sdd>/<file>` for one of {@linkcode SDD_FILES}. */
export function sddFile(sdd: string, file: keyof typeof SDD_FILES): string {
  return join(sdd, SDD_FILES[file]);
}

/** `<sdd>/backlog/open` or `<sdd>/backlog/closed`. */
export function backlogFolder(sdd: string, state: "open" | "closed"): string {
  return join(sddFolder(sdd, "backlog"), state);
}

/** The files of a run's record folder `.sdd/runs/<run-id>/`. */
export const RUN_FILES = {
  summary: "summary.json",
  decisions: "decisions.json",
  report: "report.html",
  tasks: "tasks.jsonl",
  attachments: "attachments.json",
  scorecard: "scorecard",
} as const;

/** `<sdd>/runs`. */
export function runsRoot(sdd: string): string {
  return join(sdd, SDD_FOLDERS.runs);
}

/** `<sdd>/runs/<run-id>` (the id checked). */
export function runDir(sdd: string, runId: string): string {
  return join(runsRoot(sdd), checkRunId(runId));
}

/**
 * `<sdd>/runs/<run-id>/<file>` for one of {@linkcode RUN_FILES}.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(runFile(".sdd", "brave-otter-3fa9c2", "summary"), ".sdd/runs/brave-otter-3fa9c2/summary.json");
 * ```
 */
export function runFile(sdd: string, runId: string, file: keyof typeof RUN_FILES): string {
  return join(runDir(sdd, runId), RUN_FILES[file]);
}

/** `<sdd>/runtime`. */
export function runtimeDir(sdd: string): string {
  return join(sdd, SDD_FOLDERS.runtime);
}

/** What `.sdd/runtime/` holds that more than one part of bernstein reads. */
export const RUNTIME_ENTRIES = {
  /** The current run's record (src/orchestrator/current_run.ts; the name predates it). */
  currentRun: "session.json",
  /** The live task log (JSONL task store). */
  tasks: "tasks.jsonl",
  /** One file per agent session. */
  sessions: "sessions",
  /** Merges the run refused, for a resumed run. */
  refusedMerges: "refused_merges.jsonl",
  /** The work ledger, a folder per run. */
  ledger: "ledger",
  /** The task server's port: written by the server, found by its clients (`bernstein task`). */
  serverPort: "server.port",
} as const;

/**
 * `<sdd>/runtime/<entry>` for one of {@linkcode RUNTIME_ENTRIES}.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(runtimePath(".sdd", "tasks"), ".sdd/runtime/tasks.jsonl");
 * ```
 */
export function runtimePath(sdd: string, entry: keyof typeof RUNTIME_ENTRIES): string {
  return join(runtimeDir(sdd), RUNTIME_ENTRIES[entry]);
}

/** Where an agent session works and writes: its worktree, HOME and output log. */
export interface SessionLayout {
  /** `<sdd>/worktrees/<session>`. */
  worktree: string;
  /** The same, relative to the project root (`.sdd/worktrees/<session>`). */
  worktreeRelative: string;
  /** `<sdd>/runtime/homes/<session>`. */
  home: string;
  /** `<sdd>/runtime/<session>.log`. */
  logPath: string;
}

/** The paths of one agent session (the name checked). */
export function sessionLayout(sdd: string, session: string): SessionLayout {
  checkSessionName(session);
  return {
    worktree: join(sdd, SDD_FOLDERS.worktrees, session),
    worktreeRelative: join(".sdd", SDD_FOLDERS.worktrees, session),
    home: join(runtimeDir(sdd), "homes", session),
    logPath: join(runtimeDir(sdd), `${session}.log`),
  };
}
