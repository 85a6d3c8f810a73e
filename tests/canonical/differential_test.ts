// Differential test: our serializer against CPython's json.dumps on thousands of random values.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  canonicalBytes,
  type CanonicalProfile,
  JsonFloat,
  type JsonObject,
  type JsonValue,
  parseCanonicalLine,
  parseJson,
  parseJsonBytes,
} from "../../src/canonical/mod.ts";

// A tiny deterministic PRNG (mulberry32) so failures reproduce.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INTERESTING_CODE_POINTS = [
  0x00,
  0x01,
  0x08,
  0x09,
  0x0a,
  0x0c,
  0x0d,
  0x1f,
  0x20,
  0x22,
  0x2f,
  0x5c,
  0x7e,
  0x7f,
  0x80,
  0xe9,
  0x2028,
  0x2029,
  0xd7ff,
  0xe000,
  0xfeff,
  0xfffd,
  0xffff,
  0x10000,
  0x1f600,
  0x10ffff,
];

function randomString(r: () => number): string {
  const n = Math.floor(r() * 8);
  let s = "";
  for (let i = 0; i < n; i++) {
    const pick = r();
    let cp: number;
    if (pick < 0.5) cp = 0x61 + Math.floor(r() * 26);
    else if (pick < 0.8) {
      cp = INTERESTING_CODE_POINTS[Math.floor(r() * INTERESTING_CODE_POINTS.length)];
    } else {
      cp = Math.floor(r() * 0x110000);
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x41;
    }
    s += String.fromCodePoint(cp);
  }
  return s;
}

function randomFloat(r: () => number): number {
  const pick = r();
  if (pick < 0.2) return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
  if (pick < 0.35) return Math.floor(r() * 1000) / 10;
  if (pick < 0.5) return r();
  if (pick < 0.6) {
    return [1e16, 1e15, 1e-4, 1e-5, 0.1, 1e21, 1e-7, 123456789012345680][Math.floor(r() * 8)];
  }
  const buf = new DataView(new ArrayBuffer(8));
  buf.setUint32(0, Math.floor(r() * 2 ** 32));
  buf.setUint32(4, Math.floor(r() * 2 ** 32));
  const f = buf.getFloat64(0);
  return Number.isFinite(f) ? f : 2.5;
}

function randomValue(r: () => number, depth: number): JsonValue {
  const pick = r() * (depth > 3 ? 0.7 : 1);
  if (pick < 0.08) return null;
  if (pick < 0.14) return r() < 0.5;
  if (pick < 0.24) return Math.floor((r() - 0.5) * 2 ** 40);
  if (pick < 0.3) {
    const digits = Array.from({ length: 1 + Math.floor(r() * 30) }, () => Math.floor(r() * 10));
    const big = BigInt(digits.join("")) * (r() < 0.5 ? -1n : 1n);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(big)
      : big;
  }
  if (pick < 0.42) {
    const f = randomFloat(r);
    return Number.isInteger(f) ? new JsonFloat(f) : f;
  }
  if (pick < 0.7) return randomString(r);
  if (pick < 0.85) {
    return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  }
  const obj: JsonObject = {};
  const n = Math.floor(r() * 5);
  for (let i = 0; i < n; i++) obj[randomString(r)] = randomValue(r, depth + 1);
  return obj;
}

// Encodes a value as an unambiguous typed tree Python can rebuild exactly.
type Tagged = [string, unknown];
function tag(v: JsonValue): Tagged {
  if (v === null) return ["n", null];
  if (typeof v === "boolean") return ["b", v];
  if (typeof v === "bigint") return ["i", v.toString()];
  if (typeof v === "number") {
    if (Number.isInteger(v)) return ["i", String(v)];
    const dv = new DataView(new ArrayBuffer(8));
    dv.setFloat64(0, v);
    return [
      "f",
      [...new Uint8Array(dv.buffer)].map((b) => b.toString(16).padStart(2, "0")).join(""),
    ];
  }
  if (v instanceof JsonFloat) return floatTag(v.value);
  if (typeof v === "string") return ["s", [...v].map((c) => c.codePointAt(0))];
  if (Array.isArray(v)) return ["a", v.map(tag)];
  return [
    "o",
    Object.entries(v).map(([k, x]) => [[...k].map((c) => c.codePointAt(0)), tag(x as JsonValue)]),
  ];
}
function floatTag(f: number): Tagged {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, f);
  return ["f", [...new Uint8Array(dv.buffer)].map((b) => b.toString(16).padStart(2, "0")).join("")];
}

const PYTHON = `
import json, sys, struct, base64
def build(t):
    k, v = t
    if k == "n": return None
    if k == "b": return v
    if k == "i": return int(v)
    if k == "f": return struct.unpack(">d", bytes.fromhex(v))[0]
    if k == "s": return "".join(chr(c) for c in v)
    if k == "a": return [build(x) for x in v]
    return {"".join(chr(c) for c in key): build(x) for key, x in v}
for line in sys.stdin:
    value = build(json.loads(line))
    outs = [
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8"),
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("utf-8"),
        json.dumps(value, sort_keys=True).encode("utf-8"),
    ]
    print(" ".join(base64.b64encode(o).decode() for o in outs))
`;

const PROFILES: CanonicalProfile[] = ["canon", "canon-ascii", "py-default"];

function b64decode(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

Deno.test("serializer matches CPython json.dumps on 4000 random values in all three profiles", async () => {
  const r = rng(0xb3e75);
  const values = Array.from({ length: 4000 }, () => randomValue(r, 0));
  const input = values.map((v) => JSON.stringify(tag(v))).join("\n") + "\n";
  const child = new Deno.Command("python3", {
    args: ["-c", PYTHON],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Read while writing: the pipe buffers are smaller than either stream.
  const output = child.output();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await output;
  strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
  const rows = new TextDecoder().decode(out.stdout).trimEnd().split("\n");
  strictEqual(rows.length, values.length);
  let compared = 0;
  rows.forEach((row, i) => {
    const expected = row.split(" ").map(b64decode);
    PROFILES.forEach((profile, p) => {
      const ours = canonicalBytes(values[i], profile);
      deepStrictEqual(
        new TextDecoder().decode(ours),
        new TextDecoder().decode(expected[p]),
        `value #${i} profile ${profile}`,
      );
      // And Python's bytes parse back to a value that re-serialises to the same bytes.
      deepStrictEqual(canonicalBytes(parseJsonBytes(expected[p]), profile), expected[p]);
      compared++;
    });
  });
  strictEqual(compared, 12000);
});

/**
 * What parseCanonicalLine must say: the strict parser's value when it prints back as `text`
 * (the ASCII profiles read lone surrogate escapes, as Python writes them).
 */
function strictVerdict(text: string, profile: CanonicalProfile): JsonValue | "refused" {
  try {
    const value = parseJson(text, { loneSurrogates: profile !== "canon" });
    return new TextDecoder().decode(canonicalBytes(value, profile)) === text ? value : "refused";
  } catch {
    return "refused";
  }
}

function mutations(text: string, r: () => number): string[] {
  const at = Math.floor(r() * (text.length + 1));
  return [
    text,
    text.slice(0, at) + " " + text.slice(at),
    text.replace(/(\d)(?=[,\]}]|$)/, "$1.0"),
    text.replace(/^\{"/, '{"a":1,"a":1,"'),
    text.replace(/"/, '"\\ud800'),
    text + "\t",
  ];
}

Deno.test("parseCanonicalLine: the native fast path agrees with the strict parser", () => {
  const r = rng(0x5eed);
  const edges = [
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "-9007199254740993",
    "1767225600000000000",
    "12345678901234567890123",
    // Nanosecond timestamps: JSON.parse rounds them, the fast path reads their digits.
    "1772236800123456789",
    "-1772236800123456789",
    "01772236800123456789",
    "1772236800123456789.0",
    "1772236800123456789e0",
    '{"ts_ns":1772236800123456789,"v":1}',
    '{"a":[1772236800123456789,-9223372036854775807],"ts_ns":9223372036854775807}',
    '{"ts_ns":1772236800123456789 ,"v":1}',
    "1e+16",
    "1.0",
    "-0",
    "-0.0",
    "0.1",
    '{"__proto__":{"x":1}}',
    '{"a":[1,2,{"b":9007199254740993}]}',
    '"\u2028"',
    "[".repeat(600) + "]".repeat(600),
    "[".repeat(513) + "]".repeat(513),
    "[".repeat(512) + "]".repeat(512),
  ];
  let accepted = 0;
  for (const profile of PROFILES) {
    const texts = [...edges];
    for (let i = 0; i < 1500; i++) {
      texts.push(
        ...mutations(new TextDecoder().decode(canonicalBytes(randomValue(r, 0), profile)), r),
      );
    }
    for (const mutated of texts) {
      // Lines are bytes: a mutation that split a surrogate pair reaches the parser as U+FFFD.
      const bytes = new TextEncoder().encode(mutated);
      const text = new TextDecoder().decode(bytes);
      const want = strictVerdict(text, profile);
      const got = parseCanonicalLine(bytes, profile);
      if (want === "refused") {
        strictEqual(got.ok, false, `${profile}: ${text.slice(0, 80)}`);
      } else {
        strictEqual(got.ok, true, `${profile}: ${text.slice(0, 80)}`);
        if (got.ok) deepStrictEqual(got.value, want, `${profile}: ${text.slice(0, 80)}`);
        accepted++;
      }
    }
  }
  // Most unmutated lines are canonical, so the comparison covered real values.
  strictEqual(accepted > 4000, true, `only ${accepted} lines were accepted`);
});
