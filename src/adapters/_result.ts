// What output parsers accumulate and how it becomes the final AgentResult.
import { clip } from "./_json.ts";
import { type AgentResult, type ExitInfo, type ProgressEvent, type TokenUsage } from "./types.ts";

/** Adds token counts. */
export function addTokens(a: TokenUsage | null, b: TokenUsage): TokenUsage {
  if (a === null) return { ...b };
  const out: TokenUsage = { input: a.input + b.input, output: a.output + b.output };
  const cr = (a.cache_read ?? 0) + (b.cache_read ?? 0);
  const cw = (a.cache_write ?? 0) + (b.cache_write ?? 0);
  if (a.cache_read !== undefined || b.cache_read !== undefined) out.cache_read = cr;
  if (a.cache_write !== undefined || b.cache_write !== undefined) out.cache_write = cw;
  return out;
}

/**
 * The `subtype` every parser reports when it recognises the CLI's own turn-limit ending
 * (claude's own name for it), so the run loop can tell "ran out of turns" from other failures.
 */
export const MAX_TURNS_SUBTYPE = "error_max_turns";

/**
 * Exit code gemini and qwen use when the session turn limit is reached (FatalTurnLimitedError);
 * qwen prints no result event then, only this code and a line on stderr.
 */
export const TURN_LIMIT_EXIT = 53;

/** What a parser accumulates while reading; `finishResult` turns it into an AgentResult. */
export interface ParseState {
  /** Final message when the CLI sent one explicitly. */
  final?: string;
  /** Last assistant text seen (summary fallback). */
  last_text?: string;
  /** Turns reported. */
  turns: number | null;
  /** Tokens reported. */
  tokens: TokenUsage | null;
  /** Cost reported. */
  cost_usd: number | null;
  /** Error the CLI reported. */
  error?: string;
  /** Result subtype. */
  subtype: string | null;
  /** Session id. */
  session_id: string | null;
  /** Last non-JSON line (summary fallback for plain-text CLIs). */
  last_raw?: string;
}

/** A fresh parse state. */
export function newState(): ParseState {
  return { turns: null, tokens: null, cost_usd: null, subtype: null, session_id: null };
}

function lastLine(text: string | undefined): string | undefined {
  const lines = (text ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.length > 0 ? lines[lines.length - 1] : undefined;
}

/** The final result from the parse state and the exit. */
export function finishResult(state: ParseState, exit: ExitInfo): AgentResult {
  let error: string | null = state.error ?? null;
  if (error === null && exit.timed_out) error = "killed at the deadline";
  if (error === null && exit.code !== 0) {
    const why = lastLine(exit.stderr) ?? state.last_raw;
    error = `exited with code ${exit.code}${why ? `: ${clip(why)}` : ""}`;
  }
  return {
    ok: exit.code === 0 && !exit.timed_out && state.error === undefined,
    summary: state.final ?? state.last_text ?? state.last_raw ?? "",
    turns: state.turns,
    tokens: state.tokens,
    cost_usd: state.cost_usd,
    error,
    subtype: state.subtype,
    session_id: state.session_id,
    exit_code: exit.code,
  };
}

/** A raw (unparsed) line as an event; remembers it as a summary fallback. */
export function rawEvent(state: ParseState, line: string): ProgressEvent[] {
  const text = line.trim();
  if (text === "") return [];
  state.last_raw = text;
  return [{ kind: "raw", text: clip(text) }];
}
