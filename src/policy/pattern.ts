// Rule patterns (`input_pattern`): a regex when the text contains `.*`, `^` or `$`, otherwise a
// glob — the configuration design's rule. Both compile to the linear-time matcher in
// _nfa.ts, so no pattern, however written, can make a match take more than time linear in
// the value (no catastrophic backtracking, no timer needed).
import { compileGlob, compileRegex, PatternSyntaxError, type Program } from "./_nfa.ts";

export { PatternSyntaxError } from "./_nfa.ts";

/** How a pattern text is read. */
export type PatternKind = "regex" | "glob";

/** A compiled `input_pattern`. */
export interface CompiledPattern {
  /** regex or glob. */
  kind: PatternKind;
  /** The text as written. */
  source: string;
  /** True when the value matches (regex: from its start; glob: the whole value). */
  matches(value: string): boolean;
}

/** The kind a pattern text is read as: regex when it contains `.*`, `^` or `$`. */
export function patternKind(source: string): PatternKind {
  return source.includes(".*") || source.includes("^") || source.includes("$") ? "regex" : "glob";
}

/**
 * Compiles an `input_pattern`. Throws {@linkcode PatternSyntaxError} (with the offset of the
 * problem) for a regex the linear-time engine does not accept: backreferences, lookaround,
 * inline flags, repeat counts over 100, more than 2000 characters.
 *
 * @example
 * ```ts
 * const p = compilePattern("src/.*");
 * p.kind; // "regex"
 * p.matches("src/a.py"); // true
 * p.matches("lib/src/a.py"); // false: a regex matches from the start of the value
 * compilePattern("tests/*").matches("tests/unit/a_test.py"); // true: `*` crosses `/`
 * ```
 */
export function compilePattern(source: string): CompiledPattern {
  const kind = patternKind(source);
  const program: Program = kind === "regex" ? compileRegex(source) : compileGlob(source);
  return { kind, source, matches: (value) => program.matches(value) };
}

/** True when `error` is a pattern problem (as opposed to a bug). */
export function isPatternError(error: unknown): error is PatternSyntaxError {
  return error instanceof PatternSyntaxError;
}
