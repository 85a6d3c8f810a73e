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

/** Canonical bytes appended into one growing buffer. */
class ByteBuilder {
  #bytes = new Uint8Array(64 * 1024);
  #length = 0;

  /** Appends the UTF-8 of `text`. */
  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const need = this.#length + text.length * 3;
    if (need > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#bytes.length * 2, need));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    this.#length += encoder.encodeInto(text, this.#bytes.subarray(this.#length)).written;
  }

  /** The bytes so far (a view). */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }
}

/**
 * The canonical `"input_hashes":{"name":"hash",…}` of `inputHashes`, which must come in code
 * point order of their names (each name once).
 */
function inputHashesMember(inputHashes: Iterable<[string, string]>): Uint8Array {
  const out = new ByteBuilder();
  out.add('"input_hashes":{');
  let previous: string | undefined;
  for (const [name, hash] of inputHashes) {
    if (previous !== undefined) {
      if (compareCodePoints(previous, name) >= 0) {
        throw new Error(`input hashes out of order: ${previous} before ${name}`);
      }
      out.add(",");
    }
    out.add(canonicalize(name, "canon") + ":" + canonicalize(hash, "canon"));
    previous = name;
  }
  out.add("}");
  return out.bytes();
}

/**
 * The canonical bytes of `base` with `input_hashes` (name → `sha256:` hex, in code point order
 * of the names) and `output_hash` (the SHA-256 of the canonical manifest without it), and
 * that hash.
 */
export function streamedManifestBytes(
  base: JsonObject,
  inputHashes: Iterable<[string, string]>,
): { bytes: Uint8Array; outputHash: string } {
  if ("input_hashes" in base || "output_hash" in base) {
    throw new Error("the manifest base already has input_hashes or output_hash");
  }
  // Each top-level member as `"key":value` bytes, in canon order, `output_hash` left out.
  const members: [string, Uint8Array][] = [];
  for (const [key, value] of Object.entries(base)) {
    // As canonicalize does: a key whose value is undefined is not printed.
    if (value === undefined) continue;
    members.push([
      key,
      encoder.encode(`${canonicalize(key, "canon")}:${canonicalize(value, "canon")}`),
    ]);
  }
  members.push(["input_hashes", inputHashesMember(inputHashes)]);
  members.sort((a, b) => compareCodePoints(a[0], b[0]));
  const hash = sha256Stream();
  members.forEach(([, bytes], i) => {
    hash.update(encoder.encode(i === 0 ? "{" : ","));
    hash.update(bytes);
  });
  hash.update(encoder.encode("}"));
  const outputHash = "sha256:" + hash.hexDigest();
  const at = members.findIndex(([k]) => compareCodePoints(k, "output_hash") > 0);
  members.splice(at < 0 ? members.length : at, 0, [
    "output_hash",
    encoder.encode(`"output_hash":${canonicalize(outputHash, "canon")}`),
  ]);
  let size = 1 + members.length;
  for (const [, bytes] of members) size += bytes.length;
  const out = new Uint8Array(size);
  let pos = 0;
  members.forEach(([, bytes], i) => {
    out[pos++] = i === 0 ? 0x7b : 0x2c; // { or ,
    out.set(bytes, pos);
    pos += bytes.length;
  });
  out[pos] = 0x7d; // }
  return { bytes: out, outputHash };
}
