// Fixtures shared by the attachment gate tests: a project folder with an audit directory and an
// install id, a claimed task carrying attachment declarations, and the spawn it is attached to.
import { join } from "node:path";
import type { SpawnInfo } from "../../src/attachments/mod.ts";
import type { AttachmentDeclaration } from "../../src/plan/mod.ts";
import type { Task } from "../../src/tasks/mod.ts";

/** A repository folder under `dir` with `.sdd/audit/` and an install id; returns its paths. */
export async function attachmentProject(dir: string): Promise<{ root: string; sdd: string }> {
  const root = join(dir, "repo");
  const sdd = join(root, ".sdd");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  await Deno.writeTextFile(join(sdd, "install_id"), "0123456789abcdef");
  return { root, sdd };
}

/** A task claimed by session `s`, declared at `stages[0].steps[0]`, with `attachments`. */
export function claimedTask(
  id: string,
  attachments: AttachmentDeclaration[],
  maxRetries = 0,
): Task {
  return {
    id,
    title: id,
    description: "",
    role: "backend",
    priority: 2,
    scope: "small",
    complexity: "low",
    depends_on: [],
    parent_task_id: null,
    owned_files: [],
    completion_signals: [],
    cli: null,
    model: null,
    effort: null,
    attachments,
    max_retries: maxRetries,
    retry_count: 0,
    assigned_agent: "s",
    result_summary: null,
    terminal_reason: null,
    created_at: "2026-01-01T00:00:00.000Z",
    version: 2,
    metadata: { field: "stages[0].steps[0]" },
    status: "claimed",
    updated_at: "2026-01-01T00:00:00.000Z",
  };
}

/** The first turn of `session` on the direct spawn path, with `adapter`. */
export function firstSpawn(session: string, adapter = "scripted"): SpawnInfo {
  return {
    session,
    worktreeRelative: join(".sdd", "worktrees", session),
    turnSeq: 0,
    adapter,
    spawnPath: "direct-subprocess",
  };
}
