// Turns what the operator asked for (a plan file, a goal, a backlog) into the tasks of a fresh
// run, in an order the task store accepts; recovery steps start `planned` with their condition.

import { relative, resolve } from "node:path";
import { ADAPTER_NAMES } from "../adapters/mod.ts";
import { UsageError, type Warning } from "../errors/mod.ts";
import {
  type CompletionSignal,
  loadBacklog,
  loadPlanFile,
  type PlanGraph,
  type PlanStep,
  readBacklog,
  type StepFields,
  stepFieldsOf,
} from "../plan/mod.ts";
import type { TaskDraft } from "../tasks/mod.ts";
import type { PlanningSource } from "./current_run.ts";
import { MANAGER_SCOPE } from "../config/mod.ts";

/** What the operator asked `bernstein run` to do. */
export interface PlanningRequest {
  /** A plan file path, when given. */
  planPath?: string;
  /** A goal, when given (`-g`, else `goal:` of the configuration). */
  goal?: string;
  /** Adapter and model of the manager agent (`internal_llm_provider`, `internal_llm_model`). */
  manager?: { cli?: string; model?: string };
  /** `BERNSTEIN_TASK_FILTER`. */
  taskFilter?: string;
}

/** The work of a fresh run: where it came from and the tasks to create. */
export interface PlannedWork {
  /** Source of the tasks. */
  source: PlanningSource;
  /** The plan graph (plans and backlogs), absent for a goal. */
  graph?: PlanGraph;
  /** Task drafts in creation order. */
  drafts: TaskDraft[];
  /** Loud warnings (a goal skipped because the backlog has work, …). */
  warnings: Warning[];
}

/** The id of the manager task a goal creates. */
export const MANAGER_TASK_ID = "manager";

/** Text of a completion signal for the agent's prompt. */
export function describeSignal(signal: CompletionSignal): string {
  switch (signal.kind) {
    case "path_exists":
      return `${signal.path} exists`;
    case "glob_exists":
      return `a file matching ${signal.glob} exists`;
    case "file_contains":
      return "contains" in signal
        ? `${signal.path} contains ${JSON.stringify(signal.contains)}`
        : `${signal.path} matches /${signal.regex}/`;
    case "test_passes":
      return `\`${signal.command.join(" ")}\` exits 0`;
  }
}

/**
 * The steps in an order the task store accepts (each after the steps it depends on), plan
 * order otherwise: a dependency may name a later step or stage.
 */
function dependencyOrder(steps: readonly PlanStep[]): PlanStep[] {
  const placed = new Set<string>();
  const out: PlanStep[] = [];
  const pending = [...steps];
  while (pending.length > 0) {
    const i = pending.findIndex((s) => s.depends_on.every((d) => placed.has(d)));
    // The loader refuses cycles; should one slip through, the store names it.
    const [next] = pending.splice(i < 0 ? 0 : i, 1);
    placed.add(next.id);
    out.push(next);
  }
  return out;
}

/**
 * A step's fields as a task has them: the step's own (src/plan `StepFields`) passed on whole,
 * with `files` as `owned_files` and absent adapter, model and effort as `null`; its
 * `connections` go to the task's metadata (see {@linkcode draftsFromGraph}).
 */
function taskFieldsOfStep(step: StepFields) {
  const { files, cli, model, effort, connections: _, ...same } = stepFieldsOf(step);
  return {
    ...same,
    owned_files: files,
    cli: cli ?? null,
    model: model ?? null,
    effort: effort ?? null,
  };
}

/**
 * Tasks from a plan graph. A step with a conditional dependency (a recovery step) starts
 * `planned`, its condition in `metadata.condition`; the run routes it once its upstream ended.
 */
function draftsFromGraph(graph: PlanGraph, maxRetries?: number): TaskDraft[] {
  return dependencyOrder(graph.steps).map((step) => ({
    id: step.id,
    ...taskFieldsOfStep(step),
    depends_on: step.depends_on,
    ...(maxRetries === undefined ? {} : { max_retries: maxRetries }),
    metadata: {
      source: graph.source,
      stage: step.stage,
      field: step.field,
      // Granted by the plan's author; agents cannot add it (the task server refuses).
      ...(step.connections === undefined
        ? {}
        : { connections: step.connections.map((c) => ({ name: c.name, env: c.env })) }),
      ...(step.condition === undefined ? {} : {
        condition: {
          on: [...step.condition.on],
          stage: step.condition.stage,
          expr: step.condition.condition,
        },
      }),
    },
    ...(step.condition === undefined ? {} : { status: "planned" as const }),
  }));
}

/**
 * Chooses where a fresh run's work comes from, in order: a non-empty backlog, a plan file,
 * a goal (one manager task). A goal or plan skipped because the backlog has work is a loud
 * warning that says how to run it instead.
 */
export async function planWork(
  sdd: string,
  cwd: string,
  request: PlanningRequest,
): Promise<PlannedWork> {
  const warnings: Warning[] = [];
  const backlog = await readBacklog(sdd, { filter: request.taskFilter });
  const selected = backlog.items.filter((i) => i.selected);
  if (selected.length > 0) {
    const loaded = await loadBacklog(sdd, { filter: request.taskFilter });
    const skipped = request.goal !== undefined
      ? "the goal"
      : request.planPath !== undefined
      ? `the plan ${request.planPath}`
      : undefined;
    if (skipped !== undefined) {
      warnings.push({
        code: "run.goal_skipped",
        message:
          `!!! ${skipped} was SKIPPED: .sdd/backlog/open/ has ${selected.length} item(s), and the backlog comes first`,
        hint:
          "to run it instead, clear the backlog or select nothing from it with BERNSTEIN_TASK_FILTER=<pattern matching no item>",
      });
    }
    for (const p of loaded.problems) if (p.severity === "warning") warnings.push(p);
    return {
      source: { kind: "backlog", dir: ".sdd/backlog/open", filter: request.taskFilter },
      graph: loaded.graph,
      drafts: draftsFromGraph(loaded.graph),
      warnings,
    };
  }
  if (request.planPath !== undefined) {
    const path = resolve(cwd, request.planPath);
    const graph = await loadPlanFile(path, {
      shownAs: relative(cwd, path) || path,
      knownClis: ADAPTER_NAMES,
    });
    return { source: { kind: "plan", path }, graph, drafts: draftsFromGraph(graph), warnings };
  }
  if (request.goal !== undefined && request.goal.trim() !== "") {
    const goal = request.goal.trim();
    const title = `Plan the work for: ${goal.split("\n")[0].slice(0, 200)}`;
    return {
      source: { kind: "goal", goal },
      drafts: [{
        id: MANAGER_TASK_ID,
        title,
        description: goal,
        role: "manager",
        priority: 1,
        scope: MANAGER_SCOPE,
        max_retries: 0,
        cli: request.manager?.cli ?? null,
        model: request.manager?.model ?? null,
        metadata: { source: "goal" },
      }],
      warnings,
    };
  }
  throw new UsageError(
    "run.nothing_to_do",
    "nothing to run: give a plan file, --goal TEXT, or put items in .sdd/backlog/open/",
    {
      hint: 'bernstein run plan.yaml  |  bernstein -g "Add input validation"',
    },
  );
}
