// Per-agent session files and refused merges under `.sdd/runtime/`: what `ps`, `logs` and a
// resumed run's merges read back.

import { join } from "node:path";
import { z } from "zod";
import { BernsteinError } from "../errors/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import { canonicalize, parseJson } from "../canonical/mod.ts";
import {
  appendDurable,
  readFileIfExists,
  runtimeDir,
  runtimePath,
  writeFileAtomic,
} from "../io/mod.ts";

/** What the run remembers about one agent session (for merge after resume, `ps`, `logs`). */
export interface SessionFile {
  /** Session id. */
  session: string;
  /** Task id. */
  task_id: string;
  /** Adapter name. */
  adapter: string;
  /** Model or tier, or null. */
  model: string | null;
  /** Who served it: `endpoint <name> (<base_url>)` or `<adapter> (its own provider)`. */
  provider?: string;
  /** Lineage identity of the agent. */
  agent_id: string;
  /** Worktree path. */
  worktree: string;
  /** Agent branch. */
  branch: string;
  /** Commit the worktree started from. */
  base_sha: string;
  /** Process id (process group) of the agent. */
  pid: number;
  /** Kernel start time of that process (`processStartTime`), null where unknown. */
  pid_start?: string | null;
  /** ISO start time. */
  started_at: string;
  /** running · exited · merged · failed · abandoned */
  state: string;
  /** Attachment digests the session's prompt carried. */
  attachment_digests: string[];
  /** How the agent was isolated (absent in session files written before isolation existed). */
  isolation?: JsonObject;
}

const SESSION_FILE_SCHEMA: z.ZodType<SessionFile> = z.object({
  session: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "not a session name"),
  task_id: z.string(),
  adapter: z.string(),
  model: z.string().nullable(),
  provider: z.string().optional(),
  agent_id: z.string(),
  worktree: z.string(),
  branch: z.string(),
  base_sha: z.string(),
  pid: z.number().int(),
  pid_start: z.string().nullable().optional(),
  started_at: z.string(),
  state: z.string(),
  attachment_digests: z.array(z.string()),
  isolation: z.custom<JsonObject>((v) => typeof v === "object" && v !== null && !Array.isArray(v))
    .optional(),
});

/**
 * A parsed session file checked field by field: one that parses but does not hold a session
 * (hand-edited, written by something else) is `run.session_corrupt` naming the file and field.
 */
function checkSessionFile(path: string, value: unknown): SessionFile {
  const parsed = SESSION_FILE_SCHEMA.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.join(".") || "(the whole file)";
  throw new BernsteinError("run.session_corrupt", `${path}: ${field}: ${issue.message}`, {
    location: `${path}:${field}`,
    hint: "remove the file to forget that session, or start a new run with --fresh",
  });
}

function sessionsDir(sdd: string): string {
  return runtimePath(sdd, "sessions");
}

/**
 * Whether the session's agent runs on a worker host (its isolation record says `remote`): its
 * pid is a pid of that host, never to be looked up or signalled here.
 */
export function isRemoteSession(file: Pick<SessionFile, "isolation">): boolean {
  return file.isolation?.isolation === "remote";
}

/** Writes (replaces) a session's file. */
export async function saveSessionFile(sdd: string, file: SessionFile): Promise<void> {
  await Deno.mkdir(sessionsDir(sdd), { recursive: true, mode: 0o700 });
  await writeFileAtomic(
    join(sessionsDir(sdd), `${file.session}.json`),
    canonicalize(file, "canon") + "\n",
  );
}

/** Every session file, oldest start first. */
export async function listSessionFiles(sdd: string): Promise<SessionFile[]> {
  const out: SessionFile[] = [];
  try {
    for await (const e of Deno.readDir(sessionsDir(sdd))) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const bytes = await readFileIfExists(join(sessionsDir(sdd), e.name));
      if (bytes === undefined) continue;
      let value: unknown;
      try {
        value = parseJson(new TextDecoder().decode(bytes));
      } catch {
        // A session file torn by a crash is skipped; its task is retried from the store.
        continue;
      }
      out.push(checkSessionFile(join(sessionsDir(sdd), e.name), value));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out.sort((
    a,
    b,
  ) => (a.started_at < b.started_at
    ? -1
    : a.started_at > b.started_at
    ? 1
    : a.session < b.session
    ? -1
    : 1)
  );
}

/** One refused merge (`.sdd/runtime/refused_merges.jsonl`). */
export interface RefusedMerge {
  /** Run id. */
  run_id: string;
  /** Task id. */
  task_id: string;
  /** Session. */
  session: string;
  /** Kept branch holding the work. */
  branch: string;
  /** `merge-conflict`, `gate-failed`, `lineage-refused`, … */
  reason: string;
  /** Details (files, gate output tail). */
  detail: string;
  /** ISO time. */
  at: string;
}

/** Appends a refused merge record. */
export async function recordRefusedMerge(sdd: string, refused: RefusedMerge): Promise<void> {
  await Deno.mkdir(runtimeDir(sdd), { recursive: true });
  await appendDurable(
    runtimePath(sdd, "refusedMerges"),
    new TextEncoder().encode(canonicalize(refused, "canon") + "\n"),
  );
}
