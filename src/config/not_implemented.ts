/**
 * The one documented list of configuration keys that validate but do nothing yet, each with
 * the issue that builds it. Loading a layer that sets one prints
 * `warning[config.not_implemented]: FILE:LINE:COL: KEY is accepted but has no effect yet`
 * (`config validate --strict` exits 1 on it), and the schema-walk test
 * (tests/config/schema_walk_test.ts) accepts an unread key only when it is listed here.
 * Whoever builds a key removes its entry in the same change.
 */
import type { ConfigProblem } from "./errors.ts";

/** One key (or subtree) accepted by the schema that no code acts on yet. */
export interface NotImplementedKey {
  /** Dotted key; `*` stands for any map key or list index. Covers the whole subtree. */
  key: string;
  /** Issue that builds it, or null when none does yet. */
  issue: number | null;
  /** Only these values are inert (other values of the key work). */
  values?: readonly unknown[];
}

/** Keys that validate and do nothing yet. README lists them; the schema walk checks them. */
export const NOT_IMPLEMENTED: readonly NotImplementedKey[] = [
  { key: "budget", issue: null },
  { key: "bridges", issue: null },
];

/** True when dotted `key` is `pattern` or inside it (`*` matches one segment). */
export function keyMatches(pattern: string, key: string): boolean {
  const want = pattern.split(".");
  const have = key.split(".");
  if (have.length < want.length) return false;
  return want.every((seg, i) => seg === "*" || seg === have[i]);
}

/** The not-implemented entry covering a dotted key (it or a parent is listed), if any. */
export function notImplementedEntry(key: string): NotImplementedKey | undefined {
  return NOT_IMPLEMENTED.find((e) => keyMatches(e.key, key));
}

/** What the warnings are computed from: where each leaf came from and its value. */
export interface SetKeys {
  /** Dotted leaf → layer label (`default` for built-ins). */
  sources: ReadonlyMap<string, string>;
  /** Value at a dotted key. */
  valueOf(key: string): unknown;
  /** `file:line:col` of a dotted key in the layer that set it. */
  locate(key: string): string | undefined;
}

function issueText(entry: NotImplementedKey): string {
  return entry.issue === null ? "no issue builds it yet" : `built by issue ${entry.issue}`;
}

/**
 * One `config.not_implemented` warning per listed key that a layer other than the built-in
 * defaults sets, at the key's location; several matches of one entry are reported once, with
 * a count.
 */
export function notImplementedWarnings(set: SetKeys): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const hitsOf = new Map<NotImplementedKey, string[]>();
  const byHead = new Map<string, { entry: NotImplementedKey; segs: string[] }[]>();
  for (const entry of NOT_IMPLEMENTED) {
    const segs = entry.key.split(".");
    byHead.set(segs[0], [...(byHead.get(segs[0]) ?? []), { entry, segs }]);
  }
  // One pass over the set leaves (tens of thousands in a big file), not one per entry.
  for (const [leaf, label] of set.sources) {
    if (label === "default") continue;
    const dot = leaf.indexOf(".");
    const candidates = byHead.get(dot < 0 ? leaf : leaf.slice(0, dot));
    if (candidates === undefined) continue;
    const have = leaf.split(".");
    for (const { entry, segs } of candidates) {
      if (have.length < segs.length || !segs.every((seg, i) => seg === "*" || seg === have[i])) {
        continue;
      }
      if (entry.values !== undefined && !entry.values.includes(set.valueOf(leaf))) continue;
      hitsOf.set(entry, [...(hitsOf.get(entry) ?? []), leaf]);
    }
  }
  for (const entry of NOT_IMPLEMENTED) {
    const hits = hitsOf.get(entry) ?? [];
    if (hits.length === 0) continue;
    const more = hits.length > 1 ? ` (and ${hits.length - 1} more under ${entry.key})` : "";
    const value = entry.values !== undefined ? `: ${JSON.stringify(set.valueOf(hits[0]))}` : "";
    problems.push({
      severity: "warning",
      code: "config.not_implemented",
      message: `${hits[0]}${value} is accepted but has no effect yet${more}`,
      location: set.locate(hits[0]),
      hint: issueText(entry),
    });
  }
  return problems;
}
