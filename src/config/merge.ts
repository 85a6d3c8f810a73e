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
    const dotted = dottedPath(path);
    for (const existing of [...sources.keys()]) {
      if (existing.startsWith(dotted + ".")) sources.delete(existing);
    }
    out[key] = value;
    recordLeaves(value, path, label, sources);
  }
  return out;
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

/** A copy of `root` without the key at `path`. */
export function deletePath(
  root: Record<string, unknown>,
  path: readonly (string | number)[],
): Record<string, unknown> {
  if (path.length === 0) return root;
  const [head, ...rest] = path;
  const key = String(head);
  if (rest.length === 0) {
    const { [key]: _removed, ...kept } = root;
    return kept;
  }
  const child = root[key];
  if (isPlainObject(child)) return { ...root, [key]: deletePath(child, rest) };
  if (Array.isArray(child) && typeof rest[0] === "number") {
    const copy = [...child];
    const item = copy[rest[0]];
    if (isPlainObject(item)) copy[rest[0]] = deletePath(item, rest.slice(1));
    return { ...root, [key]: copy };
  }
  return root;
}
