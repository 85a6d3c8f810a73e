/**
 * Between runs and after a crash: every start first ends the agents a dead orchestrator left
 * running (each identified by its pid and that process's start time, so a recycled pid is
 * never signalled); a fresh run moves the previous run's task log under its run folder; a
 * resumed run keeps interrupted agents' partial work on their branches, puts interrupted tasks
 * back to open, and sends tasks whose agents had finished (`done`) straight to checks and
 * merge — no task runs twice.
 */
import { type Clock, runDir, runFile, runtimePath, systemClock } from "../io/mod.ts";
import type { Task, TaskStore } from "../tasks/mod.ts";
import type { Git } from "./git.ts";
import type { Recorder } from "./recorder.ts";
import {
  isRemoteSession,
  listSessionFiles,
  saveSessionFile,
  type SessionFile,
} from "./run_state.ts";
import { type CurrentRun } from "./current_run.ts";
import { isProcessAlive, killProcessGroup, liveStartTime } from "./pid_liveness.ts";

/** An agent of a dead run that this start ended. */
export interface EndedAgent {
  /** Session id. */
  session: string;
  /** Its task. */
  taskId: string;
  /** Its process (group) id. */
  pid: number;
}

/**
 * Ends (SIGKILL to the process group) every agent of this host a session file still lists as
 * running whose process is alive and is still that agent: same kernel start time as recorded
 * at spawn. An agent on a worker host is that host's to end.
 * Where start times cannot be read (no /proc), a live pid of a running session is ended as
 * before. Returns once each is gone (see {@linkcode LEFTOVER_EXIT_WAIT_MS}). Call only when no
 * orchestrator of this project is alive.
 */
export async function endLeftoverAgents(sdd: string): Promise<EndedAgent[]> {
  const ended: EndedAgent[] = [];
  for (const file of await listSessionFiles(sdd)) {
    // A worker host's agent: its pid names some process of that host, not of this one.
    if (file.state !== "running" || isRemoteSession(file)) continue;
    const live = await liveStartTime(file.pid);
    if (live === undefined) continue;
    const now = live.startTime;
    if (file.pid_start != null && now !== null && now !== file.pid_start) continue;
    killProcessGroup(file.pid);
    ended.push({ session: file.session, taskId: file.task_id, pid: file.pid });
  }
  await untilGone(ended.map((a) => a.pid));
  return ended;
}

/**
 * How long a start waits for the agents it ended to be gone. A SIGKILLed process still needs
 * the CPU once to exit, and on a loaded machine (or at a low priority) that can take seconds;
 * the run starts only after, so nothing of the dead run is still alive beside the new one. A
 * process stuck in the kernel past this (a hung network file system) is left dying: it can no
 * longer run any code of its own.
 */
const LEFTOVER_EXIT_WAIT_MS = 30_000;

/**
 * Waits until none of `pids` is alive, or {@linkcode LEFTOVER_EXIT_WAIT_MS} passed. Each look
 * is asynchronous (where /proc must be read through cat(1), the event loop goes on meanwhile:
 * the run's task server and dashboard are already up) and backs off from 10 to 250 ms.
 */
export async function untilGone(
  pids: readonly number[],
  alive: (pid: number) => Promise<boolean> = isProcessAlive,
  clock: Pick<Clock, "monotonicMs" | "sleep"> = systemClock,
): Promise<void> {
  const giveUp = clock.monotonicMs() + LEFTOVER_EXIT_WAIT_MS;
  let left = await stillAlive(pids, alive);
  for (
    let pause = 10;
    left.length > 0 && clock.monotonicMs() < giveUp;
    pause = Math.min(pause * 2, 250)
  ) {
    await clock.sleep(pause);
    left = await stillAlive(left, alive);
  }
}

async function stillAlive(
  pids: readonly number[],
  alive: (pid: number) => Promise<boolean>,
): Promise<number[]> {
  const live = await Promise.all(pids.map(alive));
  return pids.filter((_, i) => live[i]);
}

/** A fresh run starts with an empty task log: the previous run's log is moved under its run. */
export async function archivePreviousRun(
  sdd: string,
  previous: CurrentRun | undefined,
): Promise<void> {
  const log = runtimePath(sdd, "tasks");
  const exists = await Deno.stat(log).then(() => true, () => false);
  if (!exists) return;
  const runId = previous?.run_id ?? `unknown-${Date.now()}`;
  await Deno.mkdir(runDir(sdd, runId), { recursive: true });
  await Deno.rename(log, runFile(sdd, runId, "tasks"));
  await Deno.remove(runtimePath(sdd, "sessions"), { recursive: true }).catch(() => {});
}

/** What crash recovery works with. */
export interface RecoveryDeps {
  /** `.sdd/` folder. */
  sdd: string;
  /** Task store. */
  store: TaskStore;
  /** Git of the root. */
  git: Git;
  /** Where facts go. */
  recorder: Recorder;
  /** Takes a task whose agent finished before the crash to checks and merge. */
  adoptDone: (task: Task, file: SessionFile) => void;
}

/** Recovers a crashed run (its agents already ended); the number of tasks still to do. */
export async function recoverAfterCrash(deps: RecoveryDeps): Promise<number> {
  const { sdd, store, git } = deps;
  const files = await listSessionFiles(sdd);
  const tasks = new Map((await store.list({})).map((t) => [t.id, t]));
  for (const file of files) {
    if (file.state !== "running") continue;
    const task = tasks.get(file.task_id);
    if (task?.status === "done") {
      deps.adoptDone(task, file);
      continue;
    }
    await keepPartialWork(deps, file);
  }
  await git.pruneWorktrees().catch(() => {});
  await store.releaseStaleClaims({
    olderThanMs: 0,
    actor: "orchestrator",
    reason: "resumed after an orchestrator crash",
  });
  return (await store.list({ status: ["open", "planned"] })).length;
}

/** An interrupted session: its work committed on its branch, its worktree removed. */
async function keepPartialWork(deps: RecoveryDeps, file: SessionFile): Promise<void> {
  const exists = await Deno.stat(file.worktree).then(() => true, () => false);
  if (exists) {
    await deps.git.commitAll(
      file.worktree,
      `partial work of ${file.session} (interrupted by an orchestrator crash)`,
    ).catch(() => undefined);
    await deps.git.removeWorktree(file.worktree, true).catch(() => {});
  }
  await saveSessionFile(deps.sdd, { ...file, state: "abandoned" });
  await deps.recorder.warn(
    `${file.task_id}: session ${file.session} was interrupted; its partial work is on ${file.branch}`,
  );
}
