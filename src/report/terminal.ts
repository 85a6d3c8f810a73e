// The run seen in a terminal: the live view's lines (a spinner per active agent with its task,
// adapter, state, elapsed time and last progress; an overall progress bar) and the prefixes of
// `bernstein logs -f` over several sessions. Pure: the reporter and the logs command draw them.

/** Spinner frames (braille; one per redraw). */
export const SPINNER_FRAMES: readonly string[] = [
  "⠋",
  "⠙",
  "⠹",
  "⠸",
  "⠼",
  "⠴",
  "⠦",
  "⠧",
  "⠇",
  "⠏",
];

/** One active agent in the live view. */
export interface LiveViewRow {
  /** Task id. */
  task: string;
  /** Adapter name. */
  adapter: string;
  /** Model (`default` when none was chosen). */
  model: string;
  /** `running`, `checking`, `merging`. */
  state: string;
  /** Seconds since it started. */
  elapsedS: number;
  /** Its last progress text. */
  last: string;
}

/** Overall progress of the run. */
export interface LiveViewProgress {
  /** Tasks that reached an end (merged, closed, failed for good). */
  done: number;
  /** All tasks. */
  total: number;
  /** Merges so far. */
  merged: number;
  /** Refused merges so far. */
  refused: number;
}

/** Options of {@linkcode renderLiveView}. */
export interface LiveViewOptions {
  /** Redraw counter (picks the spinner frame). */
  frame: number;
  /** Terminal columns. */
  width: number;
  /** ANSI colours on. */
  color: boolean;
}

const SGR = {
  dim: ["\x1b[2m", "\x1b[22m"],
  cyan: ["\x1b[36m", "\x1b[39m"],
  yellow: ["\x1b[33m", "\x1b[39m"],
  green: ["\x1b[32m", "\x1b[39m"],
  red: ["\x1b[31m", "\x1b[39m"],
} as const;

function paint(text: string, style: keyof typeof SGR, on: boolean): string {
  return on ? `${SGR[style][0]}${text}${SGR[style][1]}` : text;
}

/** `42s`, `3m07s`, `1h02m`. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Cuts `text` to `width` terminal columns (one column per code point; agent text is cleaned). */
function fit(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : chars.slice(0, Math.max(0, width - 1)).join("") + "…";
}

/** Agent text made safe for a terminal: no control characters, one line. */
export function terminalSafe(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/[\x00-\x1f\x7f-\x9f]+/g, " ")
    .trim();
}

/**
 * The live view's lines: one per active agent, then the progress bar. Every line fits in
 * `width` columns (the view is redrawn in place by moving the cursor up, so a wrapped line
 * would break it).
 *
 * @example
 * ```ts ignore
 * renderLiveView(rows, { done: 2, total: 5, merged: 2, refused: 0 }, {
 *   frame: 3, width: 100, color: false,
 * });
 * ```
 */
export function renderLiveView(
  rows: readonly LiveViewRow[],
  progress: LiveViewProgress,
  options: LiveViewOptions,
): string[] {
  const width = Math.max(20, options.width - 1);
  const spin = SPINNER_FRAMES[options.frame % SPINNER_FRAMES.length];
  const taskWidth = Math.min(32, Math.max(8, ...rows.map((r) => [...r.task].length)));
  const who = rows.map((r) => `${r.adapter}${r.model === "default" ? "" : "/" + r.model}`);
  const whoWidth = Math.min(24, Math.max(0, ...who.map((w) => [...w].length)));
  const lines = rows.map((r, i) => {
    const head = `${spin} ${fit(r.task, taskWidth).padEnd(taskWidth)}  ${
      fit(who[i], whoWidth).padEnd(whoWidth)
    }  ${r.state.padEnd(8)} ${shortDuration(r.elapsedS).padStart(6)}  `;
    const style = r.state === "running" ? "cyan" : "yellow";
    const rest = width - [...head].length;
    if (rest <= 3) {
      // A narrow terminal: the head alone, cut.
      const cut = fit(head.trimEnd(), width);
      return paint(cut.slice(0, 1), style, options.color) + cut.slice(1);
    }
    const last = fit(terminalSafe(r.last), rest);
    return paint(head.slice(0, 1), style, options.color) + head.slice(1) +
      paint(last, "dim", options.color);
  });
  const barWidth = Math.max(10, Math.min(30, width - 40));
  const filled = progress.total === 0
    ? 0
    : Math.round((Math.min(progress.done, progress.total) / progress.total) * barWidth);
  const bar = `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]`;
  const counts = [`${progress.done}/${progress.total} tasks`];
  if (progress.merged > 0) counts.push(paint(`${progress.merged} merged`, "green", options.color));
  if (progress.refused > 0) counts.push(paint(`${progress.refused} refused`, "red", options.color));
  lines.push(fit(`${bar} `, width) + counts.join(" · "));
  return lines;
}

/** The prefix of one session's lines in `logs -f` (`task` or `task#2` for a retry). */
export function logPrefix(taskId: string, attempt: number): string {
  return attempt > 1 ? `${taskId}#${attempt}` : taskId;
}

/**
 * Splits a stream of text into whole lines and prefixes each (`prefix │ line`); a line without
 * its newline waits for the next chunk (or `flush`).
 */
export class LinePrefixer {
  readonly #prefix: string;
  readonly #clean: (line: string) => string;
  #rest = "";

  /** `clean` rewrites each line before it is prefixed (e.g. {@linkcode terminalSafe}). */
  constructor(prefix: string, clean: (line: string) => string = (line) => line) {
    this.#prefix = prefix;
    this.#clean = clean;
  }

  /** The complete lines in `chunk` (and what was left before), prefixed, each ending in `\n`. */
  feed(chunk: string): string {
    const text = this.#rest + chunk;
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      this.#rest = text;
      return "";
    }
    this.#rest = text.slice(end + 1);
    return text.slice(0, end).split("\n").map((line) => `${this.#prefix} │ ${this.#clean(line)}\n`)
      .join("");
  }

  /** The last unfinished line, prefixed (or nothing). */
  flush(): string {
    const rest = this.#rest;
    this.#rest = "";
    return rest === "" ? "" : `${this.#prefix} │ ${this.#clean(rest)}\n`;
  }
}
