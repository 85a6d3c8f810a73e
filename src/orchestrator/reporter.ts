// How a run tells the operator what happens: JSON lines (`--json`), plain lines (no TTY) and
// the TTY live view, all fed the same run events.

import type { JsonObject } from "../canonical/mod.ts";
import { renderLiveView, terminalSafe } from "../report/mod.ts";

/** One thing that happened during a run, for the live view and `--json` streams. */
export interface RunEvent extends JsonObject {
  /** Event type (`run.started`, `task.spawned`, `task.merged`, …). */
  type: string;
}

/** Receives run events as they happen. */
export interface RunReporter {
  /** One event. */
  event(event: RunEvent): void;
  /** Live agent lines (TTY view only); called on every tick. */
  agents?(rows: AgentRow[], progress: { done: number; total: number }): void;
  /** Ends the live view (before the summary is printed). */
  close?(): void;
}

/** One line of the live view. */
export interface AgentRow {
  /** Adapter name. */
  adapter: string;
  /** Model, when known. */
  model: string;
  /** Task id. */
  task: string;
  /** Seconds since spawn. */
  elapsedS: number;
  /** running, checking, merging… */
  state: string;
  /** Last text the agent printed. */
  last: string;
}

/** Streams each event as one JSON line (`--json`). */
export class JsonLinesReporter implements RunReporter {
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  event(event: RunEvent): void {
    this.#write(JSON.stringify(event));
  }
}

function describe(e: RunEvent): string | undefined {
  const s = (k: string) => String(e[k] ?? "");
  switch (e.type) {
    case "run.started":
      return `run ${s("run_id")}: ${s("tasks")} task(s) from ${s("source")} → merges into ${
        s("branch")
      }`;
    case "run.resumed":
      return `run ${s("run_id")} resumed (attempt ${s("attempt")}): ${
        s("open")
      } task(s) still to do`;
    case "agent.deadline_extended":
      return `⏱ ${s("task_id")} still reporting progress: deadline extended to ${s("deadline_s")}s`;
    case "config.reloaded":
      return `⟳ configuration reloaded: ${
        (e.applied as string[] | undefined)?.join(", ") || "nothing that applies now"
      }${
        (e.pending as string[] | undefined)?.length
          ? ` (next run: ${(e.pending as string[]).join(", ")})`
          : ""
      }`;
    case "task.spawned":
      return `▶ ${s("task_id")}  ${s("adapter")}${e.model ? "/" + s("model") : ""}  (${
        s("session")
      }${e.worker ? ` on ${s("worker")}` : ""})`;
    case "task.done":
      return `✓ ${s("task_id")} done: ${s("summary")}`;
    case "task.merged":
      return `⇢ ${s("task_id")} merged (${s("files")} file(s))`;
    case "task.closed":
      return `· ${s("task_id")} closed: ${s("reason")}`;
    case "task.failed":
      return `✗ ${s("task_id")} failed: ${s("reason")}`;
    case "task.retry":
      return `↻ ${s("task_id")} retry ${s("attempt")} in ${s("delay_s")}s`;
    case "task.routed":
      return `↪ ${s("task_id")} recovers ${s("source_task")} (${s("source_status")}; ${
        s("condition")
      }), receipt ${s("receipt_hash").slice(0, 23)}…`;
    case "task.skipped":
      return `· ${s("task_id")} skipped: ${s("reason")}`;
    case "model.escalated":
      return `⇧ ${s("task_id")} escalates to ladder rung ${s("to_step")} (evidence: ${
        s("evidence")
      })`;
    case "provider.routed":
      return e.reason === "no_healthy_provider"
        ? `✗ ${s("task_id")} no healthy provider for role ${s("role")}`
        : `⇄ ${s("task_id")} fails over to ${s("adapter")}${e.model ? "/" + s("model") : ""}`;
    case "merge.refused":
      return `✗ ${s("task_id")} merge refused: ${s("reason")} (branch ${s("branch")} kept)`;
    case "gate.failed":
      return `✗ ${s("task_id")} gate ${s("gate")}: ${s("reason")}`;
    case "run.warning":
      return `warning: ${s("message")}`;
    case "policy.parked":
      return `⏸ ${s("task_id")} tool call parked for approval (${s("approval_id")}): ${
        s("summary")
      } — bernstein approvals approve|deny ${s("approval_id")} (denied in ${s("timeout_s")}s)`;
    case "policy.denied":
      return `⊘ ${s("task_id")} ${s("tool")} denied: ${s("reason")}`;
    case "policy.started":
      return `policy: ${s("summary")}`;
    case "run.stopping":
      return `stopping: ${s("reason")}`;
    case "dashboard.ready":
      return `dashboard: ${s("url")}  (one-time login link; 'bernstein dashboard' prints another)`;
    default:
      return undefined;
  }
}

/** Prints one human line per event (non-TTY output). */
export class LineReporter implements RunReporter {
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  event(event: RunEvent): void {
    const line = describe(event);
    if (line !== undefined) this.#write(terminalSafe(line));
  }
}

/** Options of {@linkcode LiveReporter}. */
export interface LiveReporterOptions {
  /** Terminal columns (default 100). */
  width?: number;
  /** ANSI colours (the CLI turns them off under NO_COLOR). */
  color?: boolean;
  /** Spinner redraws per second between the loop's updates (default 8; 0 = none). */
  fps?: number;
  /** Monotonic milliseconds (elapsed times tick between updates). */
  now?: () => number;
}

/**
 * The TTY live view: one line per active agent (spinner, task, adapter/model, state, elapsed,
 * last progress) and a progress bar over tasks, redrawn in place; events scroll above it.
 */
export class LiveReporter implements RunReporter {
  readonly #write: (text: string) => void;
  readonly #width: number;
  readonly #color: boolean;
  readonly #now: () => number;
  readonly #fps: number;
  #drawn = 0;
  #frame = 0;
  #rows: AgentRow[] = [];
  #rowsAt = 0;
  #progress = { done: 0, total: 0, merged: 0, refused: 0 };
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(write: (text: string) => void, options: LiveReporterOptions = {}) {
    this.#write = write;
    this.#width = options.width ?? 100;
    this.#color = options.color ?? true;
    this.#now = options.now ?? (() => performance.now());
    this.#fps = options.fps ?? 8;
  }

  #clear(): void {
    if (this.#drawn > 0) this.#write(`\x1b[${this.#drawn}A\x1b[0J`);
    this.#drawn = 0;
  }

  #draw(): void {
    const ageS = (this.#now() - this.#rowsAt) / 1000;
    const lines = renderLiveView(
      this.#rows.map((r) => ({ ...r, elapsedS: r.elapsedS + ageS })),
      this.#progress,
      { frame: this.#frame++, width: this.#width, color: this.#color },
    );
    this.#clear();
    this.#write(lines.join("\n") + "\n");
    this.#drawn = lines.length;
  }

  event(event: RunEvent): void {
    if (event.type === "task.merged") this.#progress.merged++;
    if (event.type === "merge.refused") this.#progress.refused++;
    const line = describe(event);
    if (line === undefined) return;
    this.#clear();
    this.#write(terminalSafe(line) + "\n");
    if (this.#rows.length > 0 || this.#progress.total > 0) this.#draw();
  }

  agents(rows: AgentRow[], progress: { done: number; total: number }): void {
    this.#rows = rows;
    this.#rowsAt = this.#now();
    this.#progress = { ...this.#progress, ...progress };
    this.#draw();
    if (this.#fps > 0 && this.#timer === undefined) {
      this.#timer = setInterval(() => {
        if (this.#rows.length > 0) this.#draw();
      }, 1000 / this.#fps);
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clear();
  }
}
