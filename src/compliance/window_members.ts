// The members a window's entries make, collected entry by entry in log order without holding
// the entries: the log and the evidence CSV are compressed as they come (with their CRC-32
// and SHA-256), the signatures go into one buffer (a pack has one per entry, and one object
// each would cost several times their 180 bytes); the CSV rows and the Article 12 facts are read
// back from the log where it is compressed (_window_log.ts).
import { sha256IntoPure } from "../crypto/mod.ts";
import { digestInto, DigestTable, digestText } from "../lineage/mod.ts";
import { type LogFacts, PACK_MEMBERS, signatureMemberName } from "../pack_format/mod.ts";
import type { InputHashRun } from "./_manifest_stream.ts";
import { inThreadDeflate, type MembersDeflate, offThreadDeflate } from "./_off_thread_deflate.ts";
import type { PreparedMember } from "./zip_writer.ts";

const NEWLINE = new Uint8Array([0x0a]);

/**
 * The signature members of a window: each entry's detached JWS, once per entry hash, with its
 * SHA-256 for the manifest, handed out in member-name order.
 */
export class SignatureMembers {
  #index: DigestTable | undefined = new DigestTable();
  #entries: Uint8Array = new Uint8Array(32 * 1024); // entry digests, 32 bytes each
  #shas: Uint8Array = new Uint8Array(32 * 1024); // SHA-256 of each member's bytes
  #offsets: Uint32Array = new Uint32Array(1024);
  #lengths: Uint32Array = new Uint32Array(1024);
  #count = 0;
  #bytes: Uint8Array = new Uint8Array(256 * 1024);
  #end = 0;
  #order: Int32Array | undefined; // member indices in name order, once asked for

  /**
   * The members collected elsewhere (on another thread: {@linkcode SignatureMembers.columns}),
   * the same members as there.
   */
  static fromColumns(columns: SignatureColumns): SignatureMembers {
    const m = new SignatureMembers();
    const { count, entries, shas, offsets, lengths, bytes, end } = columns;
    if (
      !(count >= 0 && entries.length >= count * 32 && shas.length >= count * 32 &&
        offsets.length >= count && lengths.length >= count && bytes.length >= end)
    ) throw new Error("signature members: inconsistent columns");
    m.#index = undefined; // made again only if more members are added
    m.#entries = entries;
    m.#shas = shas;
    m.#offsets = offsets;
    m.#lengths = lengths;
    m.#count = count;
    m.#bytes = bytes;
    m.#end = end;
    return m;
  }

  /** Members held. */
  get count(): number {
    return this.#count;
  }

  /** Adds the signature of entry `hash` (ignored when that entry already has one). */
  add(hash: string, signature: Uint8Array): void {
    const i = this.#count;
    if ((i + 1) * 32 > this.#entries.length) {
      this.#entries = grow(this.#entries, (i + 1) * 32);
      this.#shas = grow(this.#shas, (i + 1) * 32);
    }
    // The hash is decoded once, into its column; a key already held leaves the slot free.
    if (!digestInto(hash, this.#entries, i * 32)) return;
    if (!this.#table().addDigest(this.#entries, i * 32, i)) return;
    // Pure JS: a native hash object per signature waits for a major GC to be freed.
    sha256IntoPure(signature, this.#shas, i * 32);
    this.#order = undefined;
    if (this.#end + signature.length > this.#bytes.length) {
      this.#bytes = grow(this.#bytes, this.#end + signature.length);
    }
    this.#bytes.set(signature, this.#end);
    if (i === this.#offsets.length) {
      this.#offsets = growWords(this.#offsets);
      this.#lengths = growWords(this.#lengths);
    }
    this.#offsets[i] = this.#end;
    this.#lengths[i] = signature.length;
    this.#end += signature.length;
    this.#count = i + 1;
  }

  /**
   * The members as columns of bytes, for another thread ({@linkcode SignatureMembers.fromColumns});
   * their buffers may be transferred, after which this collection must not be used.
   */
  columns(): SignatureColumns {
    return {
      count: this.#count,
      entries: this.#entries,
      shas: this.#shas,
      offsets: this.#offsets,
      lengths: this.#lengths,
      bytes: this.#bytes,
      end: this.#end,
    };
  }

  #table(): DigestTable {
    if (this.#index === undefined) {
      this.#index = new DigestTable(this.#count);
      for (let i = 0; i < this.#count; i++) this.#index.setDigest(this.#entries, i * 32, i);
    }
    return this.#index;
  }

  /**
   * The members' `input_hashes` entries in name order, as canonical bytes with no string made
   * per member: `"signatures/<hex>.jws":"sha256:<hex>"`, comma-separated.
   */
  inputHashes(): InputHashRun {
    const order = this.#nameOrder();
    return {
      first: this.#nameAt(order, 0),
      last: this.#nameAt(order, order.length - 1),
      length: order.length * (INPUT_HASH_BYTES + 1) - (order.length > 0 ? 1 : 0),
      writeInto: (bytes, at) => {
        for (let k = 0; k < order.length; k++) {
          const i = order[k];
          if (k > 0) bytes[at++] = COMMA;
          bytes[at++] = QUOTE;
          at = putName(this.#entries, i * 32, bytes, at);
          bytes.set(HASH_OPEN, at);
          at += HASH_OPEN.length;
          at = putHex(this.#shas, i * 32, bytes, at);
          bytes[at++] = QUOTE;
        }
      },
    };
  }

  /**
   * The members as the archive stores them, in name order: their names in one buffer
   * ({@linkcode SIGNATURE_NAME_BYTES} ASCII bytes each) and each one's bytes (a view).
   */
  storedRun(): { names: Uint8Array; nameBytes: number; data: (k: number) => Uint8Array } {
    const order = this.#nameOrder();
    const names = new Uint8Array(order.length * SIGNATURE_NAME_BYTES);
    for (let k = 0; k < order.length; k++) {
      putName(this.#entries, order[k] * 32, names, k * SIGNATURE_NAME_BYTES);
    }
    return {
      names,
      nameBytes: SIGNATURE_NAME_BYTES,
      data: (k) => {
        const i = order[k];
        return this.#bytes.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
      },
    };
  }

  #nameOrder(): Int32Array {
    // The manifest and the archive both walk the members in name order: sorted once.
    this.#order ??= digestOrder(this.#entries, this.count);
    return this.#order;
  }

  #nameAt(order: Int32Array, k: number): string {
    return k < 0 || k >= order.length
      ? ""
      : signatureMemberName(digestText(this.#entries, order[k] * 32));
  }

  /** Every member in name order: its name, bytes (a view) and `sha256:` digest. */
  *inNameOrder(): Generator<{ name: string; bytes: Uint8Array; sha256: string }> {
    // The manifest and the archive both walk the members in name order: sorted once.
    this.#order ??= digestOrder(this.#entries, this.count);
    for (const i of this.#order) {
      yield {
        name: signatureMemberName(digestText(this.#entries, i * 32)),
        bytes: this.#bytes.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]),
        sha256: digestText(this.#shas, i * 32),
      };
    }
  }
}

const encoder = new TextEncoder();
const QUOTE = 0x22;
const COMMA = 0x2c;
const NAME_OPEN = encoder.encode("signatures/");
const NAME_CLOSE = encoder.encode(".jws");
const HASH_OPEN = encoder.encode('":"sha256:');
const HEX_DIGITS = encoder.encode("0123456789abcdef");

/** Bytes of a signature member's name: `signatures/<64 hex>.jws`. */
export const SIGNATURE_NAME_BYTES = NAME_OPEN.length + 64 + NAME_CLOSE.length;
// `"<name>":"sha256:<64 hex>"`
const INPUT_HASH_BYTES = 1 + SIGNATURE_NAME_BYTES + HASH_OPEN.length + 64 + 1;

/** Writes the 64 lowercase hex digits of the digest at `from[at]` into `out` at `to`. */
function putHex(from: Uint8Array, at: number, out: Uint8Array, to: number): number {
  for (let k = 0; k < 32; k++) {
    const b = from[at + k];
    out[to++] = HEX_DIGITS[b >> 4];
    out[to++] = HEX_DIGITS[b & 15];
  }
  return to;
}

/** Writes `signatures/<hex>.jws` of the entry digest at `from[at]` into `out` at `to`. */
function putName(from: Uint8Array, at: number, out: Uint8Array, to: number): number {
  out.set(NAME_OPEN, to);
  to = putHex(from, at, out, to + NAME_OPEN.length);
  out.set(NAME_CLOSE, to);
  return to + NAME_CLOSE.length;
}

/** {@linkcode SignatureMembers} as plain columns (see {@linkcode SignatureMembers.columns}). */
export interface SignatureColumns {
  /** Members. */
  count: number;
  /** Each member's entry digest, 32 bytes each. */
  entries: Uint8Array;
  /** Each member's SHA-256, 32 bytes each. */
  shas: Uint8Array;
  /** Where each member's bytes start in `bytes`. */
  offsets: Uint32Array;
  /** Each member's length. */
  lengths: Uint32Array;
  /** The members' bytes, one after the other. */
  bytes: Uint8Array;
  /** Bytes used in `bytes`. */
  end: number;
}

function growWords(words: Uint32Array): Uint32Array {
  const out = new Uint32Array(words.length * 2);
  out.set(words);
  return out;
}

function grow(bytes: Uint8Array, atLeast: number): Uint8Array {
  const out = new Uint8Array(Math.max(bytes.length * 2, atLeast));
  out.set(bytes);
  return out;
}

/** Largest count whose index fits beside a 32-bit key in a double's 53-bit mantissa. */
const KEYED_SORT_MAX = 1 << 21;

/**
 * Indices of the first `count` 32-byte digests in byte order. Lowercase hex sorts like the
 * bytes it encodes, so this is the member names' order. Each digest's first four bytes and its
 * index make one number sorted natively; digests sharing those four bytes are then put in
 * order by all 32 (the comparison sort gives the same order, only slower).
 */
export function digestOrder(digests: Uint8Array, count: number): Int32Array {
  const order = new Int32Array(count);
  if (count > KEYED_SORT_MAX) {
    const all = Array.from({ length: count }, (_, i) => i)
      .sort((a, b) => compareDigests(digests, a, b));
    order.set(all);
    return order;
  }
  const keys = new Float64Array(count);
  const view = new DataView(digests.buffer, digests.byteOffset, digests.byteLength);
  for (let i = 0; i < count; i++) keys[i] = view.getUint32(i * 32) * KEYED_SORT_MAX + i;
  keys.sort();
  for (let i = 0; i < count; i++) order[i] = keys[i] % KEYED_SORT_MAX;
  // Runs sharing their first four bytes: in order by the whole digest.
  for (let start = 0; start < count;) {
    const head = Math.floor(keys[start] / KEYED_SORT_MAX);
    let end = start + 1;
    while (end < count && Math.floor(keys[end] / KEYED_SORT_MAX) === head) end++;
    if (end - start > 1) {
      const run = Array.from(order.subarray(start, end))
        .sort((a, b) => compareDigests(digests, a, b));
      order.set(run, start);
    }
    start = end;
  }
  return order;
}

/** Lowercase hex sorts like the bytes it encodes: member names sort by their digests. */
function compareDigests(digests: Uint8Array, a: number, b: number): number {
  for (let k = 0; k < 32; k++) {
    const d = digests[a * 32 + k] - digests[b * 32 + k];
    if (d !== 0) return d;
  }
  return 0;
}

/** What a window's entries made. */
export interface CollectedWindow {
  /** `lineage-log.jsonl`, compressed. */
  log: PreparedMember;
  /** `article12-evidence.csv`, compressed. */
  csv: PreparedMember;
  /** The signature members. */
  signatures: SignatureMembers;
  /** The window's facts. */
  facts: LogFacts;
}

/** Options for {@linkcode WindowMembers}. */
export interface WindowMembersOptions {
  /**
   * Compress the log and the CSV on a worker thread, beside the caller's own work (the same
   * bytes as on this thread). Default false. The caller then awaits
   * {@linkcode WindowMembers.backlog} when it returns a promise, and calls
   * {@linkcode WindowMembers.close} if it stops before {@linkcode WindowMembers.finish}.
   */
  offThread?: boolean;
  /**
   * Compress on this one instead (the caller's, which it keeps using after
   * {@linkcode WindowMembers.finish} and closes itself); `offThread` is then ignored.
   */
  deflate?: MembersDeflate;
}

/**
 * Collects the members of a window's entries, fed in log order.
 *
 * @example
 * ```ts ignore
 * const members = new WindowMembers();
 * for (const e of windowEntries) members.add(e.line, e.hash, e.signature);
 * const collected = await members.finish();
 * ```
 */
export class WindowMembers {
  #deflate: MembersDeflate;
  #owned: boolean;
  #signatures = new SignatureMembers();

  constructor(options: WindowMembersOptions = {}) {
    this.#owned = options.deflate === undefined;
    this.#deflate = options.deflate ??
      (options.offThread === true ? offThreadDeflate() : inThreadDeflate());
  }

  /**
   * Feeds the next window entry: its line (without newline; a line the window selector
   * accepted as an entry, which the CSV row and the facts are read back from), its hash and
   * its signature.
   */
  add(line: Uint8Array, hash: string, signature: Uint8Array | undefined): void {
    this.#deflate.write(PACK_MEMBERS.log, line);
    this.#deflate.write(PACK_MEMBERS.log, NEWLINE);
    if (signature !== undefined) this.#signatures.add(hash, signature);
  }

  /** When compressing off thread: a promise to await before adding more, while too much waits. */
  backlog(): Promise<void> | undefined {
    return this.#deflate.backlog();
  }

  /** Ends the window. */
  async finish(): Promise<CollectedWindow> {
    // The CSV rows and the facts are read back from the log where it is compressed.
    const { members: [log, csv], facts } = await this.#deflate.finish([
      PACK_MEMBERS.log,
      PACK_MEMBERS.csv,
    ]);
    return { log, csv, signatures: this.#signatures, facts };
  }

  /**
   * Stops compressing (a build that failed before {@linkcode WindowMembers.finish}); a deflate
   * handed in by the caller is the caller's to close.
   */
  close(): void {
    if (this.#owned) this.#deflate.close();
  }
}
