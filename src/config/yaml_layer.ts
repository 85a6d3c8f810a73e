/**
 * YAML text → one configuration layer, with a way back from a key path to `file:line:col`.
 * Linear in the size of the text: js-yaml's event parser (tens of milliseconds for a
 * megabyte; the `yaml` library's document model is twenty times slower and its duplicate-key
 * check quadratic) gives values and source offsets in one pass; the path → offset index is
 * built from the same events, only when a location is asked for. Duplicate keys are errors at
 * the repeat; aliases may not expand a document past a bound (an alias bomb is a syntax error
 * at its first alias, not a hang). The `yaml` library stays for editing files with their
 * comments (`config set`).
 */
import {
  constructFromEvents,
  CORE_SCHEMA,
  type Event,
  EVENT_ID,
  getScalarValue,
  parseEvents,
  SCALAR_STYLE,
  YAMLException,
} from "js-yaml";
import type { FileProblem } from "./errors.ts";

/** One parsed configuration layer with a way back to source positions. */
export interface YamlLayer {
  /** Layer label used for provenance (`bernstein.yaml`, `overlay`, …). */
  label: string;
  /** File shown in locations, when the layer comes from a file. */
  file?: string;
  /** The parsed mapping (empty for an empty document). */
  raw: Record<string, unknown>;
  /** `file:line:col` of the value (or, with `key`, the key) at a path, when known. */
  locate(path: readonly (string | number)[], key?: boolean): string | undefined;
}

/** Deepest nesting of maps and lists accepted. */
const MAX_DEPTH = 100;

/**
 * Most values a document may expand to through aliases, beyond ten times its own size: a
 * few shared blocks are normal, an exponential fan-out is an attack.
 */
const MAX_ALIAS_EXPANSION = 100_000;

/** Offsets → 1-based line and column. */
class LinePositions {
  #starts: number[] | undefined;
  constructor(readonly text: string) {}

  at(offset: number): { line: number; col: number } {
    if (this.#starts === undefined) {
      const starts = [0];
      for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) {
        starts.push(i + 1);
      }
      this.#starts = starts;
    }
    const starts = this.#starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - starts[lo] + 1 };
  }
}

/** A node of the location index: where it starts and, for collections, its children. */
interface IndexNode {
  start: number;
  keys?: Map<string, { keyStart: number; value: IndexNode }>;
  items?: IndexNode[];
}

function eventStart(e: Event): number {
  switch (e.type) {
    case EVENT_ID.SCALAR: {
      // A quoted scalar starts at its opening quote.
      const quoted = e.style === SCALAR_STYLE.SINGLE_QUOTED ||
        e.style === SCALAR_STYLE.DOUBLE_QUOTED;
      const value = quoted ? e.valueStart - 1 : e.valueStart;
      return [e.anchorStart, e.tagStart, value].find((n) => n >= 0) ?? value;
    }
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return [e.anchorStart, e.tagStart, e.start].find((n) => n >= 0) ?? e.start;
    case EVENT_ID.ALIAS:
      return Math.max(0, e.anchorStart - 1); // the `*`
    default:
      return 0;
  }
}

/** The location index of the first document, built from the parser's events in one pass. */
function buildIndex(events: readonly Event[], text: string): IndexNode | undefined {
  type Open = IndexNode & { pendingKey?: { name: string; start: number } | null };
  const stack: Open[] = [];
  let root: IndexNode | undefined;
  const attach = (node: IndexNode, keyName?: string) => {
    const parent = stack[stack.length - 1];
    if (parent === undefined) {
      root ??= node;
      return;
    }
    if (parent.items) {
      parent.items.push(node);
      return;
    }
    if (parent.keys) {
      if (parent.pendingKey === undefined || parent.pendingKey === null) {
        parent.pendingKey = keyName === undefined
          ? { name: "\0complex", start: node.start }
          : { name: keyName, start: node.start };
        return;
      }
      const { name, start } = parent.pendingKey;
      if (!parent.keys.has(name)) parent.keys.set(name, { keyStart: start, value: node });
      parent.pendingKey = null;
    }
  };
  for (const e of events) {
    if (e.type === EVENT_ID.DOCUMENT) {
      if (root !== undefined) break; // only the first document is a layer
      continue;
    }
    if (e.type === EVENT_ID.POP) {
      const done = stack.pop();
      if (done !== undefined) attach(done);
      continue;
    }
    const start = eventStart(e);
    if (e.type === EVENT_ID.MAPPING) stack.push({ start, keys: new Map() });
    else if (e.type === EVENT_ID.SEQUENCE) stack.push({ start, items: [] });
    else if (e.type === EVENT_ID.SCALAR) attach({ start }, getScalarValue(text, e));
    else attach({ start });
  }
  return root;
}

function nodeAt(
  root: IndexNode | undefined,
  path: readonly (string | number)[],
): { keyStart?: number; node?: IndexNode } {
  let current = root;
  let keyStart: number | undefined;
  for (const seg of path) {
    if (current?.keys) {
      const entry = current.keys.get(String(seg));
      if (entry === undefined) return {};
      keyStart = entry.keyStart;
      current = entry.value;
    } else if (current?.items && /^\d+$/.test(String(seg))) {
      keyStart = undefined;
      current = current.items[Number(seg)];
    } else return {};
  }
  return { keyStart, node: current };
}

/** Values reachable from `value` with every alias expanded, memoised per shared object. */
function expandedSize(value: unknown, memo: Map<object, number>): number {
  if (typeof value !== "object" || value === null) return 1;
  const known = memo.get(value);
  if (known !== undefined) return known;
  memo.set(value, 1); // a cycle counts once
  let size = 1;
  for (const child of Object.values(value)) size += expandedSize(child, memo);
  memo.set(value, size);
  return size;
}

/** `duplicate key 'k' (first at …)` for the repeated key starting at `at`. */
function duplicateMessage(
  events: readonly Event[],
  text: string,
  at: number,
  where: (offset: number) => string,
): string {
  const repeat = events.find((e) => e.type === EVENT_ID.SCALAR && eventStart(e) === at);
  if (repeat === undefined || repeat.type !== EVENT_ID.SCALAR) return "duplicate key";
  const name = getScalarValue(text, repeat);
  // The innermost map holding `name` before the repeat is the one that repeats it.
  let first: number | undefined;
  let innermost = -1;
  const visit = (node: IndexNode | undefined) => {
    if (node === undefined || node.start > at) return;
    const entry = node.keys?.get(name);
    if (entry !== undefined && entry.keyStart < at && node.start > innermost) {
      innermost = node.start;
      first = entry.keyStart;
    }
    for (const child of node.keys?.values() ?? []) visit(child.value);
    for (const child of node.items ?? []) visit(child);
  };
  visit(buildIndex(events, text));
  return `duplicate key '${name}'${first === undefined ? "" : ` (first at ${where(first)})`}`;
}

function firstAlias(events: readonly Event[]): number {
  const alias = events.find((e) => e.type === EVENT_ID.ALIAS);
  return alias ? eventStart(alias) : 0;
}

function syntaxProblem(message: string, location: string): FileProblem {
  return { severity: "error", code: "config.yaml_syntax", message, location };
}

/** The js-yaml error reason without its own position suffix. */
function reasonOf(error: YAMLException): string {
  return error.reason.replace(/ \(\d+:\d+\)$/, "");
}

/** Events and the first document's value, or the problem that stopped them. */
function parse(
  text: string,
  where: (offset: number) => string,
): { events?: Event[]; value?: unknown; problem?: FileProblem } {
  let events: Event[];
  try {
    events = parseEvents(text, { maxDepth: MAX_DEPTH });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    return { problem: syntaxProblem(reasonOf(error), where(error.mark?.position ?? 0)) };
  }
  let docs: unknown[];
  try {
    docs = constructFromEvents(events, { source: text, schema: CORE_SCHEMA });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    const at = error.mark?.position ?? 0;
    const message = /duplicated mapping key/.test(error.reason)
      ? duplicateMessage(events, text, at, where)
      : reasonOf(error);
    return { problem: syntaxProblem(message, where(at)) };
  }
  if (docs.length > 1) {
    return { problem: syntaxProblem("more than one YAML document; a layer is one mapping", "") };
  }
  const value = docs[0];
  const hasAlias = events.some((e) => e.type === EVENT_ID.ALIAS);
  if (hasAlias) {
    const unique = new Map<object, number>();
    const size = expandedSize(value, unique);
    if (size > unique.size * 10 + MAX_ALIAS_EXPANSION) {
      return {
        problem: syntaxProblem(
          `aliases expand this document to ${size} values (a YAML alias bomb); refused`,
          where(firstAlias(events)),
        ),
      };
    }
  }
  return { events, value };
}

/**
 * Parses YAML text into a layer. Syntax errors, duplicate keys, alias bombs and a
 * non-mapping document are reported as problems with `file:line:col`; the layer is then
 * empty.
 */
export function parseYamlLayer(
  text: string,
  label: string,
  file?: string,
): { layer: YamlLayer; problems: FileProblem[] } {
  const shown = file ?? label;
  const lines = new LinePositions(text);
  const where = (offset: number) => {
    const { line, col } = lines.at(offset);
    return `${shown}:${line}:${col}`;
  };
  const parsed = parse(text, where);
  let index: IndexNode | undefined;
  let indexed = false;
  const locate = (path: readonly (string | number)[], key = false) => {
    if (parsed.events === undefined) return shown;
    if (!indexed) {
      index = buildIndex(parsed.events, text);
      indexed = true;
    }
    const found = nodeAt(index, path);
    const offset = key
      ? (found.keyStart ?? found.node?.start)
      : (found.node?.start ?? found.keyStart);
    return offset === undefined ? shown : where(offset);
  };
  const problems: FileProblem[] = [];
  if (parsed.problem) {
    problems.push(
      parsed.problem.location === "" ? { ...parsed.problem, location: shown } : parsed.problem,
    );
  }
  let raw: Record<string, unknown> = {};
  if (problems.length === 0) {
    const value = parsed.value;
    if (value === null || value === undefined) raw = {};
    else if (typeof value === "object" && !Array.isArray(value)) {
      raw = value as Record<string, unknown>;
    } else {
      problems.push({
        severity: "error",
        code: "config.not_a_mapping",
        message: "the document must be a mapping of keys to values",
        location: shown,
      });
    }
  }
  return { layer: { label, file, raw: problems.length === 0 ? raw : {}, locate }, problems };
}

/** A layer built in code (defaults, environment, flags): locations name the label. */
export function objectLayer(label: string, raw: Record<string, unknown>): YamlLayer {
  return { label, raw, locate: () => label };
}
