// The current run's record (`.sdd/runtime/session.json`, a name kept for the files already on
// disk): which run this project is running or ran last, where its work came from and the choices
// a resumed run must keep. Not to be confused with an agent session (agent_session.ts, one
// agent process in one worktree, whose files are under `.sdd/runtime/sessions/`).

import { join } from "node:path";
import { z } from "zod";
import { parseJson } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { readFileIfExists, RUN_ID_PATTERN, runtimeDir, writeFileAtomic } from "../io/mod.ts";

/** Where a run's work came from. */
export type PlanningSource =
  | { kind: "plan"; path: string }
  | { kind: "backlog"; dir: string; filter?: string; github?: GitHubSyncSource }
  | { kind: "goal"; goal: string };

/** What the GitHub backlog sync did before a run planned (recorded with the run's source). */
export interface GitHubSyncSource {
  /** `owner/name`. */
  repo: string;
  /** Open issues synced. */
  open: number;
  /** Items written for the first time, rewritten, moved to closed/. */
  created: number;
  /** See {@linkcode GitHubSyncSource.created}. */
  updated: number;
  /** See {@linkcode GitHubSyncSource.created}. */
  closed: number;
}

/** The current run's record (`.sdd/runtime/session.json`): what resume needs to carry on. */
export interface CurrentRun {
  /** Run id (adjective-noun-hex). */
  run_id: string;
  /** `running` until the run ends; a `running` run whose process is gone is resumable. */
  status: "running" | "finished";
  /** Process id of the orchestrator. */
  pid: number;
  /** Host name the run started on. */
  host: string;
  /** ISO time the run started. */
  started_at: string;
  /** The branch checked out at the repository root, which merges go into. */
  branch: string;
  /** Where the tasks came from. */
  source: PlanningSource;
  /** The goal text, when there was one. */
  goal: string | null;
  /** How many times the run was (re)started: 1 for a fresh run. */
  attempt: number;
  /** Choices a resume must keep: the plan's `cli`, `--cli`, `--model`, agents at once. */
  choices: {
    plan_cli: string | null;
    cli: string | null;
    model: string | null;
    max_agents: number;
  };
}

const GITHUB_SYNC_SCHEMA = z.object({
  repo: z.string(),
  open: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  closed: z.number().int(),
});

/** What the current run's record must hold (a hand-edited or damaged one is refused by field). */
const CURRENT_RUN_SCHEMA: z.ZodType<CurrentRun> = z.object({
  run_id: z.string().regex(RUN_ID_PATTERN, "not a run id"),
  status: z.enum(["running", "finished"]),
  pid: z.number().int(),
  host: z.string(),
  started_at: z.string(),
  branch: z.string(),
  source: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("plan"), path: z.string() }),
    z.object({
      kind: z.literal("backlog"),
      dir: z.string(),
      filter: z.string().optional(),
      github: GITHUB_SYNC_SCHEMA.optional(),
    }),
    z.object({ kind: z.literal("goal"), goal: z.string() }),
  ]),
  goal: z.string().nullable(),
  attempt: z.number().int().min(1),
  choices: z.object({
    plan_cli: z.string().nullable(),
    cli: z.string().nullable(),
    model: z.string().nullable(),
    max_agents: z.number().int(),
  }),
});

/** Path of the current run's record. */
export function currentRunPath(sdd: string): string {
  return join(runtimeDir(sdd), "session.json");
}

/** Reads the current run's record, or undefined when no run ever started here. */
export async function readCurrentRun(sdd: string): Promise<CurrentRun | undefined> {
  const bytes = await readFileIfExists(currentRunPath(sdd));
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = parseJson(new TextDecoder().decode(bytes));
  } catch (cause) {
    throw new BernsteinError("run.session_corrupt", `${currentRunPath(sdd)} is not valid JSON`, {
      cause,
      hint: "start a new run with --fresh",
    });
  }
  const parsed = CURRENT_RUN_SCHEMA.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".") || "(the whole file)";
    throw new BernsteinError(
      "run.session_corrupt",
      `${currentRunPath(sdd)}: ${field}: ${issue.message}`,
      { location: `${currentRunPath(sdd)}:${field}`, hint: "start a new run with --fresh" },
    );
  }
  return parsed.data;
}

/** Writes the current run's record atomically. */
export async function writeCurrentRun(sdd: string, run: CurrentRun): Promise<void> {
  await Deno.mkdir(runtimeDir(sdd), { recursive: true });
  await writeFileAtomic(
    currentRunPath(sdd),
    canonicalize(run, "canon") + "\n",
  );
}
