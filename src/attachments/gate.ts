// The up-front check of a run's attachments, before any worktree or process exists: every
// planned task's attachments are located, read, screened and checked against the limits and
// its adapter's capabilities exactly as its spawn will check them, and every problem is listed
// at once (exit 2) instead of the first one, or none until a task fails hours later. A step
// file that does not exist yet but that a step it depends on owns (`files:`) is left to the
// spawn, with a warning.
import { relative, resolve, sep } from "node:path";
import { BernsteinError, type Warning } from "../errors/mod.ts";
import type { TaskDraft } from "../tasks/mod.ts";
import {
  type Declared,
  hostItem,
  runWideFor,
  type RunWideItem,
  screenDeclared,
  taskDeclarations,
  taskField,
  type TaskItems,
} from "./_declared.ts";
import { AttachmentError } from "./errors.ts";
import { checkAdapterTakesMedia, checkAttachmentCount } from "./limits.ts";
import type { AttachmentRow } from "./record.ts";
import { refuseNonDirectSpawn } from "./spawn_path.ts";
import { parseAttachmentSpec } from "./spec.ts";

/** What the gate checks the planned tasks with. */
export interface GateContext {
  /** Project root (plan paths are relative to it). */
  root: string;
  /** `attachments.deny`. */
  deny: readonly string[];
  /** The run-wide items, frozen already. */
  runWide: readonly RunWideItem[];
  /** Adapter name per task (id, or title without one). */
  adapters: Readonly<Record<string, string>>;
  /** How agents start. */
  spawnPath: string;
  /** Warnings for the operator (withheld files, files left to the spawn). */
  warn: (warning: Warning) => void;
}

/** What the gate found: the report rows, and the problems that refuse the run. */
export interface GateOutcome {
  /** One row per task and declaration. */
  rows: AttachmentRow[];
  /** Every refusal, in plan order. */
  problems: BernsteinError[];
}

/** Runs `fn`, collecting a bernstein error instead of throwing it. */
async function collecting<T>(
  problems: BernsteinError[],
  fn: () => T | Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof BernsteinError) {
      problems.push(error);
      return undefined;
    }
    throw error;
  }
}

/** Ids of the drafts `id` depends on, directly or not. */
function dependenciesOf(id: string, drafts: readonly TaskDraft[]): Set<string> {
  const byId = new Map(drafts.map((d) => [d.id ?? d.title, d]));
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.depends_on ?? [])];
  while (stack.length > 0) {
    const next = stack.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(byId.get(next)?.depends_on ?? []));
  }
  return seen;
}

/** The step a missing file will come from: one the task depends on that owns the path. */
function producerOf(
  path: string,
  taskId: string,
  drafts: readonly TaskDraft[],
  root: string,
): string | undefined {
  const rel = relative(root, resolve(root, path)).split(sep).join("/");
  const deps = dependenciesOf(taskId, drafts);
  return drafts.find((d) => deps.has(d.id ?? d.title) && (d.owned_files ?? []).includes(rel))
    ?.id;
}

/** Checks one task's own declarations, adding its items and rows. */
async function checkOwn(
  draft: TaskDraft,
  task: TaskItems,
  ctx: GateContext & { drafts: readonly TaskDraft[]; problems: BernsteinError[] },
): Promise<void> {
  const taskId = draft.id ?? draft.title;
  const field = taskField(draft);
  const { declarations, problems } = taskDeclarations(field, draft.attachments ?? []);
  ctx.problems.push(...problems);
  for (const [i, declared] of declarations.entries()) {
    const f = `${field}[${i}]`;
    if (typeof declared !== "string") {
      const item = await collecting(ctx.problems, () => hostItem(f, declared));
      if (item !== undefined) task.add(item);
      continue;
    }
    const spec = await collecting(ctx.problems, () => parseAttachmentSpec(declared, f));
    if (spec === undefined) continue;
    const d: Declared = { field: f, path: spec.path, spec };
    const got = await collecting(
      ctx.problems,
      () => screenDeclared(d, { root: ctx.root, base: ctx.root, deny: ctx.deny }),
    );
    if (got === undefined) continue;
    if (got.status === "unreadable") {
      const producer = producerOf(spec.path, taskId, ctx.drafts, ctx.root);
      if (producer !== undefined && got.reason === "no such file") {
        ctx.warn({
          code: "attach.pending",
          message: `${spec.path} does not exist yet; step ${producer} (which task ${taskId} ` +
            "waits for) owns it, so it is read when the agent spawns",
          location: f,
        });
        continue;
      }
      ctx.problems.push(new AttachmentError(`${spec.path}: ${got.reason}`, { location: f }));
      continue;
    }
    if (got.status === "denied") {
      ctx.warn({
        code: "attach.not_attached",
        message: `${spec.path} is not attached to task ${taskId}: ${got.reason}`,
        location: f,
      });
      task.withhold(d, got.reason);
      continue;
    }
    task.add(got.item);
  }
}

/**
 * Checks the attachments of every planned task as its spawn will: the run-wide ones and the
 * task's own, read and screened, at most 20, each image against the task's adapter. A spawn
 * path that cannot carry attachments throws at once; everything else is collected.
 */
export async function gateDrafts(
  drafts: readonly TaskDraft[],
  ctx: GateContext,
): Promise<GateOutcome> {
  const rows: AttachmentRow[] = [];
  const problems: BernsteinError[] = [];
  for (const draft of drafts) {
    const taskId = draft.id ?? draft.title;
    const adapter = ctx.adapters[taskId] ?? "generic";
    const task = runWideFor(taskId, ctx.runWide);
    refuseNonDirectSpawn(ctx.spawnPath, task.items.length + (draft.attachments ?? []).length);
    await checkOwn(draft, task, { ...ctx, drafts, problems });
    const field = taskField(draft);
    await collecting(problems, () => checkAttachmentCount(task.items.length, field, taskId));
    for (const item of task.items) {
      if (item.kind === "text") continue;
      await collecting(
        problems,
        () =>
          checkAdapterTakesMedia({ mime: item.wire.mime, size: item.wire.bytes.length }, {
            field: item.field,
            path: item.path,
            taskId,
            adapter,
          }),
      );
    }
    rows.push(...task.rows);
  }
  return { rows, problems };
}
