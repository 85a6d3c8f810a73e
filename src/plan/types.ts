// The plan's vocabulary: scopes, complexities, priorities and efforts, and the types of a loaded
// plan graph.

import type { AttachmentDeclaration } from "./host_attachment.ts";
import type { EFFORTS, Scope } from "../config/mod.ts";
import type { ConnectionRequest } from "./connections.ts";

/** Task scopes, smallest first (they pick the agent's wall-clock deadline bucket). */
export const SCOPES = ["small", "medium", "large", "xl"] as const satisfies readonly Scope[];

/** Complexity hints, lowest first (used by model policies). */
export const COMPLEXITIES = ["low", "medium", "high"] as const;

/** Priorities: 1 runs first. */
export const PRIORITIES = [1, 2, 3] as const;

/** What each priority means, for messages and help. */
export const PRIORITY_NAMES: Readonly<Record<Priority, string>> = {
  1: "critical",
  2: "normal",
  3: "low",
};

/** A task scope. */
export type StepScope = typeof SCOPES[number];
/** A complexity hint. */
export type Complexity = typeof COMPLEXITIES[number];
/** A priority (1 = critical, 2 = normal, 3 = low). */
export type Priority = typeof PRIORITIES[number];
/** A reasoning effort (the names of `role_model_policy.*.effort`). */
export type Effort = typeof EFFORTS[number];

/** The kinds of completion signal, in documentation order. */
export const SIGNAL_KINDS = ["path_exists", "glob_exists", "file_contains", "test_passes"] as const;

/** One kind of completion signal. */
export type SignalKind = typeof SIGNAL_KINDS[number];

/**
 * A check that a step's work is present in its worktree. Paths and globs are relative to the
 * worktree root; `test_passes` is an argv list (never a shell string).
 */
export type CompletionSignal =
  | { kind: "path_exists"; path: string }
  | { kind: "glob_exists"; glob: string }
  | { kind: "file_contains"; path: string; contains: string }
  | { kind: "file_contains"; path: string; regex: string }
  | { kind: "test_passes"; command: string[]; timeout_s?: number };

/** The fields a plan step and a backlog item share. */
export interface StepFields {
  /** One line saying what to do. */
  title: string;
  /** The task text given to the agent ("" when absent). */
  description: string;
  /** Role template to use (default `backend`). */
  role: string;
  /** 1 critical, 2 normal (default), 3 low. */
  priority: Priority;
  /** Size bucket (default `medium`). */
  scope: StepScope;
  /** Complexity hint (default `medium`). */
  complexity: Complexity;
  /** Adapter for this step; absent means the plan's or the run's. */
  cli?: string;
  /** Model for this step. */
  model?: string;
  /** Reasoning effort for this step. */
  effort?: Effort;
  /** Files the step owns (relative paths or globs); two running steps never share one. */
  files: string[];
  /** Checks that the work is present, evaluated in the step's worktree. */
  completion_signals: CompletionSignal[];
  /**
   * What is handed to this step's agents: relative paths (checked again at spawn) and
   * attachments held by value (`{name, text}`, `{name, image: {mime, base64}}`).
   */
  attachments: AttachmentDeclaration[];
  /**
   * Connections whose secrets its agents get, each in a variable (docs/FLEET.md); absent when
   * the step names none.
   */
  connections?: ConnectionRequest[];
}

/**
 * The keys of {@linkcode StepFields}, in the order plans write them: the one list the plan and
 * backlog readers accept, `plan --json` prints and the run copies into tasks.
 */
export const STEP_FIELDS = [
  "title",
  "description",
  "role",
  "priority",
  "scope",
  "complexity",
  "cli",
  "model",
  "effort",
  "files",
  "completion_signals",
  "attachments",
  "connections",
] as const satisfies readonly (keyof StepFields)[];
// A field added to StepFields but not to STEP_FIELDS is a type error here.
const _everyStepFieldListed: Record<
  Exclude<keyof StepFields, (typeof STEP_FIELDS)[number]>,
  never
> = {};

/**
 * Exactly the {@linkcode StepFields} of a step (a `PlanStep` has more: id, stage, location …),
 * an absent optional field left out.
 *
 * @example
 * ```ts
 * import { deepEqual } from "node:assert/strict";
 * const step = {
 *   title: "t", description: "", role: "backend", priority: 2, scope: "small", complexity: "low",
 *   files: [], completion_signals: [], attachments: [], id: "1.1-t", stage: "s",
 * } as const;
 * deepEqual(Object.keys(stepFieldsOf(step as never)), [
 *   "title", "description", "role", "priority", "scope", "complexity", "files",
 *   "completion_signals", "attachments",
 * ]);
 * ```
 */
export function stepFieldsOf(step: StepFields): StepFields {
  const out: Partial<Record<keyof StepFields, unknown>> = {};
  for (const key of STEP_FIELDS) if (step[key] !== undefined) out[key] = step[key];
  // Every required key was copied from a StepFields (the list is exhaustive, checked above).
  return out as StepFields;
}

/**
 * A conditional dependency: the step waits until its upstream (one step, or every step of a
 * stage) has ended, then runs only when the condition holds (src/plan/condition.ts) and is
 * skipped otherwise. The upstream is not in `depends_on`: a plain dependency must succeed.
 */
export interface StepCondition {
  /** Ids of the upstream steps, in plan order. */
  on: string[];
  /** The upstream stage's name for a stage-level dependency, null for a step. */
  stage: string | null;
  /** The condition text, checked when the plan loaded (`status == 'failed'`). */
  condition: string;
}

/** One step of the graph: a task-to-be, with stable id and resolved dependencies. */
export interface PlanStep extends StepFields {
  /** Stable id: `<stage#>.<step#>-<title slug>` for plans, the file stem for backlog items. */
  id: string;
  /** Stage name (`backlog` for backlog items). */
  stage: string;
  /** Ids of the steps that must finish first, in plan order. */
  depends_on: string[];
  /** Its conditional dependency (a recovery step), if any. */
  condition?: StepCondition;
  /** Field path of the step in its source (`stages[0].steps[1]`, or the backlog file). */
  field: string;
  /** `file:line:col` of the step, for errors raised later (e.g. an unreadable attachment). */
  location: string;
}

/** One stage of a plan. */
export interface PlanStage {
  /** Stage name, unique in the plan. */
  name: string;
  /** Stage names this stage waits for. */
  depends_on: string[];
  /** Its conditional dependency on another stage (every step recovers from it), if any. */
  condition?: { stage: string; condition: string };
  /** Ids of its steps, in file order. */
  step_ids: string[];
}

/** A loaded plan: pure data, the same for the same input bytes. */
export interface PlanGraph {
  /** Plan name. */
  name: string;
  /** Plan description ("" when absent). */
  description: string;
  /** Where it came from (file as shown to the user, or `backlog`). */
  source: string;
  /** Default adapter for steps without one. */
  cli?: string;
  /** Most agents at once, when the plan sets it. */
  max_agents?: number;
  /** Stages in file order. */
  stages: PlanStage[];
  /** Every step, in file order (stage by stage). */
  steps: PlanStep[];
}
