/**
 * Reading a configuration (or plan) file before it is parsed: a size cap checked before the
 * bytes are read, and strict UTF-8 (an invalid byte is refused with its offset instead of
 * becoming U+FFFD and flowing on into task prompts and the audit chain).
 */
import { invalidUtf8Offset } from "../canonical/mod.ts";
import { readUpTo } from "../io/mod.ts";
import { ConfigError, type FileProblem } from "./errors.ts";

/** Largest configuration or plan file accepted (4 MiB); real ones are a few KiB. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Bytes → text, or the problem naming the first invalid byte. Pure. */
export function decodeConfigBytes(
  bytes: Uint8Array,
  shown: string,
): { text: string } | { problem: FileProblem } {
  if (bytes.length > MAX_CONFIG_BYTES) return { problem: tooLarge(shown, bytes.length) };
  const bad = invalidUtf8Offset(bytes);
  if (bad !== undefined) {
    return {
      problem: {
        severity: "error",
        code: "config.not_utf8",
        message: `byte offset ${bad} is not valid UTF-8; configuration and plan files must be ` +
          "UTF-8 text",
        location: shown,
      },
    };
  }
  return { text: decoder.decode(bytes) };
}

function tooLarge(shown: string, size: number): FileProblem {
  return {
    severity: "error",
    code: "config.too_large",
    message: `${size} bytes is over the ${MAX_CONFIG_BYTES}-byte limit of a configuration or ` +
      "plan file; refused unread",
    location: shown,
  };
}

/** The whole file, or undefined once it passes the cap (it may have grown since the stat). */
async function readCapped(file: Deno.FsFile, sizeHint: number): Promise<Uint8Array | undefined> {
  const first = await readUpTo(file, sizeHint + 1);
  if (first.length <= sizeHint) return first;
  if (first.length > MAX_CONFIG_BYTES) return undefined;
  const chunks: Uint8Array[] = [first];
  let total = first.length;
  for (;;) {
    const chunk = await readUpTo(file, 64 * 1024);
    if (chunk.length === 0) break;
    total += chunk.length;
    if (total > MAX_CONFIG_BYTES) return undefined;
    chunks.push(chunk);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Reads a configuration or plan file: undefined when it does not exist, the text, or the
 * problem (too large, not UTF-8). Another read failure is a {@linkcode ConfigError}.
 */
export async function readConfigFile(
  path: string,
  shown: string,
): Promise<{ text: string } | { problem: FileProblem } | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new ConfigError("config.unreadable", `cannot read ${shown}: ${(error as Error).message}`);
  }
  try {
    const info = await file.stat();
    if (!info.isFile) {
      throw new ConfigError("config.unreadable", `cannot read ${shown}: not a regular file`);
    }
    if (info.size > MAX_CONFIG_BYTES) return { problem: tooLarge(shown, info.size) };
    const bytes = await readCapped(file, info.size);
    return bytes === undefined
      ? { problem: tooLarge(shown, MAX_CONFIG_BYTES + 1) }
      : decodeConfigBytes(bytes, shown);
  } finally {
    file.close();
  }
}
