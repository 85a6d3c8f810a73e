// `BERNSTEIN_TASK_FILTER`: a comma list of task ids and globs selecting which tasks run, and
// the patterns that matched nothing (reported, not ignored).

import { UsageError } from "../errors/mod.ts";
import { compileGlob } from "./glob.ts";

/**
 * A parsed `BERNSTEIN_TASK_FILTER`: a comma-separated list of task ids or globs (`*`, `?`,
 * `[a-z]`). A task is selected when any pattern matches its whole id. Unset or blank means
 * no filter (everything runs).
 */
export interface TaskFilter {
  /** The patterns as written (trimmed, empties dropped), in order. */
  patterns: string[];
  /** Their compiled forms, same order. */
  regexes: RegExp[];
}

/**
 * Parses a task filter; returns undefined when it selects everything (unset or blank).
 *
 * @example
 * ```ts
 * const f = parseTaskFilter("fix-login,docs-*");
 * matchesTaskFilter(f, "docs-readme"); // true
 * ```
 */
export function parseTaskFilter(text: string | undefined): TaskFilter | undefined {
  if (text === undefined) return undefined;
  const patterns = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (patterns.length === 0) return undefined;
  const regexes = patterns.map((p) => {
    try {
      return compileGlob(p);
    } catch (error) {
      throw new UsageError(
        "backlog.bad_filter",
        `BERNSTEIN_TASK_FILTER: ${(error as Error).message}`,
      );
    }
  });
  return { patterns, regexes };
}

/** True when `id` is selected by `filter` (always true without a filter). */
export function matchesTaskFilter(filter: TaskFilter | undefined, id: string): boolean {
  return filter === undefined || filter.regexes.some((r) => r.test(id));
}

/** The patterns of a filter that select none of `ids` (likely typos). */
export function unmatchedPatterns(filter: TaskFilter, ids: readonly string[]): string[] {
  return filter.patterns.filter((_, i) => !ids.some((id) => filter.regexes[i].test(id)));
}
