import { AttachmentError } from "./errors.ts";

/** An attachment as the operator declared it: a path and an optional line range. */
export interface AttachmentSpec {
  /** Path as given (resolved against the project root later). */
  path: string;
  /** First line (1-based, inclusive) of a text excerpt. */
  fromLine?: number;
  /** Last line (inclusive) of a text excerpt. */
  toLine?: number;
}

/**
 * Parses `path` or `path:FROM-TO` (`src/app.ts:40-80`, `log.txt:7`). A colon not followed by a
 * valid range is part of the path.
 */
export function parseAttachmentSpec(text: string, field: string): AttachmentSpec {
  if (text.trim() === "") throw new AttachmentError("empty attachment path", { location: field });
  const m = /^(.*):(\d+)(?:-(\d+))?$/.exec(text);
  if (!m) return { path: text };
  const from = Number(m[2]);
  const to = m[3] === undefined ? from : Number(m[3]);
  if (from < 1 || to < from) {
    throw new AttachmentError(
      `line range ${m[2]}${m[3] ? "-" + m[3] : ""} is not FROM-TO with 1 <= FROM <= TO`,
      {
        location: field,
      },
    );
  }
  return { path: m[1], fromLine: from, toLine: to };
}
