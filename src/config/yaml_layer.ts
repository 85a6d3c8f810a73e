import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { ConfigProblem } from "./errors.ts";

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

function nodeAt(doc: Document, path: readonly (string | number)[]): { key?: Node; value?: Node } {
  let current: unknown = doc.contents;
  let keyNode: Node | undefined;
  for (const seg of path) {
    if (isMap(current)) {
      const pair = current.items.find((p) =>
        isScalar(p.key) && String(p.key.value) === String(seg)
      );
      if (pair === undefined) return {};
      keyNode = pair.key as Node;
      current = pair.value;
    } else if (isSeq(current) && typeof seg === "number") {
      keyNode = undefined;
      current = current.items[seg];
    } else {
      return {};
    }
  }
  return { key: keyNode, value: (current ?? undefined) as Node | undefined };
}

/**
 * Parses YAML text into a layer. Syntax errors and a non-mapping document are reported as
 * problems with `file:line:col`; the layer is then empty.
 */
export function parseYamlLayer(
  text: string,
  label: string,
  file?: string,
): { layer: YamlLayer; problems: ConfigProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${file ?? label}:${line}:${col}`;
  };
  const locate = (path: readonly (string | number)[], key = false) => {
    const found = nodeAt(doc, path);
    const node = key ? (found.key ?? found.value) : (found.value ?? found.key);
    const range = node?.range;
    return range ? where(range[0]) : (file ?? label);
  };
  const problems: ConfigProblem[] = [];
  for (const e of doc.errors) {
    problems.push({
      severity: "error",
      code: "config.yaml_syntax",
      message: e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, ""),
      location: where(e.pos[0]),
    });
  }
  let raw: Record<string, unknown> = {};
  if (problems.length === 0) {
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) {
      raw = {};
    } else if (typeof value === "object" && !Array.isArray(value)) {
      raw = value as Record<string, unknown>;
    } else {
      problems.push({
        severity: "error",
        code: "config.not_a_mapping",
        message: "the document must be a mapping of keys to values",
        location: file ?? label,
      });
    }
  }
  return { layer: { label, file, raw: problems.length === 0 ? raw : {}, locate }, problems };
}

/** A layer built in code (defaults, environment, flags): locations name the label. */
export function objectLayer(label: string, raw: Record<string, unknown>): YamlLayer {
  return { label, raw, locate: () => label };
}
