// Native (node:crypto) against the @noble reference: published RFC vectors, then random inputs.
import { deepStrictEqual, equal, strictEqual } from "node:assert/strict";
import { fromHex, toHex } from "../../src/canonical/mod.ts";
import {
  decodePrivateKeyPem,
  decodePublicKeyPem,
  ed25519KeyPairFromSeed,
  ed25519Sign,
  ed25519Verify,
  encodePrivateKeyPem,
  encodePublicKeyPem,
  hkdfSha256,
  hmacSha256,
  hmacSha256Hex,
  keyedHmacSha256,
  keyedHmacSha256Pure,
  referenceCrypto as ref,
  sha256,
  sha256Hex,
  sha256HexPure,
} from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const fill = (byte: number, n: number) => new Uint8Array(n).fill(byte);
const range = (from: number, to: number) =>
  Uint8Array.from({ length: to - from }, (_, i) => from + i);

// RFC 8032 §7.1: TEST 1, 2, 3 and SHA(abc).
const RFC8032 = [
  {
    seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    pub: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    msg: "",
    sig:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    pub: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    msg: "72",
    sig:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    seed: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    pub: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    msg: "af82",
    sig:
      "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
  {
    seed: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
    pub: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
    msg:
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    sig:
      "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
  },
];

// RFC 4231 §4.2–4.8 (HMAC-SHA-256); case 5 publishes only the first 128 bits.
const RFC4231 = [
  {
    key: fill(0x0b, 20),
    data: enc("Hi There"),
    mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
  },
  {
    key: enc("Jefe"),
    data: enc("what do ya want for nothing?"),
    mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  },
  {
    key: fill(0xaa, 20),
    data: fill(0xdd, 50),
    mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
  },
  {
    key: range(1, 26),
    data: fill(0xcd, 50),
    mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
  },
  {
    key: fill(0x0c, 20),
    data: enc("Test With Truncation"),
    mac: "a3b6167473100ee06e0c796c2955552b",
  },
  {
    key: fill(0xaa, 131),
    data: enc("Test Using Larger Than Block-Size Key - Hash Key First"),
    mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
  },
  {
    key: fill(0xaa, 131),
    data: enc(
      "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
    ),
    mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
  },
];

// RFC 5869 Appendix A.1–A.3 (HKDF-SHA-256).
const RFC5869 = [
  {
    ikm: fill(0x0b, 22),
    salt: range(0x00, 0x0d),
    info: range(0xf0, 0xfa),
    length: 42,
    okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
  },
  {
    ikm: range(0x00, 0x50),
    salt: range(0x60, 0xb0),
    info: range(0xb0, 0x100),
    length: 82,
    okm:
      "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87",
  },
  {
    ikm: fill(0x0b, 22),
    salt: new Uint8Array(0),
    info: new Uint8Array(0),
    length: 42,
    okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
  },
];

Deno.test("RFC 8032 vectors: native and noble derive the published key and signature", () => {
  for (const v of RFC8032) {
    const seed = fromHex(v.seed);
    const msg = fromHex(v.msg);
    for (
      const [name, impl] of [["native", { ed25519KeyPairFromSeed, ed25519Sign }], [
        "noble",
        ref,
      ]] as const
    ) {
      strictEqual(toHex(impl.ed25519KeyPairFromSeed(seed).publicKey), v.pub, `${name} public key`);
      strictEqual(toHex(impl.ed25519Sign(seed, msg)), v.sig, `${name} signature`);
    }
    equal(ed25519Verify(fromHex(v.pub), msg, fromHex(v.sig)), true);
    equal(ref.ed25519Verify(fromHex(v.pub), msg, fromHex(v.sig)), true);
    const bad = fromHex(v.sig);
    bad[10] ^= 1;
    equal(ed25519Verify(fromHex(v.pub), msg, bad), false);
    equal(ref.ed25519Verify(fromHex(v.pub), msg, bad), false);
  }
});

Deno.test("RFC 4231 vectors: native and noble HMAC-SHA256 give the published tags", () => {
  for (const [i, v] of RFC4231.entries()) {
    const n = toHex(hmacSha256(v.key, v.data)).slice(0, v.mac.length);
    const r = toHex(ref.hmacSha256(v.key, v.data)).slice(0, v.mac.length);
    strictEqual(n, v.mac, `native case ${i + 1}`);
    strictEqual(keyedHmacSha256(v.key).hex(v.data).slice(0, v.mac.length), v.mac, `keyed ${i + 1}`);
    strictEqual(
      keyedHmacSha256Pure(v.key).hex(v.data).slice(0, v.mac.length),
      v.mac,
      `pure ${i + 1}`,
    );
    strictEqual(r, v.mac, `noble case ${i + 1}`);
  }
});

Deno.test("RFC 5869 vectors: native and noble HKDF-SHA256 give the published OKM", () => {
  for (const [i, v] of RFC5869.entries()) {
    const opts = { salt: v.salt, info: v.info, length: v.length };
    strictEqual(toHex(hkdfSha256(v.ikm, opts)), v.okm, `native case ${i + 1}`);
    strictEqual(toHex(ref.hkdfSha256(v.ikm, opts)), v.okm, `noble case ${i + 1}`);
  }
  // An absent salt is RFC 5869's default, the same as a zero-length one (case 3).
  strictEqual(
    toHex(hkdfSha256(RFC5869[2].ikm, { info: "", length: 42 })),
    RFC5869[2].okm,
  );
});

Deno.test("native and noble agree byte for byte on 300 random inputs", () => {
  const rnd = new SeededRandom(20260101);
  for (let i = 0; i < 300; i++) {
    const len = rnd.bytes(2)[0] * (i % 7) + (i % 3);
    const data = rnd.bytes(len);
    const key = rnd.bytes(rnd.bytes(1)[0] % 140);
    deepStrictEqual(sha256(data), ref.sha256(data));
    strictEqual(sha256HexPure(data), sha256Hex(data));
    deepStrictEqual(hmacSha256(key, data), ref.hmacSha256(key, data));
    const split = data.length >> 1;
    strictEqual(
      keyedHmacSha256(key).hex(data.subarray(0, split), data.subarray(split)),
      hmacSha256Hex(key, data),
    );
    const pure = keyedHmacSha256Pure(key);
    strictEqual(pure.hex(data.subarray(0, split), data.subarray(split)), hmacSha256Hex(key, data));
    strictEqual(pure.hex(data), hmacSha256Hex(key, data)); // reusable: pads are cloned, not spent
    const hk = { salt: rnd.bytes(i % 40), info: rnd.bytes(i % 17), length: 1 + (i % 96) };
    deepStrictEqual(hkdfSha256(key, hk), ref.hkdfSha256(key, hk));
    const seed = rnd.bytes(32);
    const pair = ed25519KeyPairFromSeed(seed);
    deepStrictEqual(pair.publicKey, ref.ed25519KeyPairFromSeed(seed).publicKey);
    const sig = ed25519Sign(seed, data);
    deepStrictEqual(sig, ref.ed25519Sign(seed, data));
    equal(ed25519Verify(pair.publicKey, data, sig), true);
    equal(ref.ed25519Verify(pair.publicKey, data, sig), true);
    // A flipped bit in the signature, message or key is refused by both.
    const bad = new Uint8Array(sig);
    bad[i % 64] ^= 1 << (i % 8);
    equal(ed25519Verify(pair.publicKey, data, bad), false);
    equal(ref.ed25519Verify(pair.publicKey, data, bad), false);
    const other = ed25519KeyPairFromSeed(rnd.bytes(32)).publicKey;
    equal(ed25519Verify(other, data, sig), false);
    equal(ref.ed25519Verify(other, data, sig), false);
  }
});

Deno.test("both implementations refuse malformed public keys and signatures alike", () => {
  const seed = fill(7, 32);
  const pair = ed25519KeyPairFromSeed(seed);
  const msg = enc("m");
  const sig = ed25519Sign(seed, msg);
  const cases: [Uint8Array, Uint8Array][] = [
    [pair.publicKey.subarray(0, 31), sig],
    [pair.publicKey, sig.subarray(0, 63)],
    [new Uint8Array(32).fill(0xff), sig],
  ];
  for (const [pub, s] of cases) {
    equal(ed25519Verify(pub, msg, s), false);
    equal(ref.ed25519Verify(pub, msg, s), false);
  }
});

Deno.test("PEM round-trips PKCS#8 and SPKI and refuses the wrong block", () => {
  const pair = ed25519KeyPairFromSeed(fill(3, 32));
  const priv = encodePrivateKeyPem(pair.seed);
  const pub = encodePublicKeyPem(pair.publicKey);
  deepStrictEqual(decodePrivateKeyPem(priv), pair.seed);
  deepStrictEqual(decodePublicKeyPem(pub), pair.publicKey);
  let threw = false;
  try {
    decodePublicKeyPem(priv);
  } catch {
    threw = true;
  }
  equal(threw, true);
});

Deno.test("the pure keyed HMAC agrees with node:crypto at every length across the padding edges", () => {
  const rnd = new SeededRandom(20261202);
  for (const keyLength of [0, 1, 32, 63, 64, 65, 200]) {
    const key = rnd.bytes(keyLength);
    const pure = keyedHmacSha256Pure(key);
    for (let len = 0; len <= 200; len++) {
      const data = rnd.bytes(len);
      const a = len % 3;
      const b = Math.min(len, a + (len >> 1));
      strictEqual(
        pure.hex(data.subarray(0, a), data.subarray(a, b), data.subarray(b)),
        hmacSha256Hex(key, data),
        `key ${keyLength} length ${len}`,
      );
    }
  }
});
