// Output of CLIs that print plain text: every line is progress, the last one the summary.
import { finishResult, newState, rawEvent } from "./_result.ts";
import type { OutputParser } from "./types.ts";

/** A parser for plain-text output (no turns, tokens or cost). */
export function plainTextParser(): OutputParser {
  const state = newState();
  return {
    line: (line) => rawEvent(state, line),
    finish: (exit) => finishResult(state, exit),
  };
}
