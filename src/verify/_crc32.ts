// CRC-32 (IEEE 802.3, the ZIP checksum). fflate computes it when writing but does not export
// it, and the verifier must check every member it inflates.

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** An incremental CRC-32. */
export class Crc32 {
  #crc = 0xffffffff;

  /** Feeds more bytes. */
  update(data: Uint8Array): void {
    let c = this.#crc;
    for (let i = 0; i < data.length; i++) c = TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
    this.#crc = c;
  }

  /** The checksum of everything fed so far, as an unsigned 32-bit integer. */
  value(): number {
    return (this.#crc ^ 0xffffffff) >>> 0;
  }
}
