// HMAC-SHA-256 (RFC 2104) under one key for many small records: the operator HMAC of every
// lineage entry a gate checks. The key's inner and outer blocks are compressed once; each record
// streams its bytes into reused words and costs its own blocks plus one outer block, with no
// allocation but the hex it returns (native hash objects are freed only by a major GC; @noble's
// streaming state copies and views cost ~2x this). Tests compare it with node:crypto.
import { compressInto, SHA256_IV } from "./_sha256_small.ts";
import { type KeyedHmacSha256, sha256 } from "./hash.ts";

const words = new Int32Array(16);
const state = new Int32Array(8);
// Bytes of the block being filled, and the word being assembled.
let filled = 0;
let word = 0;

function push(byte: number): void {
  word = (word << 8) | byte;
  filled++;
  if ((filled & 3) !== 0) return;
  words[(filled >> 2) - 1] = word;
  word = 0;
  if (filled === 64) {
    compressInto(state, words, 0);
    filled = 0;
  }
}

/** Streams `part` into the message: a word at a time where it can. */
function absorb(part: Uint8Array): void {
  const n = part.length;
  let i = 0;
  while (i < n && (filled & 3) !== 0) push(part[i++]);
  for (; i + 4 <= n; i += 4) {
    words[filled >> 2] = (part[i] << 24) | (part[i + 1] << 16) | (part[i + 2] << 8) | part[i + 3];
    filled += 4;
    if (filled === 64) {
      compressInto(state, words, 0);
      filled = 0;
    }
  }
  while (i < n) push(part[i++]);
}

/** Ends the message of `length` bytes: 0x80, zeros, the bit length (below 2^53 bits). */
function pad(length: number): void {
  push(0x80);
  while (filled !== 56) push(0);
  const bits = length * 8;
  const high = Math.floor(bits / 0x100000000);
  const low = bits >>> 0;
  push(high >>> 24);
  push((high >>> 16) & 0xff);
  push((high >>> 8) & 0xff);
  push(high & 0xff);
  push(low >>> 24);
  push((low >>> 16) & 0xff);
  push((low >>> 8) & 0xff);
  push(low & 0xff);
}

/** The state after compressing one 64-byte block (a padded key) from the initial state. */
function blockState(block: Uint8Array): Int32Array {
  state.set(SHA256_IV);
  filled = 0;
  word = 0;
  for (let i = 0; i < 64; i++) push(block[i]);
  return state.slice();
}

const HEX = new TextEncoder().encode("0123456789abcdef");
const hexOut = new Uint8Array(64);
const latin1 = new TextDecoder("latin1");

/**
 * {@linkcode KeyedHmacSha256} in pure JS on reused words, for verifiers that check one key's
 * HMAC over many records (no native hash object per record).
 */
export function keyedHmacSha256Pure(key: Uint8Array): KeyedHmacSha256 {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = blockState(block.map((b) => b ^ 0x36));
  const outer = blockState(block.map((b) => b ^ 0x5c));
  return {
    hex(...parts) {
      state.set(inner);
      filled = 0;
      word = 0;
      let length = 64;
      for (const part of parts) {
        length += part.length;
        absorb(part);
      }
      pad(length);
      // The outer message: the outer key block (in `outer`), then the inner digest.
      for (let i = 0; i < 8; i++) words[i] = state[i];
      words[8] = 0x80000000 | 0;
      words.fill(0, 9, 15);
      words[15] = (64 + 32) * 8;
      state.set(outer);
      compressInto(state, words, 0);
      for (let i = 0; i < 8; i++) {
        const v = state[i];
        for (let k = 0; k < 4; k++) {
          const byte = (v >>> (24 - 8 * k)) & 0xff;
          hexOut[8 * i + 2 * k] = HEX[byte >> 4];
          hexOut[8 * i + 2 * k + 1] = HEX[byte & 15];
        }
      }
      return latin1.decode(hexOut);
    },
  };
}
