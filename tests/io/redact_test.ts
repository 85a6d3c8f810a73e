import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { toBase64, toHex } from "../../src/canonical/mod.ts";
import { SecretRedactor } from "../../src/io/mod.ts";

const SECRET = "ghp_S3cretValue0123456789";
const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("text and json lose every registered value, as written and encoded", () => {
  const r = new SecretRedactor();
  strictEqual(r.text(`a ${SECRET}`), `a ${SECRET}`); // nothing registered yet
  r.add(SECRET, "connection gh");
  strictEqual(r.size, 1);
  const b64 = toBase64(enc.encode(SECRET)).replace(/=+$/, "");
  const hex = toHex(enc.encode(SECRET));
  const out = r.text(`x${SECRET}y ${b64} ${hex} ${SECRET}`);
  strictEqual(out.includes(SECRET) || out.includes(b64) || out.includes(hex), false, out);
  strictEqual(out.split("[REDACTED: connection gh]").length - 1, 4);
  const j = r.json({ [SECRET]: [1, null, { s: `pre${SECRET}` }], n: 2 });
  deepStrictEqual(j, {
    "[REDACTED: connection gh]": [1, null, { s: "pre[REDACTED: connection gh]" }],
    n: 2,
  });
  deepStrictEqual(r.secrets(), [{ name: "connection gh", value: SECRET }]);
});

Deno.test("a value split across chunks at every offset is redacted in the stream", () => {
  const r = new SecretRedactor();
  r.add(SECRET, "c");
  const text = `before ${SECRET} middle ${SECRET}after`;
  const bytes = enc.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    for (const second of [cut, Math.min(bytes.length, cut + 3)]) {
      const s = r.stream();
      const parts = [
        s.push(bytes.subarray(0, cut)),
        s.push(bytes.subarray(cut, second)),
        s.push(bytes.subarray(second)),
        s.end(),
      ];
      strictEqual(
        parts.map((p) => dec.decode(p)).join(""),
        "before [REDACTED: c] middle [REDACTED: c]after",
        `cut at ${cut}/${second}`,
      );
    }
  }
});

Deno.test("with nothing registered the stream passes chunks through untouched", () => {
  const r = new SecretRedactor();
  const s = r.stream();
  const chunk = enc.encode("plain");
  strictEqual(s.push(chunk), chunk);
  strictEqual(s.end().length, 0);
  // Registered later: applies from then on.
  r.add(SECRET, "late");
  ok(dec.decode(s.push(enc.encode(`${SECRET}\n`))) + dec.decode(s.end()) === "[REDACTED: late]\n");
});
