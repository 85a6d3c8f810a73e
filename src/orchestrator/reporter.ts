import type { JsonObject } from "../canonical/mod.ts";

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
    case "task.spawned":
      return `▶ ${s("task_id")}  ${s("adapter")}${e.model ? "/" + s("model") : ""}  (${
        s("session")
      })`;
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
    case "merge.refused":
      return `✗ ${s("task_id")} merge refused: ${s("reason")} (branch ${s("branch")} kept)`;
    case "gate.failed":
      return `✗ ${s("task_id")} gate ${s("gate")}: ${s("reason")}`;
    case "run.warning":
      return `warning: ${s("message")}`;
    case "run.stopping":
      return `stopping: ${s("reason")}`;
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
    if (line !== undefined) this.#write(line);
  }
}

/**
 * The TTY live view: one line per running agent (adapter, model, task, elapsed, state) and a
 * progress bar over tasks, redrawn in place; events scroll above it.
 */
export class LiveReporter implements RunReporter {
  readonly #write: (text: string) => void;
  readonly #width: number;
  #drawn = 0;

  constructor(write: (text: string) => void, width = 100) {
    this.#write = write;
    this.#width = width;
  }

  #clear(): void {
    if (this.#drawn > 0) this.#write(`\x1b[${this.#drawn}A\x1b[0J`);
    this.#drawn = 0;
  }

  event(event: RunEvent): void {
    const line = describe(event);
    if (line === undefined) return;
    this.#clear();
    this.#write(line + "\n");
  }

  agents(rows: AgentRow[], progress: { done: number; total: number }): void {
    this.#clear();
    const lines = rows.map((r) => {
      const text = `  ${r.adapter.padEnd(9)} ${r.model.padEnd(10)} ${
        r.task.padEnd(28).slice(0, 28)
      } ${String(r.elapsedS).padStart(5)}s  ${r.state.padEnd(9)} ${r.last}`;
      return text.slice(0, this.#width);
    });
    const width = 30;
    const filled = progress.total === 0 ? 0 : Math.round((progress.done / progress.total) * width);
    lines.push(
      `  [${"#".repeat(filled)}${
        "-".repeat(width - filled)
      }] ${progress.done}/${progress.total} tasks`,
    );
    this.#write(lines.join("\n") + "\n");
    this.#drawn = lines.length;
  }

  close(): void {
    this.#clear();
  }
}
