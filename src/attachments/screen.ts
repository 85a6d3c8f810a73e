// Screening: from a file's bytes and its declaration to the exact bytes that are encoded,
// hashed, stored and attested. Pure: images whole, text whole or a line range, text cut at
// whole lines when its line-numbered rendering passes the character limit.
import { sha256Hex } from "../crypto/mod.ts";
import { AttachmentError } from "./errors.ts";
import { MAX_TEXT_CHARS } from "./limits.ts";
import { renderNotebook } from "./notebook.ts";
import { sniffBytes } from "./sniff.ts";
import { type AttachmentSpec, rangeText } from "./spec.ts";

/** What an attachment is: media the CLI takes on its channel (image, document) or text. */
export type AttachmentKind = "image" | "document" | "text";

/** What a declared attachment becomes. */
export interface Screened {
  /** Image, document (PDF) or text (binary files are refused). */
  kind: AttachmentKind;
  /** Sniffed MIME type. */
  mime: string;
  /** The exact bytes that are encoded into the prompt. */
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`. */
  sha256: string;
  /** For text excerpts: the source line number of the first line of `bytes`. */
  firstLine?: number;
  /** `partial` when only part of what was asked for is attached. */
  outcome: "attached" | "partial";
  /** Why it is partial (null when attached whole). */
  reason: string | null;
}

/** Options of {@linkcode screenAttachment}. */
export interface ScreenOptions {
  /** Field path of the declaration, for errors (`run.attach[2]`). */
  field: string;
  /** Path shown in messages. */
  shownPath: string;
  /** Rendered-character limit of text (default {@linkcode MAX_TEXT_CHARS}). */
  maxTextChars?: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Number of Unicode code points of `text` (what "characters" means for the limit). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A low surrogate after a high one is the second half of one code point.
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = text.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) continue;
    }
    n++;
  }
  return n;
}

/** Lines of `text` without their `\n`, and whether the last one ended with `\n`. */
function splitLines(text: string): { lines: string[]; trailingNewline: boolean } {
  if (text === "") return { lines: [], trailingNewline: false };
  const lines = text.split("\n");
  const trailingNewline = lines[lines.length - 1] === "";
  if (trailingNewline) lines.pop();
  return { lines, trailingNewline };
}

/**
 * Screens UTF-8 text as text, whatever its first bytes look like (a text handed over by value
 * that starts with `GIF89a` or `%PDF-` is still text): whole or the declared line range, cut at
 * whole lines past the rendered-character limit.
 */
export function screenText(
  bytes: Uint8Array,
  spec: AttachmentSpec,
  options: ScreenOptions,
): Screened {
  const max = options.maxTextChars ?? MAX_TEXT_CHARS;
  const { lines, trailingNewline } = splitLines(utf8.decode(bytes));
  const count = lines.length;
  let first = 1;
  let last = count;
  const reasons: string[] = [];
  if (spec.fromLine !== undefined) {
    // `N-` runs to the end, whatever the file's length.
    const to = spec.toLine ?? count;
    if (spec.fromLine > count) {
      throw new AttachmentError(
        `${options.shownPath} has ${count} line(s); the range ${
          rangeText(spec)
        } starts past its end`,
        { location: options.field },
      );
    }
    first = spec.fromLine;
    last = Math.min(to, count);
    if (to > count) {
      reasons.push(`${options.shownPath} has ${count} lines; attached ${first}-${last}`);
    }
  }
  // The width of the widest line number bounds the rendering of any shorter cut.
  const width = String(Math.max(last, 1)).length;
  let rendered = 0;
  let cut = last;
  for (let n = first; n <= last; n++) {
    const lineChars = width + 3 + codePointLength(lines[n - 1]) + (n > first ? 1 : 0);
    if (rendered + lineChars > max) {
      if (n === first) {
        throw new AttachmentError(
          `line ${n} of ${options.shownPath} alone renders to more than ${max} characters, ` +
            `the limit of a text attachment`,
          { location: options.field, hint: "attach another line range" },
        );
      }
      cut = n - 1;
      reasons.push(
        `rendered text is over ${max} characters; attached lines ${first}-${cut} of ${first}-${last}`,
      );
      break;
    }
    rendered += lineChars;
  }
  // A cut line keeps its newline, as does the file's last line when the file had one.
  const excerpt = lines.slice(first - 1, cut).join("\n") +
    (cut < count || trailingNewline ? "\n" : "");
  const out = spec.fromLine === undefined && reasons.length === 0 ? bytes : encoder.encode(excerpt);
  const partial = reasons.length > 0;
  return {
    kind: "text",
    mime: "text/plain",
    bytes: out,
    sha256: sha256Hex(out),
    ...(spec.fromLine !== undefined || partial ? { firstLine: first } : {}),
    outcome: partial ? "partial" : "attached",
    reason: partial ? reasons.join("; ") : null,
  };
}

/**
 * Screens a declared attachment's file bytes: images and PDFs (by their magic numbers) whole,
 * UTF-8 text (a Jupyter notebook as its cells' text) whole or as the declared line range, cut
 * to whole lines when the rendering is over the limit (outcome `partial` with the reason).
 * Refuses binary files, a line range on an image or PDF and a range past the end with
 * `attach.invalid` and the field path.
 */
export function screenAttachment(
  bytes: Uint8Array,
  spec: AttachmentSpec,
  options: ScreenOptions,
): Screened {
  const sniffed = sniffBytes(bytes);
  if (sniffed.kind === "binary") {
    throw new AttachmentError(
      `${options.shownPath} is neither an image (PNG, JPEG, GIF, WebP), a PDF nor UTF-8 text`,
      { location: options.field },
    );
  }
  if (sniffed.kind === "image" || sniffed.kind === "document") {
    if (spec.fromLine !== undefined) {
      throw new AttachmentError(
        `${options.shownPath} is ${
          sniffed.kind === "image" ? "an image" : "a document"
        } (${sniffed.mime}); a line range applies to text only`,
        { location: options.field },
      );
    }
    return {
      kind: sniffed.kind,
      mime: sniffed.mime,
      bytes,
      sha256: sha256Hex(bytes),
      outcome: "attached",
      reason: null,
    };
  }
  // A Jupyter notebook is attached as its cells' text (the rendering is the attested bytes).
  const notebook = renderNotebook(utf8.decode(bytes));
  if (notebook !== undefined) return screenText(encoder.encode(notebook), spec, options);
  return screenText(bytes, spec, options);
}
