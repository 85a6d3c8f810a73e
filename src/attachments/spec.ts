// The `PATH[:RANGE]` form of a declared attachment (`--attach`, plan steps, the task server):
// the path, and for a text excerpt its 1-based inclusive line range.
import { AttachmentError } from "./errors.ts";

/** An attachment as the operator declared it: a path and an optional line range. */
export interface AttachmentSpec {
  /** Path as given (resolved against the project root later). */
  path: string;
  /** First line (1-based, inclusive) of a text excerpt. */
  fromLine?: number;
  /** Last line (inclusive) of a text excerpt; undefined with `fromLine`: to the end (`:N-`). */
  toLine?: number;
}

/**
 * Parses `path`, `path:FROM-TO`, `path:N` (one line) or `path:N-` (from N to the end):
 * `src/app.ts:40-80`, `log.txt:7`, `log.txt:120-`. A colon not followed by a valid range is
 * part of the path (`name:with:colons`). One trailing `:` ends the path and means "no range",
 * so a file whose name looks like a range is written `log:7:` (the file `log:7`).
 */
export function parseAttachmentSpec(text: string, field: string): AttachmentSpec {
  if (text.trim() === "") throw new AttachmentError("empty attachment path", { location: field });
  if (text.endsWith(":")) {
    const path = text.slice(0, -1);
    if (path.trim() === "") {
      throw new AttachmentError("empty attachment path", { location: field });
    }
    return { path };
  }
  const m = /^(.+):(\d+)(-(\d+)?)?$/.exec(text);
  if (!m) return { path: text };
  const from = Number(m[2]);
  const open = m[3] === "-";
  const to = open ? undefined : m[4] === undefined ? from : Number(m[4]);
  if (!Number.isSafeInteger(from) || from < 1 || (to !== undefined && to < from)) {
    throw new AttachmentError(
      `line range ${m[2]}${m[3] ?? ""} is not FROM-TO, N or N- with 1 <= FROM <= TO`,
      {
        location: field,
        hint: "write a trailing ':' (log:7:) to attach a file named like a range",
      },
    );
  }
  return to === undefined
    ? { path: m[1], fromLine: from }
    : { path: m[1], fromLine: from, toLine: to };
}

/** The range of a spec as `FROM-TO`, `FROM-` (to the end) or "" (the whole file). */
export function rangeText(spec: AttachmentSpec): string {
  if (spec.fromLine === undefined) return "";
  return `${spec.fromLine}-${spec.toLine ?? ""}`;
}
