/**
 * What an agent's exit means for its task. The exit is recorded (usage, cost, audit); a task
 * the agent left active becomes `done` when it exited cleanly, else fails with a reason the
 * ledger can name (`deadline`, `max-turns`, `rate-limited`, `agent-failed`); a task the agent
 * already reported failed or blocked is recorded as such. A `done` task goes on to completion.
 */
import type { AgentResult } from "../adapters/mod.ts";
import { agentDeadlineSeconds, type Config } from "../config/mod.ts";
import type { TokenRegistry } from "../server/mod.ts";
import { CLAIMED_STATUSES, type Task, type TaskStore } from "../tasks/mod.ts";
import type { Completion } from "./completion.ts";
import type { AgentExit } from "./executor.ts";
import type { Recorder } from "./recorder.ts";
import type { Retries } from "./retries.ts";
import { isRateLimitReason } from "./scheduler.ts";
import type { RunningSession, SessionTable } from "./sessions.ts";

/**
 * The ledger's name for why an agent's attempt failed: `deadline`, `max-turns` (the CLI's own
 * turn limit), `rate-limited` (its reason says so; the retry then waits the cooldown) or
 * `agent-failed`.
 */
export function failureCode(result: AgentResult, timedOut: boolean, reason: string): string {
  if (timedOut) return "deadline";
  if (result.subtype === "error_max_turns") return "max-turns";
  if (isRateLimitReason(reason)) return "rate-limited";
  return "agent-failed";
}

const CLAIMED: ReadonlySet<string> = new Set(CLAIMED_STATUSES);

/** What exit handling works with. */
export interface AgentExitDeps {
  /** Effective configuration (deadlines). */
  config: Pick<Config, "tuning">;
  /** Task store. */
  store: TaskStore;
  /** Agent tokens (revoked at exit). */
  tokens: Pick<TokenRegistry, "revoke">;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Failure and retry. */
  retries: Retries;
  /** Checks of finished work. */
  completion: Completion;
  /**
   * Throws a storage failure when `.sdd` cannot take a write now (disk full, read-only): an
   * agent that failed then most likely failed on it, and the run stops resumable instead of
   * failing its task.
   */
  checkStorage?: () => Promise<void>;
}

/** Turns agent exits into task outcomes. */
export class AgentExits {
  readonly #deps: AgentExitDeps;

  constructor(deps: AgentExitDeps) {
    this.#deps = deps;
  }

  /**
   * Decides: done → signals → gates → merge; else fail/retry. Until it has decided, a failure of
   * the task is not final (its dependents and recovery steps wait for the decision).
   */
  handle(s: RunningSession, ended: AgentExit): Promise<void> {
    return this.#deps.retries.settling(s.task.id, () => this.#handle(s, ended));
  }

  async #handle(s: RunningSession, ended: AgentExit): Promise<void> {
    const { store, tokens, recorder } = this.#deps;
    // Stopped by the run's deadline check (not the process's backstop timer): timed out all the same.
    const exit = s.deadlineHit === true ? { ...ended, timedOut: true } : ended;
    if (!exit.result.ok) await this.#deps.checkStorage?.();
    await tokens.revoke(s.session).catch(() => {});
    await recorder.record({
      kind: "agent.exited",
      taskId: s.task.id,
      session: s.session,
      adapter: s.adapterName,
      model: s.file.model,
      ...(s.file.provider !== undefined ? { provider: s.file.provider } : {}),
      exit,
      worker: s.execution?.host,
    });
    s.state = "checking";
    const current = await store.get(s.task.id) as Task;
    if (current.assigned_agent !== s.session) {
      await this.#claimLost(s, current);
      return;
    }
    if (exit.workLost !== undefined && (current.status === "done" || CLAIMED.has(current.status))) {
      await this.#deps.sessions.finish(s, "failed");
      await this.#deps.retries.failTask(
        current,
        exit.workLost,
        "infra-error",
        exit.result.cost_usd,
      );
      return;
    }
    const task = await this.#settle(s, current, exit);
    if (task === undefined) return;
    if (task.status !== "done") {
      await this.#reportedByAgent(s, task, exit);
      return;
    }
    await recorder.record({
      kind: "task.done",
      taskId: task.id,
      summary: task.result_summary ?? "",
    });
    await this.#deps.completion.complete(s, task, exit.result.cost_usd);
  }

  /** The claim expired (or was released) while the agent ran: its result is not used. */
  async #claimLost(s: RunningSession, task: Task): Promise<void> {
    await this.#deps.recorder.record({
      kind: "claim.lost",
      taskId: task.id,
      session: s.session,
      holder: task.assigned_agent,
    });
    await this.#deps.sessions.finish(s, "released");
  }

  /**
   * A task the agent left active: `done` on a clean exit, else failed (undefined: handled).
   * Any other status is the agent's own report and stays.
   */
  async #settle(s: RunningSession, task: Task, exit: AgentExit): Promise<Task | undefined> {
    if (task.status !== "in_progress" && task.status !== "claimed") return task;
    const { result, timedOut } = exit;
    // An agent stopped at its deadline (or by the endpoint watchdog) failed, even if it exited
    // cleanly on the signal (gemini does).
    if (result.ok && !timedOut && s.stopReason === undefined) {
      return await this.#deps.store.transition(task.id, "done", {
        actor: "orchestrator",
        reason: "agent exited 0",
        result_summary: result.summary || "(no summary)",
      });
    }
    const deadlineS = s.deadlineS ?? agentDeadlineSeconds(this.#deps.config.tuning, task.scope);
    const reason = s.stopReason ??
      (timedOut
        ? `deadline: killed after ${deadlineS}s (scope ${task.scope})`
        : result.error ?? `agent exited ${result.exit_code}`);
    await this.#deps.sessions.finish(s, "failed");
    await this.#deps.retries.failTask(
      task,
      reason,
      failureCode(result, timedOut, reason),
      result.cost_usd,
    );
    return undefined;
  }

  /** The agent reported failure or a block itself. */
  async #reportedByAgent(s: RunningSession, task: Task, exit: AgentExit): Promise<void> {
    await this.#deps.sessions.finish(s, "failed");
    if (task.status === "failed") {
      const reason = task.terminal_reason ?? "agent reported failure";
      await this.#deps.retries.afterFailure(
        task,
        reason,
        failureCode(exit.result, exit.timedOut, reason),
        exit.result.cost_usd,
      );
      return;
    }
    await this.#deps.recorder.record({
      kind: "task.ended",
      taskId: task.id,
      status: task.status,
      reason: task.terminal_reason ?? "",
    });
  }
}
