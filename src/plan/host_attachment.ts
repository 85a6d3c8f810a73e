// Host-held attachments (the agent-core design's user attachments): text or an image that the
// plan or the task server hands over by value — `{name, text}` or `{name, image: {mime,
// base64}}` — instead of a path to a file. A plan file and a task request may come from
// someone the operator does not trust, so the rules are strict and checked where the value
// enters: path-free names, an image MIME allowlist matched against the bytes, strict base64,
// size caps per attachment and per task, at most 20 per task. Pure: every problem is returned
// with its field path below the attachment list (`[3, "image", "mime"]`).
import { fromBase64 } from "../canonical/mod.ts";
import { typeName } from "./_reader.ts";

/** A text handed over by value. */
export interface HostTextAttachment {
  /** Name shown to the agent (no path: no `/`, `\`, control characters). */
  name: string;
  /** The text (UTF-8); its line-numbered rendering is cut at whole lines past the limit. */
  text: string;
}

/** An image handed over by value. */
export interface HostImageAttachment {
  /** Name shown to the agent (no path). */
  name: string;
  /** The image: its MIME type (one of {@linkcode HOST_IMAGE_TYPES}) and standard base64. */
  image: { mime: string; base64: string };
}

/** An attachment handed over by value. */
export type HostAttachment = HostTextAttachment | HostImageAttachment;

/** A declared attachment: `PATH[:RANGE]` of a file in the project, or one held by value. */
export type AttachmentDeclaration = string | HostAttachment;

/** Image types a host-held image may declare (the bytes must be that type). */
export const HOST_IMAGE_TYPES: readonly string[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
];

/** Longest name of a host-held attachment, in code points. */
export const MAX_HOST_NAME_CHARS = 200;

/** Largest text of one host-held text attachment (UTF-8 bytes; the rendering is cut later). */
export const MAX_HOST_TEXT_BYTES = 1024 * 1024;

/**
 * Most bytes (decoded images and texts together) held by value in one task: they live in the
 * task record, which every change of the task writes again; larger files belong in the
 * repository, attached by path.
 */
export const MAX_HOST_BYTES_PER_TASK = 8 * 1024 * 1024;

/** The agent-core design's name for `attach.invalid` (an alias: same meaning, same exit). */
export const ATTACH_INVALID_ALIASES: readonly string[] = ["config.user_attachment_invalid"];

/** One problem of a declaration list: the path below the list and what is wrong. */
export interface DeclarationProblem {
  /** Path below the attachment list: `[3]`, `[3, "image", "mime"]`. */
  path: (string | number)[];
  /** What is wrong. */
  message: string;
  /** A suggestion, when there is one. */
  hint?: string;
}

/** An image type recognised by its magic number. */
export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The image type of `bytes` by its magic number (PNG, JPEG, GIF, WebP), or undefined. */
export function imageMimeOf(bytes: Uint8Array): ImageMime | undefined {
  const at = (prefix: readonly number[], offset = 0) =>
    bytes.length >= offset + prefix.length && prefix.every((b, i) => bytes[offset + i] === b);
  if (at([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (at([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (
    at([0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61
  ) {
    return "image/gif";
  }
  if (at([0x52, 0x49, 0x46, 0x46]) && at([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return undefined;
}

/** Why a host-held attachment's name is refused, or undefined. */
export function hostNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "must not be empty";
  if ([...name].length > MAX_HOST_NAME_CHARS) {
    return `is longer than ${MAX_HOST_NAME_CHARS} characters`;
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) {
    return "must not contain control characters or line breaks";
  }
  if (/[/\\]/.test(name)) return "is a name, not a path: no '/' or '\\'";
  if (name === "." || name === "..") return "is a name, not a path: not '.' or '..'";
  if (name !== name.trim()) return "must not start or end with white space";
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const encoder = new TextEncoder();

/** What checking one host-held declaration gave: the value and its size, or problems. */
interface HostCheck {
  attachment?: HostAttachment;
  bytes: number;
  problems: DeclarationProblem[];
}

function checkImage(value: unknown, problems: DeclarationProblem[]): number | undefined {
  if (!isRecord(value)) {
    problems.push({ path: ["image"], message: `expected a mapping, got ${typeName(value)}` });
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key !== "mime" && key !== "base64") {
      problems.push({ path: ["image", key], message: `unknown field '${key}'` });
    }
  }
  const { mime, base64 } = value;
  let ok = true;
  if (typeof mime !== "string" || !HOST_IMAGE_TYPES.includes(mime)) {
    problems.push({
      path: ["image", "mime"],
      message: typeof mime === "string"
        ? `'${mime.slice(0, 64)}' is not one of ${HOST_IMAGE_TYPES.join(", ")}`
        : mime === undefined
        ? "required"
        : `expected a string, got ${typeName(mime)}`,
    });
    ok = false;
  }
  if (typeof base64 !== "string") {
    problems.push({
      path: ["image", "base64"],
      message: base64 === undefined ? "required" : `expected a string, got ${typeName(base64)}`,
    });
    return undefined;
  }
  // Decoded size first: a huge value is refused without decoding it.
  const size = Math.floor(base64.length / 4) * 3;
  if (size > MAX_HOST_BYTES_PER_TASK) {
    problems.push({
      path: ["image", "base64"],
      message: `the image is over ${MAX_HOST_BYTES_PER_TASK / (1024 * 1024)} MiB`,
      hint: "put the file in the repository and attach its path",
    });
    return undefined;
  }
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(base64);
  } catch {
    problems.push({
      path: ["image", "base64"],
      message: "is not standard padded base64 (A-Z a-z 0-9 + /, no white space)",
      hint: base64.startsWith("data:") ? "drop the 'data:…;base64,' prefix" : undefined,
    });
    return undefined;
  }
  const actual = imageMimeOf(bytes);
  if (ok && actual !== mime) {
    problems.push({
      path: ["image", "mime"],
      message: actual === undefined
        ? `declared ${mime}, but the bytes are not a PNG, JPEG, GIF or WebP image`
        : `declared ${mime}, but the bytes are ${actual}`,
    });
    return undefined;
  }
  return ok ? bytes.length : undefined;
}

/** Checks one declaration held by value: keys, name, and its text or image. */
function checkHost(value: Record<string, unknown>): HostCheck {
  const problems: DeclarationProblem[] = [];
  for (const key of Object.keys(value)) {
    if (key !== "name" && key !== "text" && key !== "image") {
      problems.push({
        path: [key],
        message: `unknown field '${key}'`,
        hint: "a held attachment is {name, text} or {name, image: {mime, base64}}",
      });
    }
  }
  const { name } = value;
  if (typeof name !== "string") {
    problems.push({
      path: ["name"],
      message: name === undefined ? "required" : `expected a string, got ${typeName(name)}`,
    });
  } else {
    const bad = hostNameProblem(name);
    if (bad !== undefined) problems.push({ path: ["name"], message: bad });
  }
  const hasText = "text" in value;
  const hasImage = "image" in value;
  if (hasText === hasImage) {
    problems.push({
      path: [],
      message: hasText ? "has both text and image; give one" : "needs text or image",
      hint: "{name, text} or {name, image: {mime, base64}}",
    });
    return { bytes: 0, problems };
  }
  let bytes: number | undefined;
  if (hasText) {
    const text = value.text;
    if (typeof text !== "string") {
      problems.push({ path: ["text"], message: `expected a string, got ${typeName(text)}` });
    } else if (
      text.length > MAX_HOST_TEXT_BYTES || encoder.encode(text).length > MAX_HOST_TEXT_BYTES
    ) {
      problems.push({
        path: ["text"],
        message: `is over ${MAX_HOST_TEXT_BYTES / (1024 * 1024)} MiB`,
        hint: "put the file in the repository and attach its path",
      });
    } else if (text.includes("\0")) {
      problems.push({ path: ["text"], message: "must not contain NUL characters" });
    } else {
      bytes = encoder.encode(text).length;
    }
  } else {
    bytes = checkImage(value.image, problems);
  }
  if (problems.length > 0 || bytes === undefined) return { bytes: 0, problems };
  const attachment: HostAttachment = hasText
    ? { name: name as string, text: value.text as string }
    : {
      name: name as string,
      image: {
        mime: (value.image as Record<string, string>).mime,
        base64: (value.image as Record<string, string>).base64,
      },
    };
  return { attachment, bytes, problems };
}

/** Options of {@linkcode checkDeclarations}. */
export interface DeclarationCheckOptions {
  /** Why a path declaration is refused (a plan's relative-path rule), or undefined. */
  pathProblem?: (path: string) => string | undefined;
  /** Most declarations (default 20). */
  max?: number;
}

/** What {@linkcode checkDeclarations} found: the valid declarations and every problem. */
export interface DeclarationCheck {
  /** Declarations that passed, in order. */
  declarations: AttachmentDeclaration[];
  /** Every problem, with its path below the list. */
  problems: DeclarationProblem[];
}

/**
 * Checks a declared attachment list with the agent-core rules: each item a non-empty path or
 * a host-held `{name, text}` / `{name, image: {mime, base64}}`; names path-free and unique;
 * image types from {@linkcode HOST_IMAGE_TYPES} and equal to what the bytes are; strict base64;
 * at most `max` items and {@linkcode MAX_HOST_BYTES_PER_TASK} held by value.
 */
export function checkDeclarations(
  list: readonly unknown[],
  options: DeclarationCheckOptions = {},
): DeclarationCheck {
  const max = options.max ?? 20;
  const problems: DeclarationProblem[] = [];
  const declarations: AttachmentDeclaration[] = [];
  if (list.length > max) {
    problems.push({ path: [], message: `has ${list.length} attachments; at most ${max} per task` });
  }
  const names = new Map<string, number>();
  let held = 0;
  list.forEach((item, i) => {
    if (typeof item === "string") {
      const bad = item === "" ? "must not be empty" : options.pathProblem?.(item);
      if (bad !== undefined) problems.push({ path: [i], message: bad });
      else declarations.push(item);
      return;
    }
    if (!isRecord(item)) {
      problems.push({
        path: [i],
        message: `expected a file path or a {name, text} / {name, image} mapping, got ${
          typeName(item)
        }`,
      });
      return;
    }
    const checked = checkHost(item);
    problems.push(...checked.problems.map((p) => ({ ...p, path: [i, ...p.path] })));
    if (checked.attachment === undefined) return;
    const earlier = names.get(checked.attachment.name);
    if (earlier !== undefined) {
      problems.push({
        path: [i, "name"],
        message: `'${checked.attachment.name}' is already the name of attachments[${earlier}]`,
      });
      return;
    }
    names.set(checked.attachment.name, i);
    held += checked.bytes;
    if (held > MAX_HOST_BYTES_PER_TASK) {
      problems.push({
        path: [i],
        message: `the attachments held by value pass ${
          MAX_HOST_BYTES_PER_TASK / (1024 * 1024)
        } MiB for this task`,
        hint: "put large files in the repository and attach their paths",
      });
      return;
    }
    declarations.push(checked.attachment);
  });
  return { declarations, problems };
}

/** The bytes a host-held attachment carries: the text as UTF-8, or the decoded image. */
export function hostBytes(a: HostAttachment): Uint8Array {
  return "text" in a ? encoder.encode(a.text) : fromBase64(a.image.base64);
}
