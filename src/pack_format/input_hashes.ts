// The manifest's `input_hashes` (member name → `sha256:` hex, one per member: a million at a
// million entries, ~160 MB of JSON) read without making a JavaScript object of it. The
// manifest's top level is walked over its bytes; the `input_hashes` value is scanned in place
// in its strict canonical form (printable ASCII names without escapes, in code point order,
// each with `"sha256:<64 lowercase hex>"`) and kept as offsets into the bytes. Anything else
// (an escape, another value, a name out of order …) makes the scan give up, and the manifest
// is parsed whole instead, which words the problem. Pure.

/** The manifest's `input_hashes`, in code point order of the names. */
export interface InputHashes {
  /** How many members it lists. */
  readonly count: number;
  /** The i-th name. */
  name(i: number): string;
  /** The i-th hash, `sha256:` + 64 lowercase hex. */
  hash(i: number): string;
  /** Writes the i-th hash's 32 bytes into `out` at `at`. */
  digestInto(i: number, out: Uint8Array, at: number): void;
}

const HEX_VALUE = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX_VALUE[0x30 + c] = c;
for (let c = 0; c < 6; c++) HEX_VALUE[0x61 + c] = 10 + c;

function hexDigestInto(hex: string, out: Uint8Array, at: number): void {
  for (let k = 0; k < 32; k++) {
    out[at + k] = (HEX_VALUE[hex.charCodeAt(7 + 2 * k)] << 4) |
      HEX_VALUE[hex.charCodeAt(8 + 2 * k)];
  }
}

/** {@linkcode InputHashes} over pairs already checked (the whole-manifest parse). */
export function inputHashesOf(pairs: Iterable<[string, string]>): InputHashes {
  const sorted = [...pairs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    count: sorted.length,
    name: (i) => sorted[i][0],
    hash: (i) => sorted[i][1],
    digestInto: (i, out, at) => hexDigestInto(sorted[i][1], out, at),
  };
}

// `"sha256:` before the 64 hex digits of a value, and where they start after a name's quote.
const VALUE_PREFIX = new TextEncoder().encode(':"sha256:');
const HEX_AFTER_QUOTE = 1 + VALUE_PREFIX.length;
const LONGEST_NAME = 4096;
const ASCII = new TextDecoder();

/** Names and hashes as offsets into the manifest's bytes (kept alive by this object). */
class ScannedInputHashes implements InputHashes {
  #bytes: Uint8Array;
  #starts: Uint32Array;
  #lengths: Uint16Array;
  readonly count: number;

  constructor(bytes: Uint8Array, starts: Uint32Array, lengths: Uint16Array, count: number) {
    this.#bytes = bytes;
    this.#starts = starts;
    this.#lengths = lengths;
    this.count = count;
  }

  name(i: number): string {
    const at = this.#starts[i];
    // Printable ASCII (the scan takes nothing else), so its UTF-8 decoding is its text; one
    // native call instead of spreading the bytes as ~80 arguments (a list per name).
    return ASCII.decode(this.#bytes.subarray(at, at + this.#lengths[i]));
  }

  hash(i: number): string {
    const at = this.#starts[i] + this.#lengths[i] + HEX_AFTER_QUOTE;
    return "sha256:" +
      String.fromCharCode.apply(null, this.#bytes.subarray(at, at + 64) as unknown as number[]);
  }

  digestInto(i: number, out: Uint8Array, at: number): void {
    const from = this.#starts[i] + this.#lengths[i] + HEX_AFTER_QUOTE;
    const b = this.#bytes;
    for (let k = 0; k < 32; k++) {
      out[at + k] = (HEX_VALUE[b[from + 2 * k]] << 4) | HEX_VALUE[b[from + 2 * k + 1]];
    }
  }
}

/**
 * Scans `{"name":"sha256:<hex>",…}` from `at`; returns the hashes and the offset after `}`, or
 * undefined when the value is not in the strict form.
 */
function scanStrictObject(
  bytes: Uint8Array,
  at: number,
): { hashes: InputHashes; end: number } | undefined {
  if (bytes[at] !== 0x7b) return undefined;
  let starts = new Uint32Array(1024);
  let lengths = new Uint16Array(1024);
  let count = 0;
  let i = at + 1;
  if (bytes[i] === 0x7d) {
    return { hashes: new ScannedInputHashes(bytes, starts, lengths, 0), end: i + 1 };
  }
  for (;;) {
    if (bytes[i] !== 0x22) return undefined;
    const start = ++i;
    // Printable ASCII without `"` or `\`: exactly its own canonical print.
    while (i < bytes.length && bytes[i] !== 0x22) {
      const c = bytes[i];
      if (c < 0x20 || c > 0x7e || c === 0x5c) return undefined;
      i++;
    }
    const length = i - start;
    if (i >= bytes.length || length > LONGEST_NAME) return undefined;
    if (count > 0 && !nameAfter(bytes, starts[count - 1], lengths[count - 1], start, length)) {
      return undefined; // out of code point order, or twice
    }
    for (let k = 0; k < VALUE_PREFIX.length; k++) {
      if (bytes[i + 1 + k] !== VALUE_PREFIX[k]) return undefined;
    }
    const hex = i + HEX_AFTER_QUOTE;
    for (let k = 0; k < 64; k++) if (HEX_VALUE[bytes[hex + k]] < 0) return undefined;
    if (bytes[hex + 64] !== 0x22) return undefined;
    if (count === starts.length) {
      const s = new Uint32Array(count * 2);
      s.set(starts);
      starts = s;
      const l = new Uint16Array(count * 2);
      l.set(lengths);
      lengths = l;
    }
    starts[count] = start;
    lengths[count] = length;
    count++;
    i = hex + 65;
    if (bytes[i] === 0x7d) {
      return { hashes: new ScannedInputHashes(bytes, starts, lengths, count), end: i + 1 };
    }
    if (bytes[i] !== 0x2c) return undefined;
    i++;
  }
}

/** True when the name at `b` comes strictly after the name at `a` (bytes: ASCII order). */
function nameAfter(bytes: Uint8Array, a: number, aLen: number, b: number, bLen: number): boolean {
  const n = Math.min(aLen, bLen);
  for (let k = 0; k < n; k++) {
    const d = bytes[b + k] - bytes[a + k];
    if (d !== 0) return d > 0;
  }
  return bLen > aLen;
}

/** Where the JSON string starting at `at` ends (after its quote), or -1. */
function skipString(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  while (i < bytes.length && bytes[i] !== 0x22) i += bytes[i] === 0x5c ? 2 : 1;
  return i >= bytes.length ? -1 : i + 1;
}

/**
 * Where the JSON value starting at `at` ends, or -1 when it runs out. Only segments the bytes:
 * the small rest of the manifest is parsed strictly afterwards.
 */
function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === 0x22) return skipString(bytes, at);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let i = at; i < bytes.length;) {
      const c = bytes[i];
      if (c === 0x22) {
        i = skipString(bytes, i);
        if (i < 0) return -1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
      i++;
    }
    return -1;
  }
  let i = at;
  while (i < bytes.length && bytes[i] !== 0x2c && bytes[i] !== 0x7d) i++;
  return i === at || i >= bytes.length ? -1 : i;
}

/** A top-level member of the manifest: its key and the byte span of `"key":value`. */
export interface TopMember {
  /** The key (escape-free ASCII). */
  key: string;
  /** Offset of the key's opening quote. */
  start: number;
  /** Offset of the value. */
  valueStart: number;
  /** Offset just after the value. */
  end: number;
}

/**
 * The manifest's top-level members and its `input_hashes` scanned in place, or undefined
 * when the bytes are not a plain object of escape-free keys with a strict `input_hashes` (the
 * caller then parses the whole manifest).
 */
export function scanManifestTop(
  bytes: Uint8Array,
): { members: TopMember[]; inputHashes: InputHashes; inputHashesMember: number } | undefined {
  if (bytes[0] !== 0x7b) return undefined;
  const members: TopMember[] = [];
  let inputHashes: InputHashes | undefined;
  let inputHashesMember = -1;
  let i = 1;
  if (bytes[i] === 0x7d) return undefined;
  for (;;) {
    if (bytes[i] !== 0x22) return undefined;
    const start = i;
    let key = "";
    for (i++; i < bytes.length && bytes[i] !== 0x22; i++) {
      const c = bytes[i];
      if (c < 0x20 || c > 0x7e || c === 0x5c || key.length > 64) return undefined;
      key += String.fromCharCode(c);
    }
    if (bytes[i + 1] !== 0x3a) return undefined;
    const valueStart = i + 2;
    let end: number;
    if (key === "input_hashes") {
      if (inputHashes !== undefined) return undefined;
      const scanned = scanStrictObject(bytes, valueStart);
      if (scanned === undefined) return undefined;
      inputHashes = scanned.hashes;
      inputHashesMember = members.length;
      end = scanned.end;
    } else {
      end = skipValue(bytes, valueStart);
      if (end < 0) return undefined;
    }
    members.push({ key, start, valueStart, end });
    i = end;
    if (bytes[i] === 0x7d) {
      if (i !== bytes.length - 1 || inputHashes === undefined) return undefined;
      return { members, inputHashes, inputHashesMember };
    }
    if (bytes[i] !== 0x2c) return undefined;
    i++;
  }
}
