/**
 * Reporting each problem once: the same problem in fifty list items is one line with a count,
 * and a flood of one kind (a file of ten thousand unknown keys) is cut to its first few lines
 * plus one line saying how many more there are.
 */
import type { ConfigProblem } from "./errors.ts";

/** Most lines of one code from one file before the rest are summed up. */
export const MAX_PROBLEMS_PER_KIND = 20;

/** A message with list indices replaced by `*`, so the same problem in each item matches. */
function generic(message: string): string {
  return message.replace(/\.\d+(?=[.:;\s]|$)/g, ".*");
}

function fileOf(location: string | undefined): string {
  return (location ?? "").replace(/:\d+:\d+$/, "");
}

/**
 * Collapses repeats: problems with the same code and the same message (list indices aside)
 * become one, at the first location, with `(N times)`; past {@linkcode MAX_PROBLEMS_PER_KIND}
 * distinct problems of one code in one file, one summary line counts the rest.
 */
export function collapseRepeats(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const groups = new Map<string, { first: ConfigProblem; count: number; message: string }>();
  for (const p of problems) {
    const message = generic(p.message);
    const key = `${p.severity}\0${p.code}\0${message}\0${p.hint ?? ""}`;
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { first: p, count: 1, message });
  }
  const out: ConfigProblem[] = [];
  const perKind = new Map<string, { shown: number; hidden: number; first: ConfigProblem }>();
  for (const { first, count, message } of groups.values()) {
    const kind = `${first.severity}\0${first.code}\0${fileOf(first.location)}`;
    const tally = perKind.get(kind) ?? { shown: 0, hidden: 0, first };
    perKind.set(kind, tally);
    if (tally.shown >= MAX_PROBLEMS_PER_KIND) {
      tally.hidden += count;
      continue;
    }
    tally.shown++;
    out.push(count === 1 ? first : { ...first, message: `${message} (${count} times)` });
  }
  for (const tally of perKind.values()) {
    if (tally.hidden === 0) continue;
    out.push({
      severity: tally.first.severity,
      code: tally.first.code,
      message: `… and ${tally.hidden} more like these`,
      location: fileOf(tally.first.location) || undefined,
    });
  }
  return out;
}
