// Detached JWS (RFC 7515 App. F + RFC 7797): our writer, our strict parser, and a cross-check
// with the independent `jose` library in both directions.
import { deepStrictEqual, equal, strictEqual, throws } from "node:assert/strict";
import { FlattenedSign, flattenedVerify, importPKCS8, importSPKI } from "jose";
import { fromBase64Url, toBase64Url } from "../../src/canonical/mod.ts";
import {
  detachedJwsHeaderB64,
  ed25519KeyPairFromSeed,
  ed25519Sign,
  encodePrivateKeyPem,
  encodePublicKeyPem,
  JwsFormatError,
  parseDetachedJws,
  signDetachedJws,
  signDetachedJwsInput,
  verifyDetachedJws,
} from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(9));
const payload = enc('{"a":"é","v":1}');

Deno.test("the protected header is canon-ascii of the fixed EdDSA/b64:false header", () => {
  strictEqual(
    dec(fromBase64Url(detachedJwsHeaderB64("agent-1"))),
    '{"alg":"EdDSA","b64":false,"crit":["b64"],"kid":"agent-1"}',
  );
  strictEqual(
    dec(fromBase64Url(detachedJwsHeaderB64("kïd"))),
    '{"alg":"EdDSA","b64":false,"crit":["b64"],"kid":"k\\u00efd"}',
  );
  throws(() => detachedJwsHeaderB64(""), JwsFormatError);
});

Deno.test("a detached JWS is header..signature, no newline, and verifies over the raw payload", () => {
  const jws = signDetachedJws(pair.seed, payload, { kid: "k1" });
  const parts = jws.split(".");
  strictEqual(parts.length, 3);
  strictEqual(parts[1], "");
  equal(jws.endsWith("\n"), false);
  // RFC 7797: the signing input is ASCII(header_b64) || "." || the raw payload bytes.
  const input = new Uint8Array([...enc(parts[0] + "."), ...payload]);
  deepStrictEqual(fromBase64Url(parts[2]), ed25519Sign(pair.seed, input));
  const parsed = parseDetachedJws(jws);
  strictEqual(parsed.header.kid, "k1");
  equal(verifyDetachedJws(parsed, { payload, publicKey: pair.publicKey }), true);
  equal(
    verifyDetachedJws(parsed, { payload: enc('{"a":"e","v":1}'), publicKey: pair.publicKey }),
    false,
  );
  const other = ed25519KeyPairFromSeed(new Uint8Array(32).fill(1)).publicKey;
  equal(verifyDetachedJws(parsed, { payload, publicKey: other }), false);
  deepStrictEqual(parseDetachedJws(enc(jws)), parsed);
});

function headerOf(obj: unknown): string {
  return toBase64Url(enc(JSON.stringify(obj)));
}

Deno.test("the parser refuses every deviation from the header and grammar rules", () => {
  const good = signDetachedJws(pair.seed, payload, { kid: "k1" });
  const [h, , s] = good.split(".");
  const cases: [string, string][] = [
    [good + "\n", "trailing newline"],
    [" " + good, "leading space"],
    [good + "\r", "carriage return"],
    [`${h}.${toBase64Url(payload)}.${s}`, "attached payload"],
    [`${h}..${s}.x`, "four parts"],
    [`${h}.${s}`, "two parts"],
    [`${h}==..${s}`, "padded header"],
    [`${h}..${s}A`, "signature not canonical base64url"],
    [`${h}..${toBase64Url(new Uint8Array(63))}`, "63-byte signature"],
    [`${headerOf({ alg: "HS256", b64: false, crit: ["b64"], kid: "k1" })}..${s}`, "alg HS256"],
    [`${headerOf({ alg: "none", b64: false, crit: ["b64"], kid: "k1" })}..${s}`, "alg none"],
    [`${headerOf({ alg: "EdDSA", b64: true, crit: ["b64"], kid: "k1" })}..${s}`, "b64 true"],
    [`${headerOf({ alg: "EdDSA", crit: ["b64"], kid: "k1" })}..${s}`, "b64 missing"],
    [`${headerOf({ alg: "EdDSA", b64: false, kid: "k1" })}..${s}`, "crit missing"],
    [`${headerOf({ alg: "EdDSA", b64: false, crit: [], kid: "k1" })}..${s}`, "crit empty"],
    [
      `${headerOf({ alg: "EdDSA", b64: false, crit: ["b64", "exp"], kid: "k1" })}..${s}`,
      "crit extra",
    ],
    [`${headerOf({ alg: "EdDSA", b64: false, crit: ["b64"] })}..${s}`, "kid missing"],
    [`${headerOf({ alg: "EdDSA", b64: false, crit: ["b64"], kid: 7 })}..${s}`, "kid number"],
    [
      `${headerOf({ alg: "EdDSA", b64: false, crit: ["b64"], kid: "k1", x: 1 })}..${s}`,
      "extra field",
    ],
    [`${headerOf({ kid: "k1", alg: "EdDSA", b64: false, crit: ["b64"] })}..${s}`, "unsorted keys"],
    [`${toBase64Url(enc('{"alg": "EdDSA"}'))}..${s}`, "whitespace in header"],
    [`${toBase64Url(enc("not json"))}..${s}`, "header not JSON"],
    [`${toBase64Url(enc("[1]"))}..${s}`, "header an array"],
  ];
  for (const [text, why] of cases) {
    throws(() => parseDetachedJws(text), JwsFormatError, why);
  }
  throws(() => parseDetachedJws(new Uint8Array([0xff, 0xfe])), JwsFormatError);
  throws(() => parseDetachedJws(new Uint8Array(5000).fill(0x41)), JwsFormatError);
});

Deno.test("jose verifies our detached JWS (b64:false, crit) and refuses a changed payload", async () => {
  const key = await importSPKI(encodePublicKeyPem(pair.publicKey), "EdDSA");
  const rnd = new SeededRandom(5);
  for (let i = 0; i < 20; i++) {
    const body = rnd.bytes(1 + i * 37);
    const [protectedB64, , signature] = signDetachedJws(pair.seed, body, { kid: `k${i}` })
      .split(".");
    const result = await flattenedVerify(
      { protected: protectedB64, payload: body, signature },
      key,
      { algorithms: ["EdDSA"] },
    );
    deepStrictEqual(result.payload, body);
    strictEqual(result.protectedHeader?.kid, `k${i}`);
    strictEqual(result.protectedHeader?.b64, false);
    const changed = new Uint8Array(body);
    changed[0] ^= 1;
    let refused = false;
    try {
      await flattenedVerify({ protected: protectedB64, payload: changed, signature }, key);
    } catch {
      refused = true;
    }
    equal(refused, true, "jose accepted a changed payload");
  }
});

Deno.test("a JWS made by jose with the same header is byte-identical to ours and parses", async () => {
  const key = await importPKCS8(encodePrivateKeyPem(pair.seed), "EdDSA");
  const jose = await new FlattenedSign(payload)
    .setProtectedHeader({ alg: "EdDSA", b64: false, crit: ["b64"], kid: "k1" })
    .sign(key);
  const theirs = `${jose.protected}..${jose.signature}`;
  strictEqual(theirs, signDetachedJws(pair.seed, payload, { kid: "k1" }));
  equal(verifyDetachedJws(parseDetachedJws(theirs), { payload, publicKey: pair.publicKey }), true);
});

Deno.test("a signing input assembled in place signs as signDetachedJws; any other start is refused", () => {
  const random = new SeededRandom(17);
  for (const body of [new Uint8Array(0), payload, random.bytes(70_000)]) {
    for (const kid of ["k1", "kïd"]) {
      const head = enc(detachedJwsHeaderB64(kid) + ".");
      const input = new Uint8Array(head.length + body.length);
      input.set(head);
      input.set(body, head.length);
      strictEqual(
        signDetachedJwsInput(pair.seed, input, { kid }),
        signDetachedJws(pair.seed, body, { kid }),
      );
    }
  }
  const head = enc(detachedJwsHeaderB64("k1") + ".");
  const wrong = [
    enc(detachedJwsHeaderB64("k2") + "."), // another kid's header
    head.subarray(0, head.length - 1), // no dot
    new Uint8Array(0),
    (() => {
      const h = head.slice();
      h[3] ^= 1;
      return h;
    })(),
  ];
  for (const start of wrong) {
    const input = new Uint8Array(start.length + payload.length);
    input.set(start);
    input.set(payload, start.length);
    throws(() => signDetachedJwsInput(pair.seed, input, { kid: "k1" }), JwsFormatError);
  }
});
