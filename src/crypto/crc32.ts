// CRC-32 (IEEE 802.3, the ZIP checksum) in pure JS. fflate computes it when writing but does
// not export it; the verifier checks every member it inflates (tens of megabytes for a large
// log) and the pack writer checksums small archives with it (a large pack loads node:zlib's
// native one), so it uses the slicing-by-8 table method: eight table lookups per eight bytes.

const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) {
      t[k * 256 + n] = (t[(k - 1) * 256 + n] >>> 8) ^ t[t[(k - 1) * 256 + n] & 0xff];
    }
  }
  return t;
})();

/** An incremental CRC-32. */
export class Crc32 {
  #crc = 0xffffffff;

  /** Feeds more bytes. */
  update(data: Uint8Array): void {
    const t = TABLES;
    let c = this.#crc;
    let i = 0;
    const end8 = data.length - (data.length % 8);
    for (; i < end8; i += 8) {
      const a = (c ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24))) >>>
        0;
      const b = data[i + 4] | (data[i + 5] << 8) | (data[i + 6] << 16) | (data[i + 7] << 24);
      c = t[7 * 256 + (a & 0xff)] ^ t[6 * 256 + ((a >>> 8) & 0xff)] ^
        t[5 * 256 + ((a >>> 16) & 0xff)] ^ t[4 * 256 + (a >>> 24)] ^
        t[3 * 256 + (b & 0xff)] ^ t[2 * 256 + ((b >>> 8) & 0xff)] ^
        t[256 + ((b >>> 16) & 0xff)] ^ t[(b >>> 24) & 0xff];
    }
    for (; i < data.length; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
    this.#crc = c >>> 0;
  }

  /** The checksum of everything fed so far, as an unsigned 32-bit integer. */
  value(): number {
    return (this.#crc ^ 0xffffffff) >>> 0;
  }
}
