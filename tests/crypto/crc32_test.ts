// The pure-JS CRC-32 (the verifier's check of inflated members, the pack writer's checksum of
// small archives) against node:zlib's native one, which a pack build loads instead: the ZIP
// bytes must not depend on which of the two computed a member's checksum.
import { strictEqual } from "node:assert/strict";
import { crc32 } from "node:zlib";
import { Crc32 } from "../../src/crypto/mod.ts";
import { loadNativeCrc32, zipMembers } from "../../src/compliance/mod.ts";

Deno.test("the pure CRC-32 equals node:zlib's for every length 0-600 and any split", () => {
  const data = new Uint8Array(600);
  for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
  for (let n = 0; n <= data.length; n++) {
    const whole = new Crc32();
    whole.update(data.subarray(0, n));
    strictEqual(whole.value(), crc32(data.subarray(0, n)) >>> 0, `length ${n}`);
    const split = new Crc32();
    const cut = (n * 7) % (n + 1);
    split.update(data.subarray(0, cut));
    split.update(data.subarray(cut, n));
    strictEqual(split.value(), whole.value(), `length ${n} split at ${cut}`);
  }
});

Deno.test("an archive's bytes are the same before and after the native CRC-32 is loaded", async () => {
  const members = new Map<string, Uint8Array>();
  for (let m = 0; m < 5; m++) {
    const bytes = new Uint8Array(1000 * m + 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * m + 7) & 0xff;
    members.set(`m${m}.json`, bytes);
  }
  const before = zipMembers(members);
  await loadNativeCrc32();
  const after = zipMembers(members);
  strictEqual(after.length, before.length);
  strictEqual(after.every((b, i) => b === before[i]), true);
});
