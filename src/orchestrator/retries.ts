/**
 * Failure and retry: a failed task is recorded and, while its retry budget and the run allow,
 * put back to `open` with the failure as context for the next prompt and a backoff before the
 * next spawn (at least the rate-limit cooldown after a rate limit). A spawn that could not
 * start backs off on its own count and turns into an infrastructure failure after three tries.
 * A task whose dependency can never finish fails at once.
 */
import type { Config } from "../config/mod.ts";
import type { EscalationDecision } from "../providers/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { Clock } from "../io/mod.ts";
import { CLAIMED_STATUSES, type Task, type TaskStore } from "../tasks/mod.ts";
import type { Recorder } from "./recorder.ts";
import { retryDelayMs, spawnBackoffMs } from "./scheduler.ts";

const CLAIMED: ReadonlySet<string> = new Set(CLAIMED_STATUSES);

/** Consecutive spawn failures after which a task fails as an infrastructure error. */
const MAX_SPAWN_FAILURES = 3;

/** What the retry policy works with. */
export interface RetryDeps {
  /** Task store. */
  store: TaskStore;
  /** Clock (backoff deadlines). */
  clock: Clock;
  /** `tuning.spawn` (backoff, rate-limit cooldown). */
  config: Pick<Config, "tuning">;
  /** Where facts go. */
  recorder: Recorder;
  /** True once the operator asked the run to stop (no more retries). */
  isStopping: () => boolean;
  /**
   * The ladder rung of a failed task's retry (undefined: its role has no ladder). Only
   * evidence moves it up; see src/providers `nextRung`.
   */
  escalation?: (task: Task, code: string, reason: string) => EscalationDecision | undefined;
}

/** First line of a reason, at most 500 characters (ledger detail, terminal reason). */
export function shortReason(reason: string): string {
  return reason.split("\n")[0].slice(0, 500);
}

/** Failure bookkeeping of one run: backoff deadlines, failure context, spawn failures. */
export class Retries {
  readonly #deps: RetryDeps;
  readonly #notBefore = new Map<string, number>();
  readonly #failureContext = new Map<string, string>();
  readonly #spawnFailures = new Map<string, number>();
  /** Failed tasks this run decided will not be retried (their dependents may fail). */
  readonly #final = new Set<string>();
  /** Tasks whose outcome is being decided (an agent exit or a failure being recorded). */
  readonly #settling = new Map<string, number>();
  #settledAtStart = false;

  constructor(deps: RetryDeps) {
    this.#deps = deps;
  }

  /**
   * Failed tasks whose retry is not decided yet: their agent reported the failure and the
   * orchestrator has not reaped it. A failure that predates this orchestrator (a resumed run)
   * is settled: nothing is left to decide it.
   */
  failurePending(tasks: readonly Task[]): string[] {
    const failed = tasks.filter((t) => t.status === "failed");
    if (!this.#settledAtStart) {
      for (const t of failed) this.#final.add(t.id);
      this.#settledAtStart = true;
    }
    if (this.#deps.isStopping()) return [];
    return failed.filter((t) =>
      this.#settling.has(t.id) || (!this.#final.has(t.id) && t.retry_count < t.max_retries)
    ).map((t) => t.id);
  }

  /**
   * Runs `fn` while the task's outcome is being decided: a failure of the task counts as
   * pending meanwhile (see {@linkcode failurePending}), so nothing routes on it or fails its
   * dependents before the failure is recorded and its retry decided.
   */
  async settling<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    this.#settling.set(taskId, (this.#settling.get(taskId) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.#settling.get(taskId) ?? 1) - 1;
      if (n === 0) this.#settling.delete(taskId);
      else this.#settling.set(taskId, n);
    }
  }

  /** Task id → earliest spawn time (ms), a copy for the scheduler. */
  notBefore(): Map<string, number> {
    return new Map(this.#notBefore);
  }

  /** What the next prompt of a task says about its previous failure. */
  failureContext(taskId: string): string | undefined {
    return this.#failureContext.get(taskId);
  }

  /** A spawn of the task started: its spawn-failure count starts over. */
  spawned(taskId: string): void {
    this.#spawnFailures.delete(taskId);
  }

  /** An open task whose dependency can never finish: failed, no retry. */
  async failDependent(taskId: string, reason: string): Promise<void> {
    this.#final.add(taskId);
    await this.#deps.store.transition(taskId, "failed", {
      actor: "orchestrator",
      reason,
      terminal_reason: reason,
    });
    await this.#deps.recorder.record({
      kind: "task.failed",
      taskId,
      code: "dependency-failed",
      detail: reason,
      message: reason,
      final: true,
    });
  }

  /**
   * Fails a task (from any active or done state; a failed one stays failed), keeps its branch
   * when given, and retries it when its budget allows.
   */
  failTask(
    task: Task,
    reason: string,
    code: string,
    costUsd: number | null = null,
    branch?: string,
  ): Promise<void> {
    return this.settling(task.id, () => this.#failTask(task, reason, code, costUsd, branch));
  }

  async #failTask(
    task: Task,
    reason: string,
    code: string,
    costUsd: number | null,
    branch: string | undefined,
  ): Promise<void> {
    const short = shortReason(reason);
    let failed = task;
    if (task.status !== "failed") {
      failed = await this.#deps.store.transition(task.id, "failed", {
        actor: "orchestrator",
        reason: short,
        terminal_reason: short,
      });
    }
    if (branch) {
      await this.#deps.recorder.record({
        kind: "branch.kept",
        taskId: task.id,
        branch,
        reason: short,
      });
    }
    await this.afterFailure(failed, reason, code, costUsd);
  }

  /** Records a task already `failed` and puts it back to `open` when it may retry. */
  async afterFailure(
    task: Task,
    reason: string,
    code: string,
    costUsd: number | null,
  ): Promise<void> {
    const short = shortReason(reason);
    const retry = task.retry_count < task.max_retries && !this.#deps.isStopping();
    await this.#deps.recorder.record({
      kind: "task.failed",
      taskId: task.id,
      code,
      detail: short,
      message: short,
      cost: { usd: costUsd },
      final: !retry,
    });
    if (retry) {
      await this.#retry(task, reason, code);
    } else {
      this.#final.add(task.id);
    }
  }

  async #retry(task: Task, reason: string, code: string): Promise<void> {
    const { store, clock, config, recorder } = this.#deps;
    const rateLimited = code === "rate-limited";
    const rung = this.#deps.escalation?.(task, code, reason);
    this.#failureContext.set(task.id, `The previous attempt failed: ${reason.slice(0, 4000)}`);
    // A rate-limited attempt waits at least the cooldown: the normal backoff would hit it again.
    const delay = retryDelayMs(task.retry_count + 1, config.tuning.spawn, rateLimited);
    this.#notBefore.set(task.id, clock.nowMs() + delay);
    await store.transition(task.id, "open", {
      actor: "orchestrator",
      reason: `retry ${task.retry_count + 1} of ${task.max_retries}: ${shortReason(reason)}`,
      ...(rung?.escalated ? { metadata: { ladder_step: rung.step } } : {}),
    });
    if (rung?.escalated) {
      await recorder.record({
        kind: "model.escalated",
        taskId: task.id,
        fromStep: rung.step - 1,
        toStep: rung.step,
        evidence: code,
        detail: shortReason(reason),
      });
    }
    await recorder.record({
      kind: "task.retry",
      taskId: task.id,
      attempt: task.retry_count + 2,
      delayS: delay / 1000,
      rateLimited,
    });
  }

  /**
   * A claimed task whose agent could not start: back to `open` after a backoff, or failed when
   * the cause will not change (an attachment refusal) or it kept failing.
   */
  async spawnFailed(task: Task, session: string, error: Error): Promise<void> {
    const { store, recorder } = this.#deps;
    const failures = (this.#spawnFailures.get(task.id) ?? 0) + 1;
    this.#spawnFailures.set(task.id, failures);
    const reason = `spawn failed: ${error.message}`;
    await recorder.record({
      kind: "agent.spawn_failed",
      taskId: task.id,
      session,
      reason,
      failures,
    });
    // The claim is gone already (released while the spawn went on): nothing of it to undo.
    const current = await store.get(task.id);
    if (current?.assigned_agent !== session || !CLAIMED.has(current.status)) return;
    // An attachment refusal or an unresolvable `${var:NAME}` will not change on retry; a
    // spawn that keeps failing is infra.
    const attachment = error instanceof BernsteinError && error.code.startsWith("attach.");
    const fleet = error instanceof BernsteinError && error.code.startsWith("fleet.");
    if (attachment || fleet || failures >= MAX_SPAWN_FAILURES) {
      await store.transition(task.id, "failed", {
        actor: "orchestrator",
        reason,
        terminal_reason: reason,
      });
      await recorder.record({
        kind: "task.failed",
        taskId: task.id,
        code: attachment ? "attachment-refused" : "infra-error",
        detail: attachment ? error.message : reason,
        message: reason,
        final: true,
      });
      return;
    }
    await this.#backOffSpawn(task, reason, failures);
  }

  async #backOffSpawn(task: Task, reason: string, failures: number): Promise<void> {
    const { store, clock, config, recorder } = this.#deps;
    const tuning = config.tuning.spawn;
    const delay = spawnBackoffMs(failures, tuning.spawn_backoff_base_s, tuning.spawn_backoff_max_s);
    this.#notBefore.set(task.id, clock.nowMs() + delay);
    await store.transition(task.id, "open", {
      actor: "orchestrator",
      reason: `${reason}; retrying in ${delay / 1000}s`,
    });
    await recorder.warn(`${task.id}: ${reason}; retrying in ${delay / 1000}s`);
  }
}
