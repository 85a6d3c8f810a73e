// Redaction of secret values a run handed out (connection secrets minted into an agent's
// environment, docs/FLEET.md): every record the run writes — agent logs, task results, audit
// details, ledger rows, facts — passes through one redactor, which replaces each registered
// value, as written and in base64/base64url/hex, by a marker naming the secret, never its
// bytes. Agent output arrives in chunks, so the stream form holds back the bytes a secret
// split across two chunks could still begin with.
import { toBase64, toBase64Url, toHex } from "../canonical/mod.ts";
import { writeFileAtomic } from "./files.ts";

/** Secrets shorter than this cannot be searched for or redacted reliably (too many accidental matches). */
export const MIN_SECRET_LENGTH = 12;

/** The textual forms a secret is searched in: as written, base64 (unpadded), base64url, hex. */
export function secretForms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  return [
    ...new Set([value, toBase64(bytes).replace(/=+$/, ""), toBase64Url(bytes), toHex(bytes)]),
  ];
}

interface Needle {
  bytes: Uint8Array;
  text: string;
  marker: Uint8Array;
  markerText: string;
}

const encoder = new TextEncoder();

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  outer: for (
    let i = haystack.indexOf(first, from);
    i >= 0 && i <= haystack.length - needle.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Replaces every occurrence of each needle (longest first) in `bytes`. */
function replaceAll(bytes: Uint8Array, needles: readonly Needle[]): Uint8Array {
  let out = bytes;
  for (const n of needles) {
    let at = indexOf(out, n.bytes, 0);
    if (at < 0) continue;
    const parts: Uint8Array[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(out.subarray(from, at), n.marker);
      from = at + n.bytes.length;
      at = indexOf(out, n.bytes, from);
    }
    parts.push(out.subarray(from));
    const joined = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let o = 0;
    for (const p of parts) {
      joined.set(p, o);
      o += p.length;
    }
    out = joined;
  }
  return out;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A redactor of byte chunks: feed each chunk, then `end()` for what it held back. */
export interface RedactingStream {
  /** The redacted bytes that can be written now. */
  push(chunk: Uint8Array): Uint8Array;
  /** The redacted rest. */
  end(): Uint8Array;
}

/**
 * The values a run must keep out of its records. Values register as they are minted; every
 * copy of text the run writes goes through {@linkcode SecretRedactor.text},
 * {@linkcode SecretRedactor.json} or a {@linkcode SecretRedactor.stream}.
 *
 * @example
 * ```ts
 * const r = new SecretRedactor();
 * r.add("ghp_0123456789abcdef", "connection prod-github");
 * r.text("token ghp_0123456789abcdef"); // "token [REDACTED: connection prod-github]"
 * ```
 */
export class SecretRedactor {
  #needles: Needle[] = [];
  readonly #secrets = new Map<string, string>();

  /** Registers a value (and its encoded forms) under a label that may be shown. */
  add(value: string, label: string): void {
    if (value === "" || this.#secrets.has(value)) return;
    this.#secrets.set(value, label);
    const markerText = `[REDACTED: ${label}]`;
    for (const form of secretForms(value)) {
      this.#needles.push({
        bytes: encoder.encode(form),
        text: form,
        marker: encoder.encode(markerText),
        markerText,
      });
    }
    // Longest first: a value that contains another is replaced whole.
    this.#needles.sort((a, b) => b.bytes.length - a.bytes.length);
  }

  /** How many values are registered. */
  get size(): number {
    return this.#secrets.size;
  }

  /** The registered values with their labels (for the `secrets` merge gate). */
  secrets(): { name: string; value: string }[] {
    return [...this.#secrets].map(([value, name]) => ({ name, value }));
  }

  /** `text` with every registered value replaced by its marker. */
  text(text: string): string {
    let out = text;
    for (const n of this.#needles) {
      if (out.includes(n.text)) out = out.split(n.text).join(n.markerText);
    }
    return out;
  }

  /** `bytes` with every registered value replaced by its marker (the same array when clean). */
  bytes(bytes: Uint8Array): Uint8Array {
    return this.#needles.length === 0 ? bytes : replaceAll(bytes, this.#needles);
  }

  /**
   * A copy of a JSON-like value with every string (keys too) redacted, through arrays and
   * plain objects (other objects — bytes, class instances — are kept as they are).
   */
  json<T>(value: T): T {
    return this.#needles.length === 0 ? value : this.#json(value) as T;
  }

  #json(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.#json(v));
    if (value !== null && typeof value === "object" && isPlain(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.text(k)] = this.#json(v);
      return out;
    }
    return value;
  }

  /**
   * A chunk redactor. It holds back the last bytes of each chunk that could begin a value not
   * yet complete (one byte less than the longest form); values added later apply from then on.
   */
  stream(): RedactingStream {
    let held = new Uint8Array(0);
    return {
      push: (chunk) => {
        if (this.#needles.length === 0 && held.length === 0) return chunk;
        const joined = new Uint8Array(held.length + chunk.length);
        joined.set(held);
        joined.set(chunk, held.length);
        const clean = this.bytes(joined);
        const keep = Math.min(clean.length, Math.max(0, this.#longest() - 1));
        held = clean.slice(clean.length - keep);
        return clean.subarray(0, clean.length - keep);
      },
      end: () => {
        const rest = this.bytes(held);
        held = new Uint8Array(0);
        return rest;
      },
    };
  }

  #longest(): number {
    return this.#needles[0]?.bytes.length ?? 0;
  }
}

/** Files larger than this are left as they are by {@linkcode scrubSecrets} (and counted). */
export const MAX_SCRUB_BYTES = 16 * 1024 * 1024;

/**
 * Rewrites every regular file under `dir` (symlinks not followed) that holds a registered
 * value, with the value replaced by its marker: an agent's private HOME after it ended (its
 * CLI's own transcripts, caches, notes). Returns how many files were rewritten and how many
 * were too large to read.
 */
export async function scrubSecrets(
  dir: string,
  redactor: SecretRedactor,
): Promise<{ rewritten: number; tooLarge: number }> {
  const out = { rewritten: 0, tooLarge: 0 };
  if (redactor.size === 0) return out;
  const walk = async (folder: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(folder));
    } catch {
      return; // gone or unreadable: nothing of ours to scrub
    }
    for (const e of entries) {
      const path = `${folder}/${e.name}`;
      if (e.isDirectory) await walk(path);
      if (!e.isFile) continue;
      const info = await Deno.lstat(path).catch(() => undefined);
      if (info === undefined || !info.isFile) continue;
      if (info.size > MAX_SCRUB_BYTES) {
        out.tooLarge++;
        continue;
      }
      const bytes = await Deno.readFile(path).catch(() => undefined);
      if (bytes === undefined) continue;
      const clean = redactor.bytes(bytes);
      if (clean === bytes || sameBytes(clean, bytes)) continue;
      await writeFileAtomic(path, clean, { mode: (info.mode ?? 0o600) & 0o777 });
      out.rewritten++;
    }
  };
  await walk(dir);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
