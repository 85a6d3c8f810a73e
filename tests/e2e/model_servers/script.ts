// What a fake model does, turn by turn. A script is a list of turns; each turn is one action
// (write a file through the CLI's own tool, run a shell command, or answer a final text),
// optionally preceded by failures that answer the first N requests of that turn instead (HTTP
// status, a hang, a malformed stream). The turn of a request is the number of tool results
// already in its conversation, so a CLI's own retries of one turn see the same turn again.
//
// Scripts come from the prompt (lines `@model …` of a user message, so a plan step's
// description drives the model) or from the server's options.

/** A failure answered instead of a turn's action. */
export type ModelFailure =
  | {
    kind: "status";
    /** HTTP status (429, 500, …). */
    status: number;
    /** `retry-after` header in seconds, when set. */
    retry_after_s?: number;
  }
  | { kind: "hang" }
  | { kind: "malformed" };

/** What the model does in one turn. */
export type ModelAction =
  | {
    kind: "write";
    /** Path relative to the agent's working directory (no `..`, not absolute). */
    path: string;
    /** Exact file content. */
    content: string;
  }
  | {
    kind: "shell";
    /** Command given to the CLI's shell tool. */
    command: string;
  }
  | {
    kind: "call";
    /** Tool names to use, the first one the CLI offers (`Read|read_file`). */
    tools: string[];
    /** Arguments as JSON text; `{cwd}` stands for the working directory (JSON-escaped). */
    args: string;
  }
  | {
    kind: "say";
    /** The final text; the CLI ends its run with it. */
    text: string;
  };

/** One turn: failures first (each for `times` requests, or for ever), then the action. */
export interface ModelTurn {
  /** Failures answered, in order, before the action. */
  failures: { failure: ModelFailure; times: number | null }[];
  /** The action once the failures are used up. */
  action: ModelAction;
}

/** A whole script; `key` identifies it for the failure counters. */
export interface ModelScript {
  /** The turns; past the last one the model answers {@linkcode DEFAULT_FINAL_TEXT}. */
  turns: ModelTurn[];
  /** Counter key (the script's text); two requests with the same key share counters. */
  key: string;
}

/** The final text when a script runs out of turns. */
export const DEFAULT_FINAL_TEXT = "done";

/** Thrown for a script line that does not parse. */
export class ModelScriptError extends Error {
  override name = "ModelScriptError";
}

const LINE = /^@model[ \t]+(\S+)(?:[ \t]+(.*))?$/;

function options(words: string[]): { times: number | null; rest: string[]; retry?: number } {
  let times: number | null = null;
  let retry: number | undefined;
  const rest: string[] = [];
  for (const w of words) {
    const m = /^(times|retry-after)=(\d+)$/.exec(w);
    if (m === null) rest.push(w);
    else if (m[1] === "times") times = Number(m[2]);
    else retry = Number(m[2]);
  }
  return { times, rest, ...(retry !== undefined ? { retry } : {}) };
}

function checkRelative(path: string, line: string): void {
  if (path === "" || path.startsWith("/") || path.split("/").includes("..")) {
    throw new ModelScriptError(`${line}: the path must be relative and stay inside the cwd`);
  }
}

/**
 * Parses script lines (`@model write PATH CONTENT…`, `@model shell CMD…` (`{cwd}` stands for
 * the working directory), `@model say TEXT…`,
 * `@model call TOOL[|TOOL…] {json args, {cwd} for the working directory}`,
 * `@model fail STATUS [times=N] [retry-after=S]`, `@model hang [times=N]`,
 * `@model malformed [times=N]`). A written file's content is the rest of the line plus a
 * newline. Failures attach to the next action (or to the implicit final text).
 */
export function parseScript(lines: readonly string[]): ModelScript {
  const turns: ModelTurn[] = [];
  let pending: ModelTurn["failures"] = [];
  for (const line of lines) {
    const m = LINE.exec(line.trimEnd());
    if (m === null) throw new ModelScriptError(`not a script line: ${line}`);
    const verb = m[1];
    const arg = m[2] ?? "";
    const words = arg.split(/\s+/).filter((w) => w !== "");
    switch (verb) {
      case "write": {
        const [path, ...content] = arg.split(/ +/);
        checkRelative(path ?? "", line);
        turns.push({
          failures: pending,
          action: { kind: "write", path, content: content.join(" ") + "\n" },
        });
        pending = [];
        break;
      }
      case "shell":
        if (arg.trim() === "") throw new ModelScriptError(`${line}: no command`);
        turns.push({ failures: pending, action: { kind: "shell", command: arg } });
        pending = [];
        break;
      case "call": {
        const m2 = /^(\S+)[ \t]+(\{.*\})$/.exec(arg.trim());
        if (m2 === null) throw new ModelScriptError(`${line}: call needs TOOL[|TOOL…] {json}`);
        try {
          JSON.parse(m2[2].replaceAll("{cwd}", "/"));
        } catch {
          throw new ModelScriptError(`${line}: the arguments are not a JSON object`);
        }
        turns.push({
          failures: pending,
          action: { kind: "call", tools: m2[1].split("|"), args: m2[2] },
        });
        pending = [];
        break;
      }
      case "say":
        turns.push({ failures: pending, action: { kind: "say", text: arg } });
        pending = [];
        break;
      case "fail": {
        const o = options(words);
        const status = Number(o.rest[0]);
        if (!Number.isInteger(status) || status < 400 || status > 599) {
          throw new ModelScriptError(`${line}: fail needs an HTTP status 400-599`);
        }
        pending.push({
          failure: {
            kind: "status",
            status,
            ...(o.retry !== undefined ? { retry_after_s: o.retry } : {}),
          },
          times: o.times,
        });
        break;
      }
      case "hang":
      case "malformed":
        pending.push({ failure: { kind: verb }, times: options(words).times });
        break;
      default:
        throw new ModelScriptError(`${line}: unknown verb '${verb}'`);
    }
  }
  if (pending.length > 0) {
    turns.push({ failures: pending, action: { kind: "say", text: DEFAULT_FINAL_TEXT } });
  }
  return { turns, key: lines.join("\n") };
}

/**
 * The `@model` lines of a text, in order, without leading blanks: qwen's `@file` expansion
 * hands `\n@model …` to the model as `\n @model …`.
 */
export function scriptLines(text: string): string[] {
  return text.split("\n").map((l) => l.replace(/^[ \t]+/, "")).filter((l) =>
    l.startsWith("@model ") || l.startsWith("@model\t")
  );
}

/** Counts of failures already answered, per script key, turn and failure index. */
export class FailureCounters {
  readonly #used = new Map<string, number>();

  /**
   * What to answer at `turn`: the first failure of the turn with requests left (counting this
   * one), else the turn's action; past the script's end, the default final text.
   */
  next(script: ModelScript, turn: number): { failure?: ModelFailure; action: ModelAction } {
    const t = script.turns[turn];
    if (t === undefined) return { action: { kind: "say", text: DEFAULT_FINAL_TEXT } };
    for (let i = 0; i < t.failures.length; i++) {
      const { failure, times } = t.failures[i];
      const key = `${script.key}\0${turn}\0${i}`;
      const used = this.#used.get(key) ?? 0;
      if (times === null || used < times) {
        this.#used.set(key, used + 1);
        return { failure, action: t.action };
      }
    }
    return { action: t.action };
  }
}
