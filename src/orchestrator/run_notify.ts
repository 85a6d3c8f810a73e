/**
 * The run's notifications: which facts of the run tell people something (pure
 * `notificationOfFact`), the end-of-run notice from the summary's health, and the
 * `RunNotifier` that subscribes to the recorder (the event seam), hands notifications to the
 * manager in src/notify and records every delivery back into the run's audit chain. The
 * manager never blocks the loop; the end of the run waits for it at most
 * `tuning.notify.drain_timeout_s`.
 */
import { basename, resolve } from "node:path";
import { systemPathLookup } from "../adapters/mod.ts";
import { type JsonObject, toHex } from "../canonical/mod.ts";
import type { AuditSink } from "../audit/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Warning } from "../errors/mod.ts";
import { type Clock, type EnvReader, type Random, runFile } from "../io/mod.ts";
import {
  type Channel,
  type ChannelEdges,
  type ChannelTally,
  EVENT_INFO,
  managerLimits,
  nodemailerSend,
  type Notification,
  type NotificationEvent,
  NotificationManager,
  oneLine,
  openChannels,
  planChannels,
} from "../notify/mod.ts";
import type { Task } from "../tasks/mod.ts";
import type { RunOutcome } from "./outcome.ts";
import type { RunFact } from "./recorder.ts";
import { githubCommentChannel } from "./github_backlog.ts";

/** What a fact says to people: the event and its words. */
export interface FactNotice {
  /** Event. */
  event: NotificationEvent;
  /** One line. */
  title: string;
  /** A few lines. */
  text: string;
  /** Event fields. */
  details: JsonObject;
}

/** Titles of tasks by id (for words like "Task 1.2 failed: Write the parser"). */
export type TitleOf = (taskId: string) => string | undefined;

function taskLabel(taskId: string, titleOf: TitleOf): string {
  const title = titleOf(taskId);
  return title === undefined ? taskId : `${taskId} (${oneLine(title, 120)})`;
}

/**
 * The notice of a fact, or undefined when the fact tells people nothing. A task's failure is
 * told once, when it is final — never for an attempt that will be retried, nor for each
 * dependent of a failed task (the end-of-run notice lists those).
 */
export function notificationOfFact(fact: RunFact, titleOf: TitleOf): FactNotice | undefined {
  switch (fact.kind) {
    case "run.started":
      return {
        event: "run.started",
        title: `Run ${fact.runId} started on ${fact.branch}`,
        text: `Work from ${fact.sourceKind}, up to ${fact.maxAgents} agents at once.`,
        details: { branch: fact.branch, source: fact.sourceKind, attempt: fact.attempt },
      };
    case "run.resumed":
      return {
        event: "run.started",
        title: `Run ${fact.runId} resumed on ${fact.branch} (attempt ${fact.attempt})`,
        text: `${fact.open} task(s) still to do.`,
        details: { branch: fact.branch, attempt: fact.attempt, open: fact.open },
      };
    case "task.failed":
      if (fact.final !== true || fact.code === "dependency-failed") return undefined;
      return {
        event: "task.failed",
        title: `Task ${taskLabel(fact.taskId, titleOf)} failed`,
        text: `${fact.message}\nFailure: ${fact.code}. Its retries are spent.`,
        details: { task_id: fact.taskId, code: fact.code, reason: fact.detail },
      };
    case "merge.refused": {
      const r = fact.refused;
      return {
        event: "merge.refused",
        title: `Merge of ${taskLabel(r.task_id, titleOf)} refused: ${r.reason}`,
        text: `${r.detail}\nThe work is kept on branch ${r.branch}.`,
        details: { task_id: r.task_id, branch: r.branch, reason: r.reason },
      };
    }
    case "merge.completed":
      return {
        event: "task.merged",
        title: `Task ${taskLabel(fact.taskId, titleOf)} merged`,
        text: `Commit ${fact.sha} on ${fact.branch}: ${fact.files.length} file(s).`,
        details: { task_id: fact.taskId, sha: fact.sha, files: fact.files.length },
      };
    case "run.manager_stalled":
      return {
        event: "manager.stalled",
        title: `Run ${fact.runId}: the manager created no task in ${fact.aliveS} s`,
        text: `The run stops. Diagnostic: ${fact.diagnostic}`,
        details: { alive_s: fact.aliveS, diagnostic: fact.diagnostic },
      };
    case "run.backstop":
      return {
        event: "run.backstop",
        title: `Run ${fact.runId} stopped by the backstop`,
        text: `${fact.reason}; the goal was not met.`,
        details: { reason: fact.reason, tasks: fact.tasks.slice(0, 50) },
      };
    case "policy.parked":
      return {
        event: "approval.needed",
        title: `Approval needed: ${taskLabel(fact.taskId, titleOf)} asks to ${fact.summary}`,
        text: `Answer with 'bernstein approvals' within ${fact.timeoutS} s, or the call is ` +
          `denied. Approval id: ${fact.approvalId}.`,
        details: { task_id: fact.taskId, approval_id: fact.approvalId, timeout_s: fact.timeoutS },
      };
    default:
      return undefined;
  }
}

/** What the end-of-run notice is built from. */
export interface RunEndInput {
  /** How the loop ended. */
  outcome: RunOutcome;
  /** Every task at the end. */
  tasks: readonly Task[];
  /** The summary's health. */
  health: "HEALTHY" | "UNHEALTHY";
}

/** The end-of-run notice: health, why it ended, tasks by status, merges, refusals, cost. */
export function runEndNotice(runId: string, input: RunEndInput): FactNotice {
  const { outcome, tasks, health } = input;
  const byStatus: Record<string, number> = {};
  for (const t of tasks) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  const counts = Object.entries(byStatus).map(([s, n]) => `${s} ${n}`).join(" · ");
  const cost = outcome.costs.reduce((sum, c) => sum + (c.cost_usd ?? 0), 0);
  const lines = [
    `Ended: ${outcome.end}${outcome.reason === "" ? "" : ` (${outcome.reason})`}`,
    `Tasks: ${tasks.length} — ${counts || "none"}`,
    `Merged: ${outcome.merges.length}${
      outcome.merges.length === 0
        ? ""
        : ` (${outcome.merges.slice(0, 10).map((m) => m.task_id).join(", ")})`
    }`,
  ];
  for (const r of outcome.refused.slice(0, 10)) {
    lines.push(`Refused: ${r.task_id} (${r.reason}), work kept on ${r.branch}`);
  }
  for (const k of outcome.keptBranches.slice(0, 10)) {
    lines.push(`Kept: ${k.branch} for ${k.task_id} (${oneLine(k.reason, 120)})`);
  }
  lines.push(`Reported cost: $${cost.toFixed(2)}`);
  const failed = tasks.filter((t) => t.status === "failed").length;
  const title = health === "HEALTHY"
    ? `Run ${runId} ended HEALTHY: ${outcome.merges.length} merged`
    : `Run ${runId} ended UNHEALTHY (${outcome.end}): ${failed} failed, ` +
      `${outcome.refused.length} refused`;
  return {
    event: health === "HEALTHY" ? "run.completed" : "run.unhealthy",
    title,
    text: lines.join("\n"),
    details: {
      health,
      end: outcome.end,
      reason: outcome.reason,
      tasks: byStatus,
      merged: outcome.merges.length,
      refused: outcome.refused.length,
      cost_usd: Math.round(cost * 1e6) / 1e6,
    },
  };
}

/** Inputs of {@linkcode RunNotifier.open}. */
export interface RunNotifierParts {
  /** Effective configuration. */
  config: Config;
  /** Project root (relative `ca_file`, the project's name). */
  root: string;
  /** `.sdd/` (the run's HTML report, when one exists). */
  sdd: string;
  /** Run id. */
  runId: string;
  /** Branch the run merges into. */
  branch: string;
  /** Environment (secret variables, the desktop session). */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** Notification ids. */
  random: Random;
  /** Records a fact (deliveries go into the run's audit chain). */
  record: (fact: RunFact) => Promise<void>;
  /** Replaces edges (tests). */
  edges?: Partial<ChannelEdges>;
  /** Extra channels (tests). */
  extraChannels?: readonly Channel[];
  /** HTTP of the GitHub comment (tests; default fetch). */
  githubFetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** The run's audit chain (a `github.connection` resolution is recorded there). */
  audit?: AuditSink;
}

/** The edges of a real run. */
export function runEdges(env: EnvReader, clock: Clock, root: string): ChannelEdges {
  const lookup = systemPathLookup(env);
  return {
    fetch: (url, init) => fetch(url, init),
    sendMail: nodemailerSend,
    find: (name) => lookup.which(name),
    os: Deno.build.os,
    env,
    clock,
    readText: (path) => Deno.readTextFile(resolve(root, path)),
  };
}

/**
 * A run's notifications. Subscribe `observe` to the recorder; call `runEnded` once the summary's
 * health is known and `finish` before the run's records are sealed.
 */
export class RunNotifier {
  readonly #parts: RunNotifierParts;
  readonly #manager: NotificationManager;
  readonly #titles = new Map<string, string>();

  private constructor(parts: RunNotifierParts, manager: NotificationManager) {
    this.#parts = parts;
    this.#manager = manager;
  }

  /**
   * Reads `notify.*`, opens the channels and records which are in use (`notify.started`).
   * Returns the warnings to show at the start: channels that are off, and why.
   */
  static async open(
    parts: RunNotifierParts,
  ): Promise<{ notifier: RunNotifier; warnings: Warning[] }> {
    const plan = planChannels(parts.config, parts.env);
    const edges = { ...runEdges(parts.env, parts.clock, parts.root), ...parts.edges };
    const limits = managerLimits(parts.config.tuning);
    const { channels, notes } = await openChannels(plan, edges, limits.timeoutMs);
    channels.push(...(parts.extraChannels ?? []));
    if (parts.config.github.comment_on_merge) {
      const comment = await githubCommentChannel({
        config: parts.config,
        root: parts.root,
        sdd: parts.sdd,
        env: parts.env,
        clock: parts.clock,
        random: parts.random,
        runId: parts.runId,
        ...(parts.audit === undefined ? {} : { audit: parts.audit }),
        ...(parts.githubFetch === undefined ? {} : { fetch: parts.githubFetch }),
      });
      if ("send" in comment) channels.push(comment);
      else notes.push(comment);
    }
    const targets = new Map(channels.map((c) => [c.name, c.target]));
    const manager = new NotificationManager({
      channels,
      limits,
      clock: parts.clock,
      onDelivery: (delivery) =>
        parts.record({
          kind: "notify.delivery",
          target: targets.get(delivery.channel) ?? delivery.channel,
          delivery,
        }),
    });
    const warnings = [...plan.problems, ...notes];
    if (channels.length > 0 || warnings.length > 0) {
      await parts.record({
        kind: "notify.started",
        channels: channels.map((c) => ({ name: c.name, target: c.target, events: [...c.events] })),
        off: warnings.map((w) => w.message),
      });
    }
    return { notifier: new RunNotifier(parts, manager), warnings };
  }

  /** Channels in use. */
  get channels(): string[] {
    return this.#manager.channels;
  }

  /** Task titles for the notices (a resumed run has no `task.scheduled` facts). */
  learnTitles(tasks: readonly Task[]): void {
    for (const t of tasks) this.#titles.set(t.id, t.title);
  }

  /** The recorder's listener: queues the notice of a fact, if it has one. */
  observe(fact: RunFact): void {
    if (fact.kind === "task.scheduled") this.#titles.set(fact.taskId, fact.title);
    if (this.#manager.channels.length === 0) return;
    const notice = notificationOfFact(fact, (id) => this.#titles.get(id));
    if (notice !== undefined) this.#manager.notify(this.#notification(notice, null));
  }

  /** Queues the end-of-run notice. */
  async runEnded(input: RunEndInput): Promise<void> {
    if (this.#manager.channels.length === 0) return;
    const report = await this.#reportUrl();
    this.#manager.notify(this.#notification(runEndNotice(this.#parts.runId, input), report));
  }

  /** Waits for queued deliveries (at most `tuning.notify.drain_timeout_s`), then stops. */
  async finish(): Promise<ChannelTally[]> {
    return await this.#manager.drain(this.#parts.config.tuning.notify.drain_timeout_s * 1000);
  }

  #notification(notice: FactNotice, report: string | null): Notification {
    const parts = this.#parts;
    return {
      id: toHex(parts.random.bytes(16)),
      event: notice.event,
      severity: EVENT_INFO[notice.event].severity,
      occurred_at: new Date(parts.clock.nowMs()).toISOString(),
      project: basename(parts.root),
      run: { id: parts.runId, branch: parts.branch },
      title: oneLine(notice.title),
      text: notice.text,
      details: notice.details,
      report,
    };
  }

  async #reportUrl(): Promise<string | null> {
    const path = runFile(this.#parts.sdd, this.#parts.runId, "report");
    try {
      return (await Deno.stat(path)).isFile ? new URL(`file://${path}`).href : null;
    } catch {
      return null;
    }
  }
}
