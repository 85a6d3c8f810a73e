/**
 * Which adapter and model run a task: the adapter by precedence (task, `--cli`, role policy,
 * plan, configuration), cached per run, and the model and effort of an attempt: the rung of
 * the role's ladder (or deprecated fallback model) the task has reached. A task moves up a
 * rung only on evidence that a bigger model would help (src/providers `nextRung`); the rung
 * lives in the task's `metadata.ladder_step`, so a resumed run keeps it.
 */
import {
  cliForRole,
  type PathLookup,
  resolveCli,
  type ResolvedCli,
  type ScriptedRuntime,
} from "../adapters/mod.ts";
import type { Config } from "../config/mod.ts";
import { type EscalationDecision, nextRung, type Rung } from "../providers/mod.ts";
import type { Task } from "../tasks/mod.ts";

/**
 * Where binaries are "found" when agents run on worker hosts only: every name resolves here as
 * itself; the worker resolves it for real and refuses the assignment when it cannot.
 */
export const WORKER_HOSTS_LOOKUP: PathLookup = { which: (binary) => Promise.resolve(binary) };

/** What adapter resolution reads. */
export interface CliChoiceContext {
  /** Effective configuration (`cli`, `role_model_policy`, `adapters`). */
  config: Config;
  /** Where binaries are found. */
  lookup: PathLookup;
  /** `--cli`. */
  cliOverride?: string;
  /** The plan's `cli`. */
  planCli?: string;
  /** Scripted agent locator. */
  scripted?: () => Promise<ScriptedRuntime>;
}

/**
 * The adapter of a task, in precedence order: the task's own `cli`, the role's
 * `role_model_policy.<role>.cli` (exclusive for that role, as designed), `--cli`, the plan's
 * `cli`, the configured `cli` (`auto` by default). A run folds `--cli` and the plan's `cli`
 * into the configured one as layers, so it passes neither here. Unknown or missing adapters
 * are refused with the list that would work.
 */
export async function resolveTaskCli(
  task: Pick<Task, "cli" | "role" | "id">,
  ctx: CliChoiceContext,
): Promise<ResolvedCli> {
  const { config } = ctx;
  let requested: string;
  let location: string;
  if (task.cli) {
    requested = task.cli;
    location = `task ${task.id}: cli`;
  } else if (config.role_model_policy?.[task.role]?.cli) {
    ({ cli: requested, location } = cliForRole(config, task.role));
  } else if (ctx.cliOverride) {
    requested = ctx.cliOverride;
    location = "--cli";
  } else if (ctx.planCli) {
    requested = ctx.planCli;
    location = "plan: cli";
  } else {
    ({ cli: requested, location } = cliForRole(config, task.role));
  }
  return await resolveCli(requested, {
    lookup: ctx.lookup,
    settings: config.adapters,
    scripted: ctx.scripted,
    location,
  });
}

/** Resolves adapters once per (task cli, role) for the whole run. */
export class AdapterResolver {
  readonly #ctx: CliChoiceContext;
  readonly #resolved = new Map<string, ResolvedCli>();

  constructor(ctx: CliChoiceContext) {
    this.#ctx = ctx;
  }

  /** Forgets every resolution (the role policy was reloaded). */
  clear(): void {
    this.#resolved.clear();
  }

  /** The adapter of a task; see {@linkcode resolveTaskCli}. */
  async resolve(task: Pick<Task, "cli" | "role" | "id">): Promise<ResolvedCli> {
    const key = `${task.cli ?? ""}\0${task.role}`;
    const cached = this.#resolved.get(key);
    if (cached) return cached;
    const resolved = await resolveTaskCli(task, this.#ctx);
    this.#resolved.set(key, resolved);
    return resolved;
  }
}

/** Model, effort and (on a ladder step) adapter of one attempt. */
export interface ModelChoice {
  /** Model or tier; undefined leaves the CLI's default. */
  model?: string;
  /** Reasoning effort. */
  effort?: "low" | "medium" | "high" | "max";
  /** The ladder step's adapter, replacing the task's. */
  cli?: string;
}

type RolePolicy = NonNullable<Config["role_model_policy"]>[string];

/** The rungs above a role's own model: its `ladder`, else `[fallback_model]`, else none. */
export function ladderOf(policy: RolePolicy | undefined): Rung[] {
  if (policy?.ladder && policy.ladder.length > 0) return policy.ladder;
  if (policy?.fallback_model) return [{ model: policy.fallback_model }];
  return [];
}

/** The ladder rung a task has reached (`metadata.ladder_step`; 0 = the role's own model). */
export function ladderStepOf(task: Pick<Task, "metadata">): number {
  const step = task.metadata?.ladder_step;
  return typeof step === "number" && Number.isInteger(step) && step > 0 ? step : 0;
}

/**
 * The rung of a failed task's next attempt, or undefined when its role has no ladder: one up
 * only on evidence (gate, signals, max turns, the agent's own failure).
 */
export function escalationFor(
  config: () => Pick<Config, "role_model_policy">,
): (task: Task, code: string, reason: string) => EscalationDecision | undefined {
  return (task, code, reason) => {
    const ladder = ladderOf(config().role_model_policy?.[task.role]);
    if (ladder.length === 0) return undefined;
    return nextRung(ladderStepOf(task), ladder.length, { code, reason });
  };
}

/** Model and effort for an attempt: the rung of the role's ladder the task has reached. */
export function modelForAttempt(
  task: Pick<Task, "role" | "model" | "effort" | "retry_count" | "metadata">,
  config: Pick<Config, "role_model_policy">,
  modelOverride: string | undefined,
): ModelChoice {
  const policy = config.role_model_policy?.[task.role];
  const base: ModelChoice = {
    model: task.model ?? modelOverride ?? policy?.model,
    effort: task.effort ?? policy?.effort,
    cli: undefined,
  };
  const ladder = ladderOf(policy);
  const step = ladderStepOf(task);
  if (step === 0 || ladder.length === 0) return base;
  const rung = ladder[Math.min(step, ladder.length) - 1];
  return { model: rung.model ?? base.model, effort: rung.effort ?? base.effort, cli: rung.cli };
}
