/**
 * What `bernstein run` refuses before any worktree or process exists: a detached HEAD, the
 * default branch (unless allowed), uncommitted changes to tracked files, a run already in
 * progress, and a task whose adapter is unknown or missing (a usage error, exit 2).
 */
import type { PathLookup } from "../adapters/mod.ts";
import type { Config } from "../config/mod.ts";
import { BernsteinError, UsageError } from "../errors/mod.ts";
import { closeLockFile, type EnvReader, sddFile } from "../io/mod.ts";
import type { Task, TaskDraft } from "../tasks/mod.ts";
import { resolveTaskCli } from "./adapter_choice.ts";
import type { Git } from "./git.ts";
import { type CurrentRun, readCurrentRun } from "./current_run.ts";
import { processAlive } from "./pid_liveness.ts";
import { findProject } from "../config/mod.ts";

const DEFAULT_BRANCH_ENV = "BERNSTEIN_ALLOW_MERGE_TO_DEFAULT_BRANCH";

/** The repository checks that refuse a run; the branch merges will go into. */
export async function preflightRepository(
  git: Git,
  env: EnvReader,
  exempt: boolean,
): Promise<string> {
  const branch = await git.currentBranch();
  if (branch === undefined) {
    throw new UsageError(
      "run.detached_head",
      "HEAD is detached: merges need a branch checked out at the repository root",
      {
        hint: "git checkout -b feature/<name>",
      },
    );
  }
  if (exempt) return branch;
  const defaultBranch = await git.defaultBranch();
  if (branch === defaultBranch && env.get(DEFAULT_BRANCH_ENV) !== "1") {
    throw new UsageError(
      "run.default_branch",
      `refusing to run on the default branch '${branch}': agents' work would be merged straight into it`,
      {
        hint:
          `check out a feature branch first (git checkout -b feature/<name>), or set ${DEFAULT_BRANCH_ENV}=1`,
      },
    );
  }
  if (await git.isDirty(undefined, true)) {
    throw new UsageError(
      "run.dirty_tree",
      `the work tree at ${git.root} has uncommitted changes to tracked files; merges would mix with them`,
      {
        hint: "commit or stash them first",
      },
    );
  }
  return branch;
}

/** A held run lock. */
export interface RunLock {
  /** Its path (`.sdd/run.lock`). */
  path: string;
  /** Releases it (unlocking and closing the descriptor; a crash releases it too). */
  release(): void;
}

/**
 * Takes the project's run lock (`.sdd/run.lock`, an exclusive flock held for the run's whole
 * life) without waiting: a second `bernstein run` started at the same instant is refused before
 * it reads the current run's record, archives a task log or touches any other state. The kernel
 * releases the lock when the process dies, so a crashed run never blocks the resume. Undefined
 * outside a git repository (the run refuses that next, with its own error).
 */
export async function lockRun(cwd: string): Promise<RunLock | undefined> {
  const project = await findProject(cwd);
  if (project.gitDir === undefined) return undefined;
  await Deno.mkdir(project.sdd, { recursive: true });
  const path = sddFile(project.sdd, "runLock");
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  let held = false;
  try {
    held = await file.tryLock(true);
  } finally {
    if (!held) file.close();
  }
  if (!held) {
    const holder = await readCurrentRun(project.sdd).catch(() => undefined);
    const who = holder?.status === "running" ? ` (run ${holder.run_id}, pid ${holder.pid})` : "";
    throw new BernsteinError(
      "run.in_progress",
      `another bernstein run of this project holds ${path}${who}`,
      {
        hint:
          "watch it with 'bernstein status' / 'bernstein logs', or stop it with 'bernstein stop'",
      },
    );
  }
  return { path, release: () => closeLockFile(file) };
}

/** Refuses to start while another live orchestrator runs this project. */
export function refuseRunInProgress(previous: CurrentRun | undefined): void {
  if (previous?.status === "running" && processAlive(previous.pid) && previous.pid !== Deno.pid) {
    throw new BernsteinError(
      "run.in_progress",
      `run ${previous.run_id} is already in progress (pid ${previous.pid})`,
      {
        hint:
          "watch it with 'bernstein status' / 'bernstein logs', or stop it with 'bernstein stop'",
      },
    );
  }
}

/**
 * Refuses `--attach` on a run that resumes: a resumed run keeps the attachments it started with
 * (the attested bytes in CAS), so new values would be silently dropped. `--fresh` starts over.
 */
export function refuseAttachOnResume(
  previous: CurrentRun | undefined,
  resume: boolean,
  attachCount: number,
): void {
  if (!resume || attachCount === 0 || previous === undefined) return;
  throw new UsageError(
    "attach.on_resume",
    `run ${previous.run_id} was interrupted and resumes with the attachments it started with; ` +
      `--attach (${attachCount} value(s)) cannot change them`,
    {
      location: "run.attach[0]",
      hint: "drop --attach to resume it, or add --fresh to start a new run with these attachments",
    },
  );
}

function adapterOfDraft(draft: TaskDraft): Pick<Task, "cli" | "role" | "id"> {
  return { id: draft.id ?? draft.title, cli: draft.cli ?? null, role: draft.role };
}

/**
 * The adapter name of every planned task (by id, or title without one); an unknown or missing
 * adapter is a usage error (exit 2) keeping the adapter's code.
 */
export async function resolvePlannedAdapters(
  drafts: readonly TaskDraft[],
  choice: { config: Config; lookup: PathLookup; cliOverride?: string; planCli?: string },
): Promise<Record<string, string>> {
  const adapters: Record<string, string> = {};
  for (const draft of drafts) {
    const resolved = await resolveTaskCli(adapterOfDraft(draft), choice).catch(
      (error: unknown) => {
        if (!(error instanceof BernsteinError)) throw error;
        throw new UsageError(error.code, error.message, {
          location: error.location,
          hint: error.hint,
        });
      },
    );
    adapters[draft.id ?? draft.title] = resolved.adapter.name;
  }
  return adapters;
}
