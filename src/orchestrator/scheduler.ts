/**
 * The scheduling decision of one tick, as a pure function of a snapshot: which open tasks to
 * spawn, which to fail because a dependency can never finish, and which to hold back (spawn
 * backoff, capacity, owned-file overlap). Also the retry delays. Status sets and claim order
 * come from the task store's rules (src/tasks), so the scheduler and `claimNext` agree.
 */
import {
  compareClaimOrder,
  DEAD_END_STATUSES,
  DEPENDENCY_SATISFIED,
  type Task,
} from "../tasks/mod.ts";
import { ownedFilesOverlap } from "./owned_files.ts";

/** The task fields scheduling decisions read (the store's `Task` satisfies it). */
export interface SchedulableTask {
  /** Task id. */
  id: string;
  /** Status in the task state machine. */
  status: string;
  /** 1 is the highest priority. */
  priority: number;
  /** ISO-8601 creation time (age order). */
  created_at: string;
  /** Tasks that must finish first. */
  depends_on: readonly string[];
  /** Paths or globs the task expects to change. */
  owned_files: readonly string[];
  /** Role (manager tasks are not blocked by owned files). */
  role: string;
  /** A `planned` recovery step: the upstream tasks its condition waits for. */
  condition_on?: readonly string[];
  /** A task skipped because a condition did not hold (or a dependency was skipped). */
  skipped?: boolean;
}

/** The upstream ids of a planned task's condition (`metadata.condition.on`), if any. */
export function conditionUpstream(t: Pick<Task, "status" | "metadata">): string[] | undefined {
  if (t.status !== "planned") return undefined;
  const c = t.metadata.condition;
  if (c === null || typeof c !== "object" || Array.isArray(c)) return undefined;
  const on = c.on;
  return Array.isArray(on) && on.every((x) => typeof x === "string") ? on as string[] : undefined;
}

/** True for a task cancelled as skipped (`metadata.skipped`). */
export function isSkipped(t: Pick<Task, "status" | "metadata">): boolean {
  return t.status === "cancelled" && t.metadata.skipped === true;
}

/** The scheduler's view of a task. */
export function schedulable(t: Task): SchedulableTask {
  const on = conditionUpstream(t);
  return {
    id: t.id,
    status: t.status,
    priority: t.priority,
    created_at: t.created_at,
    depends_on: t.depends_on,
    owned_files: t.owned_files,
    role: t.role,
    ...(on === undefined ? {} : { condition_on: on }),
    ...(isSkipped(t) ? { skipped: true } : {}),
  };
}

const DEAD_END: ReadonlySet<string> = new Set(DEAD_END_STATUSES);

/** Everything one scheduling tick decides from. */
export interface TickInput {
  /** A snapshot of every task of the run, in creation order (as `TaskStore.list` returns). */
  tasks: readonly SchedulableTask[];
  /** Ids of tasks with a live agent or a spawn under way (spawned and not yet reaped). */
  running: readonly string[];
  /** Agents allowed at once. */
  maxAgents: number;
  /** Task id → earliest time (ms) a respawn may happen (spawn backoff). */
  notBefore: ReadonlyMap<string, number>;
  /** Now (ms), from the injected clock. */
  nowMs: number;
  /**
   * Ids of `failed` tasks whose failure the orchestrator has not settled yet (the agent
   * reported it; the retry decision comes when the agent is reaped). Their dependents wait:
   * a dependent fails only when its dependency is finally failed.
   */
  failurePending?: readonly string[];
  /**
   * `cells:` in its list form: a task whose role a cell lists counts against that cell's
   * `max_agents` (the first cell listing the role); other tasks only against `maxAgents`.
   */
  cells?: readonly CellCap[];
}

/** One named cell of the list form of `cells:`. */
export interface CellCap {
  /** Cell name. */
  name: string;
  /** Roles whose tasks belong to it. */
  roles?: readonly string[];
  /** Agents of this cell at once (unset: only the run's cap). */
  max_agents?: number;
}

/** The cell a role belongs to: the first cell that lists it. */
export function cellOfRole(
  cells: readonly CellCap[] | undefined,
  role: string,
): CellCap | undefined {
  return cells?.find((c) => c.roles?.includes(role) === true);
}

/** One decision of a tick, in the order it is to be carried out. */
export type TickDecision =
  | { kind: "route"; taskId: string }
  | { kind: "spawn"; taskId: string }
  | { kind: "fail_dependent"; taskId: string; reason: string }
  | { kind: "skip_dependent"; taskId: string; reason: string }
  | {
    kind: "defer";
    taskId: string;
    reason: "backoff" | "owned_files" | "capacity" | "cell_capacity";
  };

/**
 * One scheduler tick, as a pure function: a planned recovery step whose condition's upstream
 * has ended (closed, or a dead end whose retry is decided) is routed (the run loop evaluates the
 * condition: open, or skipped). Open tasks whose dependencies finished are ordered by priority
 * then age and spawned up to `maxAgents`, skipping those in spawn backoff or whose owned files
 * overlap a running (or just chosen) task. Open tasks with a dead-end dependency are failed (a
 * failed dependency whose retry is still being decided is not dead yet); those whose dependency
 * was skipped are skipped. Order is the store's claim order (priority, age, creation order: the
 * input's order). Same input → same decisions, in the same order.
 */
export function scheduleTick(input: TickInput): TickDecision[] {
  const byId = new Map(input.tasks.map((t) => [t.id, t]));
  const pending = new Set(input.failurePending ?? []);
  const deadEnd = (t: SchedulableTask | undefined) =>
    t === undefined || (DEAD_END.has(t.status) && !(t.status === "failed" && pending.has(t.id)));
  const ended = (t: SchedulableTask | undefined) =>
    t === undefined || t.status === DEPENDENCY_SATISFIED || deadEnd(t);
  const decisions: TickDecision[] = [];
  for (const task of input.tasks) {
    if (task.status !== "planned" || task.condition_on === undefined) continue;
    if (task.condition_on.every((id) => ended(byId.get(id)))) {
      decisions.push({ kind: "route", taskId: task.id });
    }
  }
  // A task whose spawn is still under way looks open to the snapshot: never spawn it twice.
  const busy = new Set(input.running);
  const open = input.tasks.filter((t) => t.status === "open" && !busy.has(t.id))
    .sort(compareClaimOrder);
  const budget = new SpawnBudget(input, byId);
  for (const task of open) {
    const verdict = dependencyVerdict(task, byId, deadEnd);
    if (verdict === "waiting") continue;
    if (verdict !== "ready") {
      decisions.push(verdict);
      continue;
    }
    const reason = (input.notBefore.get(task.id) ?? 0) > input.nowMs
      ? "backoff"
      : budget.refusal(task);
    if (reason !== undefined) decisions.push({ kind: "defer", taskId: task.id, reason });
    else {
      decisions.push({ kind: "spawn", taskId: task.id });
      budget.take(task);
    }
  }
  return decisions;
}

/**
 * Whether an open task's dependencies let it run: `ready` (all merged), `waiting` (some still
 * running), or the decision to skip it (a dependency was skipped) or fail it (one dead-ended).
 */
function dependencyVerdict(
  task: SchedulableTask,
  byId: ReadonlyMap<string, SchedulableTask>,
  deadEnd: (t: SchedulableTask | undefined) => boolean,
): TickDecision | "ready" | "waiting" {
  const deps = task.depends_on.map((id) => ({ id, task: byId.get(id) }));
  const dead = deps.find((d) => deadEnd(d.task) && !d.task?.skipped);
  const skipped = deps.find((d) => d.task?.skipped);
  if (!dead && skipped) {
    return {
      kind: "skip_dependent",
      taskId: task.id,
      reason: `dependency ${skipped.id} was skipped`,
    };
  }
  if (dead) {
    return {
      kind: "fail_dependent",
      taskId: task.id,
      reason: dead.task === undefined
        ? `dependency ${dead.id} does not exist`
        : `dependency ${dead.id} ended ${dead.task.status}`,
    };
  }
  const merged = deps.every((d) => d.task !== undefined && d.task.status === DEPENDENCY_SATISFIED);
  return merged ? "ready" : "waiting";
}

/**
 * What a tick may still spawn: free agent slots, agents per capped cell, and the owned files
 * of running tasks and of those chosen this tick.
 */
class SpawnBudget {
  readonly #cells: readonly CellCap[] | undefined;
  readonly #busyFiles: (readonly string[])[];
  readonly #inCell = new Map<string, number>();
  #capacity: number;

  constructor(input: TickInput, byId: ReadonlyMap<string, SchedulableTask>) {
    this.#cells = input.cells;
    this.#capacity = input.maxAgents - input.running.length;
    this.#busyFiles = input.running.map((id) => byId.get(id)?.owned_files ?? []);
    for (const id of input.running) this.#count(byId.get(id)?.role ?? "");
  }

  /** Why `task` cannot start now (no slot, its cell is full, its files are busy), if it cannot. */
  refusal(task: SchedulableTask): "capacity" | "cell_capacity" | "owned_files" | undefined {
    if (this.#capacity <= 0) return "capacity";
    const cell = cellOfRole(this.#cells, task.role);
    if (cell?.max_agents !== undefined && (this.#inCell.get(cell.name) ?? 0) >= cell.max_agents) {
      return "cell_capacity";
    }
    if (
      task.owned_files.length > 0 &&
      this.#busyFiles.some((files) => ownedFilesOverlap(task.owned_files, files))
    ) {
      return "owned_files";
    }
    return undefined;
  }

  /** Counts `task` as started: a slot, its cell, its files. */
  take(task: SchedulableTask): void {
    this.#busyFiles.push(task.owned_files);
    this.#capacity--;
    this.#count(task.role);
  }

  #count(role: string): void {
    const cell = cellOfRole(this.#cells, role);
    if (cell !== undefined) this.#inCell.set(cell.name, (this.#inCell.get(cell.name) ?? 0) + 1);
  }
}

/** Spawn backoff after `failures` consecutive failures: base · 2^(failures-1), capped. */
export function spawnBackoffMs(failures: number, baseS: number, maxS: number): number {
  if (failures <= 0) return 0;
  return Math.min(maxS, baseS * 2 ** (failures - 1)) * 1000;
}

// Rate-limit wording of the APIs and CLIs: HTTP 429, Anthropic `rate_limit_error`, OpenAI
// "Rate limit reached" / `rate_limit_exceeded`, Gemini `RESOURCE_EXHAUSTED` / "Resource has been
// exhausted", and the status lines the CLIs print ("429 Too Many Requests").
const RATE_LIMIT = /\b429\b|rate[ _-]?limit|too many requests|resource[ _]?(has been )?exhausted/i;

/** True when an agent's failure reason says it hit a rate limit. */
export function isRateLimitReason(reason: string): boolean {
  return RATE_LIMIT.test(reason);
}

/**
 * Delay before retry number `retry` of a failed task: the spawn backoff, and at least
 * `cooldownS` when the failure was a rate limit.
 */
export function retryDelayMs(
  retry: number,
  tuning: {
    spawn_backoff_base_s: number;
    spawn_backoff_max_s: number;
    rate_limit_cooldown_s: number;
  },
  rateLimited: boolean,
): number {
  const backoff = spawnBackoffMs(retry, tuning.spawn_backoff_base_s, tuning.spawn_backoff_max_s);
  return rateLimited ? Math.max(backoff, tuning.rate_limit_cooldown_s * 1000) : backoff;
}
