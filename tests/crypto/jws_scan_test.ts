// The verifier's fast reads of a detached JWS and of a public key: scanDetachedJws reads only
// what parseDetachedJws reads alike (same kid, signing prefix and signature) and nothing it
// refuses; the recently-used key cache compares key bytes, so a caller's array changed in place
// is a different key.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  ed25519KeyPairFromSeed,
  ed25519Verify,
  parseDetachedJws,
  scanDetachedJws,
  signDetachedJws,
  verifyDetachedJws,
  verifyScannedJws,
} from "../../src/crypto/mod.ts";

const encoder = new TextEncoder();
const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(7));
const payload = encoder.encode('{"a":1}');

/** Scan and parse agree: the scan reads nothing the parser refuses, and reads it alike. */
function agrees(bytes: Uint8Array, label: string): boolean {
  const scan = scanDetachedJws(bytes);
  let parsed: ReturnType<typeof parseDetachedJws> | undefined;
  try {
    parsed = parseDetachedJws(bytes);
  } catch {
    parsed = undefined;
  }
  if (scan === undefined) return false;
  ok(parsed !== undefined, `${label}: scanned a JWS the parser refuses`);
  strictEqual(scan.kid, parsed.header.kid, label);
  deepStrictEqual(scan.signingPrefix, parsed.signingPrefix, label);
  deepStrictEqual(new Uint8Array(scan.signature), parsed.signature, label);
  return true;
}

Deno.test("a JWS whose header the parser accepted before is scanned alike, and verifies alike", () => {
  const jws = encoder.encode(signDetachedJws(pair.seed, payload, { kid: "scan-k1" }));
  // Unknown header bytes: left to the parser (which then remembers them).
  strictEqual(scanDetachedJws(jws), undefined);
  parseDetachedJws(jws);
  ok(agrees(jws, "valid"));
  const scan = scanDetachedJws(jws);
  ok(scan !== undefined);
  ok(verifyScannedJws(scan, payload, pair.publicKey));
  ok(!verifyScannedJws(scan, encoder.encode('{"a":2}'), pair.publicKey));
  ok(verifyDetachedJws(parseDetachedJws(jws), { payload, publicKey: pair.publicKey }));
  // A header parsed from a string is not remembered as bytes.
  const fromText = signDetachedJws(pair.seed, payload, { kid: "scan-text" });
  parseDetachedJws(fromText);
  strictEqual(scanDetachedJws(encoder.encode(fromText)), undefined);
});

Deno.test("hostile JWS bytes: the scan reads none the parser refuses", () => {
  const text = signDetachedJws(pair.seed, payload, { kid: "scan-k2" });
  parseDetachedJws(encoder.encode(text));
  const [header, , signature] = text.split(".");
  const other = signDetachedJws(pair.seed, payload, { kid: "scan-k3" });
  const flipLast = signature.slice(0, -1) + (signature.endsWith("A") ? "B" : "A");
  const hostile: [string, string][] = [
    ["one dot", `${header}.${signature}`],
    ["three dots", `${header}...${signature}`],
    ["payload not empty", `${header}.e30.${signature}`],
    ["trailing dot", `${header}..${signature}.`],
    ["trailing newline", `${header}..${signature}\n`],
    ["leading space", ` ${header}..${signature}`],
    ["padding", `${header}..${signature.slice(0, -2)}==`],
    ["short signature", `${header}..${signature.slice(0, -1)}`],
    ["long signature", `${header}..${signature}A`],
    ["standard base64 char", `${header}..${signature.slice(0, -1)}+`],
    ["non-canonical last char", `${header}..${flipLast}`],
    ["truncated header", `${header.slice(1)}..${signature}`],
    ["header with a changed byte", `${header.slice(0, -1)}X..${signature}`],
    ["another kid's header, unseen", `${other.split(".")[0]}..${signature}`],
    ["non-ASCII", `${header}..${signature.slice(0, -1)}é`],
    ["empty", ""],
    ["only dots", ".."],
  ];
  for (const [label, jws] of hostile) {
    const bytes = encoder.encode(jws);
    if (label === "non-canonical last char") {
      // Either refused by both, or (when the flip stays canonical) read alike by both.
      agrees(bytes, label);
      continue;
    }
    strictEqual(scanDetachedJws(bytes), undefined, `${label}: scanned`);
    agrees(bytes, label);
  }
  // Every signature byte mutated to every byte value: the scan agrees with the parser.
  const good = encoder.encode(text);
  let read = 0;
  for (let at = header.length; at < good.length; at++) {
    for (let b = 0; b < 256; b += 3) {
      const bytes = good.slice();
      bytes[at] = b;
      if (agrees(bytes, `byte ${at} = ${b}`)) read++;
    }
  }
  ok(read > 100, `only ${read} mutated signatures were scanned`);
});

Deno.test("the key cache compares bytes: an array changed in place is the new key", () => {
  const a = ed25519KeyPairFromSeed(new Uint8Array(32).fill(3));
  const b = ed25519KeyPairFromSeed(new Uint8Array(32).fill(4));
  const message = encoder.encode("m");
  const signature = signDetachedJws(a.seed, message, { kid: "x" });
  const jws = parseDetachedJws(signature);
  const key = a.publicKey.slice();
  ok(verifyDetachedJws(jws, { payload: message, publicKey: key }));
  key.set(b.publicKey);
  ok(!verifyDetachedJws(jws, { payload: message, publicKey: key }), "stale key used");
  key.set(a.publicKey);
  ok(verifyDetachedJws(jws, { payload: message, publicKey: key }));
  // Many keys (more than the recent slots) still each verify only their own signatures.
  for (let i = 10; i < 30; i++) {
    const p = ed25519KeyPairFromSeed(new Uint8Array(32).fill(i));
    const s = signDetachedJws(p.seed, message, { kid: "x" });
    ok(verifyDetachedJws(parseDetachedJws(s), { payload: message, publicKey: p.publicKey }));
    ok(!ed25519Verify(a.publicKey, message, parseDetachedJws(s).signature));
  }
});

Deno.test("a header parsed again and again keeps its one slot: the other known headers stay known", () => {
  const kept = encoder.encode(signDetachedJws(pair.seed, payload, { kid: "scan-kept" }));
  parseDetachedJws(kept);
  const busy = encoder.encode(signDetachedJws(pair.seed, payload, { kid: "scan-busy" }));
  // More parses of one header than there are slots: remembered once, nothing pushed out.
  for (let i = 0; i < 40; i++) parseDetachedJws(busy);
  ok(scanDetachedJws(kept) !== undefined, "the first header was pushed out by repeats");
  ok(scanDetachedJws(busy) !== undefined);
});
