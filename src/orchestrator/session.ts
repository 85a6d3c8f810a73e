// The run session file (`.sdd/runtime/session.json`): what a resumed run needs to carry on,
// and the process start times that tell a live agent from a reused pid.

import { join } from "node:path";
import { z } from "zod";
import { parseJson } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { readFileIfExists, RUN_ID_PATTERN, writeFileAtomic } from "../io/mod.ts";

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

/** The run session file (`.sdd/runtime/session.json`): what resume needs to carry on. */
export interface SessionRecord {
  /** Run id (adjective-noun-hex). */
  run_id: string;
  /** `running` until the run ends; a `running` session whose process is gone is resumable. */
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

/** What a session file must hold: a hand-edited or damaged one is refused naming the field. */
const SESSION_SCHEMA: z.ZodType<SessionRecord> = z.object({
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

/** Path of the session file. */
export function sessionPath(sdd: string): string {
  return join(sdd, "runtime", "session.json");
}

/** Reads the session file, or undefined when there is none. */
export async function readSession(sdd: string): Promise<SessionRecord | undefined> {
  const bytes = await readFileIfExists(sessionPath(sdd));
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = parseJson(new TextDecoder().decode(bytes));
  } catch (cause) {
    throw new BernsteinError("run.session_corrupt", `${sessionPath(sdd)} is not valid JSON`, {
      cause,
      hint: "start a new run with --fresh",
    });
  }
  const parsed = SESSION_SCHEMA.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".") || "(the whole file)";
    throw new BernsteinError(
      "run.session_corrupt",
      `${sessionPath(sdd)}: ${field}: ${issue.message}`,
      { location: `${sessionPath(sdd)}:${field}`, hint: "start a new run with --fresh" },
    );
  }
  return parsed.data;
}

/** Writes the session file atomically. */
export async function writeSession(sdd: string, session: SessionRecord): Promise<void> {
  await Deno.mkdir(join(sdd, "runtime"), { recursive: true });
  await writeFileAtomic(
    sessionPath(sdd),
    canonicalize(session as unknown as Parameters<typeof canonicalize>[0], "canon") + "\n",
  );
}

/**
 * The kernel's start time of a process (Linux: field 22 of `/proc/<pid>/stat`, clock ticks
 * since boot), or null where it cannot be read. Recorded for each agent, it tells a pid that
 * is still that agent from a pid the system has since given to another process.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * True when a process with this pid exists and has not exited (a zombie nobody reaped — an
 * agent whose orchestrator died — is not alive).
 */
export function processAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return false;
  }
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc: the signal probe is all there is
  }
}
