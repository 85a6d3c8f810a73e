/** True for a plain mapping (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Dotted form of a config path (`tuning.agent.max_turns`). */
export function dottedPath(path: readonly (string | number)[]): string {
  return path.map(String).join(".");
}

/**
 * Merges `top` over `base`: nested maps merge key by key, scalars and lists replace. Records in
 * `sources` which layer set each leaf (dotted path → label); replaced subtrees lose theirs.
 * Neither input is modified.
 */
export function mergeLayer(
  base: Record<string, unknown>,
  top: Record<string, unknown>,
  label: string,
  sources: Map<string, string>,
  prefix: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(top)) {
    const path = [...prefix, key];
    if (isPlainObject(value) && isPlainObject(out[key])) {
      out[key] = mergeLayer(out[key] as Record<string, unknown>, value, label, sources, path);
      continue;
    }
    // Only a replaced map has leaves of its own to forget (a walk of it, not of every source).
    if (isPlainObject(out[key])) forgetLeaves(out[key], path, sources);
    out[key] = value;
    recordLeaves(value, path, label, sources);
  }
  return out;
}

function forgetLeaves(value: unknown, path: readonly string[], sources: Map<string, string>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) forgetLeaves(v, [...path, k], sources);
    return;
  }
  sources.delete(dottedPath(path));
}

function recordLeaves(
  value: unknown,
  path: readonly string[],
  label: string,
  sources: Map<string, string>,
): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) recordLeaves(v, [...path, k], label, sources);
    return;
  }
  sources.set(dottedPath(path), label);
}

/** The value at a dotted path, or undefined. */
export function getPath(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const seg of path) {
    if (!isPlainObject(current)) return undefined;
    current = current[seg];
  }
  return current;
}

/** A copy of `root` with the value at `path` set (intermediate maps created). */
export function setPath(
  root: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> {
  if (path.length === 0) return root;
  const [head, ...rest] = path;
  const child = isPlainObject(root[head]) ? root[head] as Record<string, unknown> : {};
  return { ...root, [head]: rest.length === 0 ? value : setPath(child, rest, value) };
}

/**
 * Removes the value at `path` from `root` itself (no copy, so many removals stay linear). A
 * path through a list removes the deepest map key on the way (the whole list), so the value
 * is gone whatever it was.
 */
export function deleteInPlace(
  root: Record<string, unknown>,
  path: readonly (string | number)[],
): void {
  let current: unknown = root;
  let target: { map: Record<string, unknown>; key: string } | undefined;
  for (const seg of path) {
    if (isPlainObject(current)) {
      target = { map: current, key: String(seg) };
      current = current[String(seg)];
    } else if (Array.isArray(current) && typeof seg === "number") {
      current = current[seg];
    } else break;
  }
  if (target !== undefined) delete target.map[target.key];
}
