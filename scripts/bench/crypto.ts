// Native (node:crypto) against the @noble reference: Ed25519 sign/verify on a lineage-entry-sized
// message, SHA-256 over small records and over 1 MiB, HMAC-SHA256 over small records. The gap
// is why src/crypto runs native code and keeps noble only as the differential-test reference.
import {
  ed25519KeyPairFromSeed,
  ed25519Sign,
  ed25519Verify,
  hmacSha256,
  keyedHmacSha256,
  referenceCrypto as ref,
  sha256,
} from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { report } from "./_report.ts";

const rnd = new SeededRandom(42);
const seed = rnd.bytes(32);
const pair = ed25519KeyPairFromSeed(seed);
const entry = rnd.bytes(600); // a lineage entry line is ~550-650 bytes
const mib = rnd.bytes(1024 * 1024);
const key = rnd.bytes(32);

function opsPerSecond(fn: () => void, minMs = 400): number {
  for (let i = 0; i < 50; i++) fn(); // warm-up (JIT, key-object caches)
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
    elapsed = performance.now() - start;
  }
  return (n / elapsed) * 1000;
}

const sig = ed25519Sign(seed, entry);
const keyed = keyedHmacSha256(key);
const rows: [string, () => void, () => void, string][] = [
  ["ed25519 sign (600 B)", () => ed25519Sign(seed, entry), () => ref.ed25519Sign(seed, entry), ""],
  [
    "ed25519 verify (600 B)",
    () => ed25519Verify(pair.publicKey, entry, sig),
    () => ref.ed25519Verify(pair.publicKey, entry, sig),
    "",
  ],
  ["sha256 (600 B)", () => sha256(entry), () => ref.sha256(entry), ""],
  ["hmac-sha256 (600 B)", () => hmacSha256(key, entry), () => ref.hmacSha256(key, entry), ""],
  [
    "hmac-sha256 keyed (600 B)",
    () => keyed.hex(entry),
    () => ref.hmacSha256(key, entry),
    "",
  ],
  ["sha256 (1 MiB)", () => sha256(mib), () => ref.sha256(mib), "MB/s"],
];

for (const [name, native, noble, unit] of rows) {
  const n = opsPerSecond(native);
  const r = opsPerSecond(noble);
  if (unit === "MB/s") {
    report("crypto", `${name} native`, (n * mib.length) / 1e6, "MB/s");
    report("crypto", `${name} noble`, (r * mib.length) / 1e6, "MB/s");
  } else {
    report("crypto", `${name} native`, n, "ops/s");
    report("crypto", `${name} noble`, r, "ops/s");
  }
  report("crypto", `${name} native/noble`, n / r, "x");
}
