// The manifest of a streamed pack, sealed without holding it as a value: `input_hashes` names
// every member (~16 MB at 100 000 entries), and building it as an object, serialising it
// twice (once without `output_hash` to hash, once whole) and sorting a copy of the pairs cost
// ~110 MB at the peak of a pack build. Here the members arrive in order and are written once
// as canonical bytes; the top level is assembled around them in `canon` key order, hashed
// without `output_hash`, then joined with it. The bytes are exactly `canonicalBytes` of the
// whole manifest (tests/compliance/pack_test.ts compares with the in-memory builder).
import { canonicalize, compareCodePoints, type JsonObject } from "../canonical/mod.ts";
import { sha256Stream } from "../crypto/mod.ts";

const encoder = new TextEncoder();
const MIB = 1024 * 1024;

/** Canonical bytes appended into one growing buffer. */
class ByteBuilder {
  #bytes = new Uint8Array(64 * 1024);
  #length = 0;

  /** Appends the UTF-8 of `text`. */
  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.#reserve(text.length * 3);
    this.#length += encoder.encodeInto(text, this.#bytes.subarray(this.#length)).written;
  }

  /** Appends bytes as they are. */
  addBytes(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#bytes.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  /** Appends `n` bytes that `write` puts into the buffer at the place given. */
  addWith(n: number, write: (bytes: Uint8Array, at: number) => void): void {
    this.#reserve(n);
    write(this.#bytes, this.#length);
    this.#length += n;
  }

  #reserve(n: number): void {
    const need = this.#length + n;
    if (need > this.#bytes.length) {
      // Doubling, but at most 1 MiB past what is needed: a run of ~16 MB comes in one piece.
      const grown = new Uint8Array(Math.max(need, Math.min(this.#bytes.length * 2, need + MIB)));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
  }

  /** The bytes so far from `from` on (a view). */
  bytes(from = 0): Uint8Array {
    return this.#bytes.subarray(from, this.#length);
  }
}

/**
 * A run of `input_hashes` members written as canonical bytes by their owner (a pack's
 * signature members: `"name":"hash"` each, joined by commas, no escapes), named from `first`
 * to `last` in code point order.
 */
export interface InputHashRun {
  /** The run's first name ("" when it is empty). */
  first: string;
  /** Its last name. */
  last: string;
  /** Bytes of the run, without a leading or trailing comma (0 when it is empty). */
  length: number;
  /** Writes those bytes into `out` at `at`. */
  writeInto(out: Uint8Array, at: number): void;
}

/** One `input_hashes` member (name, `sha256:` hash) or a run of them. */
export type InputHash = readonly [string, string] | InputHashRun;

/**
 * Appends the canonical `"input_hashes":{"name":"hash",…}` of `inputHashes`, which must come
 * in code point order of their names (each name once).
 */
function addInputHashes(out: ByteBuilder, inputHashes: Iterable<InputHash>): void {
  out.add('"input_hashes":{');
  let previous: string | undefined;
  const next = (name: string) => {
    if (previous !== undefined) {
      if (compareCodePoints(previous, name) >= 0) {
        throw new Error(`input hashes out of order: ${previous} before ${name}`);
      }
      out.add(",");
    }
  };
  for (const item of inputHashes) {
    if (isPair(item)) {
      next(item[0]);
      out.add(canonicalize(item[0], "canon") + ":" + canonicalize(item[1], "canon"));
      previous = item[0];
    } else if (item.length > 0) {
      next(item.first);
      out.addWith(item.length, (bytes, at) => item.writeInto(bytes, at));
      previous = item.last;
    }
  }
  out.add("}");
}

function isPair(item: InputHash): item is readonly [string, string] {
  return Array.isArray(item);
}

/** What {@linkcode streamedManifestBytes} made. */
export interface StreamedManifest {
  /** The manifest's canonical bytes (a view of a buffer that may be slightly larger). */
  bytes: Uint8Array;
  /** Its `output_hash`. */
  outputHash: string;
  /** `prefix` followed by `bytes`, in the same buffer (no copy). */
  prefixed: Uint8Array;
}

/**
 * The canonical bytes of `base` with `input_hashes` (name → `sha256:` hex, in code point order
 * of the names) and `output_hash` (the SHA-256 of the canonical manifest without it), and
 * that hash. The bytes are made in one buffer, after `prefix` (a JWS signing input's header:
 * the manifest is signed where it is, not copied behind its header).
 */
export function streamedManifestBytes(
  base: JsonObject,
  inputHashes: Iterable<InputHash>,
  prefix: Uint8Array = new Uint8Array(0),
): StreamedManifest {
  if ("input_hashes" in base || "output_hash" in base) {
    throw new Error("the manifest base already has input_hashes or output_hash");
  }
  // Each top-level member as `"key":value` bytes (input_hashes written in place), canon order.
  const members: [string, Uint8Array | undefined][] = [["input_hashes", undefined]];
  for (const [key, value] of Object.entries(base)) {
    // As canonicalize does: a key whose value is undefined is not printed.
    if (value === undefined) continue;
    members.push([
      key,
      encoder.encode(`${canonicalize(key, "canon")}:${canonicalize(value, "canon")}`),
    ]);
  }
  members.sort((a, b) => compareCodePoints(a[0], b[0]));
  const cut = members.findIndex(([k]) => compareCodePoints(k, "output_hash") > 0);
  const before = cut < 0 ? members : members.slice(0, cut);
  const after = cut < 0 ? [] : members.slice(cut);
  const put = (out: ByteBuilder, bytes: Uint8Array | undefined) =>
    bytes === undefined ? addInputHashes(out, inputHashes) : out.addBytes(bytes);
  // `{` and the members before `output_hash`; then, apart, `,` + each member after it and `}`.
  const out = new ByteBuilder();
  out.addBytes(prefix);
  const start = prefix.length;
  before.forEach(([, bytes], i) => {
    out.add(i === 0 ? "{" : ",");
    put(out, bytes);
  });
  const tail = new ByteBuilder();
  for (const [, bytes] of after) {
    tail.add(",");
    put(tail, bytes);
  }
  tail.add("}");
  // The hash of the manifest without `output_hash`.
  const hash = sha256Stream();
  if (before.length > 0) {
    hash.update(out.bytes(start));
    hash.update(tail.bytes());
  } else {
    hash.update(encoder.encode("{"));
    hash.update(tail.bytes().subarray(after.length > 0 ? 1 : 0));
  }
  const outputHash = "sha256:" + hash.hexDigest();
  out.add(before.length === 0 ? "{" : ",");
  out.add(`"output_hash":${canonicalize(outputHash, "canon")}`);
  out.addBytes(tail.bytes());
  return { bytes: out.bytes(start), outputHash, prefixed: out.bytes() };
}
