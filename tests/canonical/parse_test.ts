import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import {
  canonicalize,
  JsonFloat,
  JsonParseError,
  parseCanonicalLine,
  parseJson,
  parseJsonBytes,
  splitLines,
} from "../../src/canonical/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("parser keeps integers above 2^53 exact as bigint", () => {
  deepStrictEqual(parseJson('{"ts_ns":1732900000123456789}'), { ts_ns: 1732900000123456789n });
  strictEqual(canonicalize(parseJson("[1732900000123456789]"), "canon"), "[1732900000123456789]");
  strictEqual(parseJson("9007199254740991"), 9007199254740991);
  strictEqual(parseJson("-9007199254740992"), -9007199254740992n);
});

Deno.test("parser keeps integral floats as floats so 1.0 round-trips", () => {
  const v = parseJson("[1.0, 1e+20, -0.0, 0.5]");
  deepStrictEqual(v, [new JsonFloat(1), new JsonFloat(1e20), new JsonFloat(-0), 0.5]);
  strictEqual(canonicalize(v, "py-default"), "[1.0, 1e+20, -0.0, 0.5]");
});

Deno.test("parser refuses duplicate keys, NaN, lone surrogates and trailing garbage", () => {
  for (
    const bad of [
      '{"a":1,"a":2}',
      "NaN",
      "Infinity",
      "1e999",
      '"\\ud800"',
      '"\\udc00x"',
      "01",
      "1.",
      "[1,]",
      '{"a":1,}',
      "{} x",
      '"tab\there"',
      "",
      "tru",
      '"\\x41"',
    ]
  ) {
    throws(() => parseJson(bad), JsonParseError, bad);
  }
});

Deno.test("parser refuses invalid UTF-8 instead of substituting U+FFFD", () => {
  throws(() => parseJsonBytes(new Uint8Array([0x22, 0xff, 0x22])), JsonParseError);
  throws(() => parseJsonBytes(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22])), JsonParseError);
});

Deno.test("a __proto__ key is data, not a prototype change", () => {
  const v = parseJson('{"__proto__":{"x":1}}') as Record<string, unknown>;
  strictEqual(Object.getPrototypeOf(v), Object.prototype);
  deepStrictEqual(Object.keys(v), ["__proto__"]);
  strictEqual(canonicalize(v as never, "canon"), '{"__proto__":{"x":1}}');
});

Deno.test("deep nesting is refused rather than overflowing the stack", () => {
  throws(() => parseJson("[".repeat(100_000)), JsonParseError);
});

Deno.test("keys sort by code point, not UTF-16 unit (astral after U+FFFF)", () => {
  strictEqual(canonicalize({ "\u{1f600}": 1, "\uffff": 2 }, "canon"), '{"\uffff":2,"\u{1f600}":1}');
  strictEqual(
    canonicalize({ "\u{1f600}": 1, "\uffff": 2 }, "canon-ascii"),
    '{"\\uffff":2,"\\ud83d\\ude00":1}',
  );
});

Deno.test("serializer refuses values with no JSON form", () => {
  throws(() => canonicalize(NaN, "canon"));
  throws(() => canonicalize(Infinity, "canon"));
  throws(() => canonicalize("\ud800", "canon"));
  throws(() => canonicalize(new Date(0) as never, "canon"));
  throws(() => canonicalize([undefined] as never, "canon"));
});

Deno.test("undefined properties are omitted, never written as null", () => {
  strictEqual(canonicalize({ a: 1, b: undefined }, "canon"), '{"a":1}');
});

Deno.test("profiles differ only in separators and escaping", () => {
  const v = { b: [1, "é\n/"], a: null };
  strictEqual(canonicalize(v, "canon"), '{"a":null,"b":[1,"é\\n/"]}');
  strictEqual(canonicalize(v, "canon-ascii"), '{"a":null,"b":[1,"\\u00e9\\n/"]}');
  strictEqual(canonicalize(v, "py-default"), '{"a": null, "b": [1, "\\u00e9\\n/"]}');
  strictEqual(canonicalize("\u007f\u0001", "canon"), '"\u007f\\u0001"');
  strictEqual(canonicalize("\u007f", "canon-ascii"), '"\\u007f"');
});

Deno.test("byte binding rejects reordered keys, spaces, CR and escaped forms", () => {
  strictEqual(parseCanonicalLine(enc('{"a":1,"b":2}'), "canon").ok, true);
  for (
    const bad of [
      '{"b":2,"a":1}',
      '{"a": 1,"b":2}',
      '{"a":1,"b":2}\r',
      '{"a":"\\u00e9"}',
      '{"a":"\\/"}',
    ]
  ) {
    const r = parseCanonicalLine(enc(bad), "canon");
    strictEqual(r.ok, false, bad);
    if (!r.ok) strictEqual(r.reason, "non-canonical line bytes");
  }
  const broken = parseCanonicalLine(enc('{"a":'), "canon");
  strictEqual(broken.ok ? "" : broken.reason, "invalid JSON");
});

Deno.test("splitLines splits on LF only and reports a missing final newline", () => {
  const a = splitLines(enc("x\r\ny\n"));
  deepStrictEqual(a.lines.map((l) => new TextDecoder().decode(l)), ["x\r", "y"]);
  strictEqual(a.endsWithNewline, true);
  const b = splitLines(enc("x\ny"));
  strictEqual(b.endsWithNewline, false);
  strictEqual(b.lines.length, 2);
  deepStrictEqual(splitLines(new Uint8Array()), { lines: [], endsWithNewline: true });
});

Deno.test("lone surrogates: escaped in the ASCII profiles exactly as CPython's json writes them, refused in canon", async () => {
  const value = { a: "x\udc80y", b: "\ud800", c: "\ud83d\ude00\udfff" };
  const out = await new Deno.Command("python3", {
    args: [
      "-c",
      'import json; print(json.dumps({"a": "x\\udc80y", "b": "\\ud800", "c": "\\U0001f600\\udfff"}, sort_keys=True), end="")',
    ],
  }).output();
  const python = new TextDecoder().decode(out.stdout);
  strictEqual(canonicalize(value, "py-default"), python);
  const back = parseCanonicalLine(new TextEncoder().encode(python), "py-default");
  ok(back.ok);
  deepStrictEqual(back.value, value);
  throws(() => canonicalize(value, "canon"));
  ok(!parseCanonicalLine(new TextEncoder().encode('{"a":"\\udc80"}'), "canon").ok);
  throws(() => parseJson('"\\udc80"'), "the strict parser refuses them unless asked");
});
