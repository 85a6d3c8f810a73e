// The plain-line fast path (src/lineage/entry_line.ts): on every line it reads, exactly the entry
// the strict way (parseCanonicalLine + parseEntry) gives, same fields in the same order; on every
// line the strict way refuses, nothing. Hostile lines by hand, then seeded byte mutations.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseCanonicalLine } from "../../src/canonical/mod.ts";
import {
  entryBytes,
  type LineageEntry,
  parseEntry,
  plainEntryOfLine,
  sealEntry,
} from "../../src/lineage/mod.ts";

const KEY = new TextEncoder().encode("k");
const encoder = new TextEncoder();
const base = {
  artefact_path: "src/app.ts",
  artefact_kind: "file" as const,
  content_hash: "sha256:" + "a".repeat(64),
  parent_hashes: ["sha256:" + "b".repeat(64), "sha256:" + "c".repeat(64)],
  agent_id: "claude-1",
  agent_card_kid: "0123456789abcdef",
  tool_call_id: "toolu_1",
  span_id: "span",
  ts_ns: 1_767_225_600_123_456_789n,
};

/** What the strict way gives: the entry, or undefined when it refuses the line. */
function strictEntry(bytes: Uint8Array): LineageEntry | undefined {
  const parsed = parseCanonicalLine(bytes, "canon");
  if (!parsed.ok) return undefined;
  try {
    return parseEntry(parsed.value);
  } catch {
    return undefined;
  }
}

/** The fast path either says nothing or says exactly what the strict way says. */
function agrees(bytes: Uint8Array, label: string): LineageEntry | undefined {
  const fast = plainEntryOfLine(bytes);
  if (fast === undefined) return undefined;
  const strict = strictEntry(bytes);
  ok(strict !== undefined, `${label}: fast path accepted a line the strict path refuses`);
  deepStrictEqual(fast, strict, label);
  deepStrictEqual(Object.keys(fast), Object.keys(strict), `${label}: field order`);
  return fast;
}

const plain = new TextDecoder().decode(entryBytes(sealEntry(base, KEY)));

Deno.test("plain lines written by sealEntry are read fast, as the strict way reads them", () => {
  const variants: LineageEntry[] = [
    sealEntry(base, KEY),
    sealEntry({ ...base, parent_hashes: [] }, KEY),
    sealEntry({ ...base, ts_ns: 0n }, KEY),
    sealEntry({ ...base, ts_ns: (1n << 63n) - 1n }, KEY),
    sealEntry({ ...base, ts_ns: 42n }, KEY),
    sealEntry({ ...base, tool_call_id: "", span_id: "" }, KEY),
    sealEntry({ ...base, trust_class: "third_party" }, KEY),
    sealEntry({ ...base, attachment_digests: ["d".repeat(64), "e".repeat(64)] }, KEY),
    sealEntry({ ...base, activity_source: "adapter" }, KEY),
    sealEntry({
      ...base,
      trust_class: "operator",
      attachment_digests: ["f".repeat(64)],
      activity_source: "scheduler",
    }, KEY),
    sealEntry(
      { ...base, artefact_path: "pkg://npm/left-pad/1.3.0", artefact_kind: "external" },
      KEY,
    ),
    sealEntry({ ...base, agent_id: "a b ~!#$%&'()*+,-./:;<=>?@[]^_`{|}" }, KEY),
  ];
  for (const [i, entry] of variants.entries()) {
    const read = agrees(entryBytes(entry), `variant ${i}`);
    ok(read !== undefined, `variant ${i} should take the fast path`);
    deepStrictEqual(read, entry);
  }
});

Deno.test("hostile lines: the fast path reads none the strict way refuses, and agrees on the rest", () => {
  const hostile: [string, string][] = [
    ["space after colon", plain.replace('"v":1', '"v": 1')],
    ["space after comma", plain.replace(',"v"', ', "v"')],
    ["leading space", " " + plain],
    ["trailing space", plain + " "],
    ["trailing CR", plain + "\r"],
    ["BOM", "\ufeff" + plain],
    ["escaped letter", plain.replace('"span"', '"sp\\u0061n"')],
    ["escaped slash", plain.replace('"src/app.ts"', '"src\\/app.ts"')],
    ["escaped quote", plain.replace('"toolu_1"', '"tool\\"u_1"')],
    ["duplicate key", plain.replace('"v":1}', '"v":1,"v":1}')],
    [
      "keys out of order",
      plain.replace(
        /"span_id":"span","tool_call_id":"toolu_1"/,
        '"tool_call_id":"toolu_1","span_id":"span"',
      ),
    ],
    ["unknown field", plain.replace('"v":1}', '"v":1,"w":1}')],
    ["__proto__ field", plain.replace("{", '{"__proto__":1,')],
    ["missing field", plain.replace('"span_id":"span",', "")],
    ["v is 2", plain.replace('"v":1', '"v":2')],
    ["v is 1.0", plain.replace('"v":1', '"v":1.0')],
    ["v is 10", plain.replace('"v":1', '"v":10')],
    ["v is true", plain.replace('"v":1', '"v":true')],
    ["v is a string", plain.replace('"v":1', '"v":"1"')],
    ["ts 2^63", plain.replace(/"ts_ns":\d+/, '"ts_ns":9223372036854775808')],
    ["ts 20 digits", plain.replace(/"ts_ns":\d+/, '"ts_ns":12345678901234567890')],
    ["ts leading zero", plain.replace(/"ts_ns":\d+/, '"ts_ns":0123')],
    ["ts negative", plain.replace(/"ts_ns":\d+/, '"ts_ns":-1')],
    ["ts minus zero", plain.replace(/"ts_ns":\d+/, '"ts_ns":-0')],
    ["ts float", plain.replace(/"ts_ns":\d+/, '"ts_ns":1.5')],
    ["ts exponent", plain.replace(/"ts_ns":\d+/, '"ts_ns":1e18')],
    ["ts string", plain.replace(/"ts_ns":(\d+)/, '"ts_ns":"$1"')],
    ["ts empty", plain.replace(/"ts_ns":\d+/, '"ts_ns":')],
    ["unicode path", plain.replace('"src/app.ts"', '"src/é.ts"')],
    ["raw control char", plain.replace('"span"', '"sp\tan"')],
    ["DEL", plain.replace('"span"', '"sp\x7fan"')],
    ["path traversal", plain.replace('"src/app.ts"', '"src/../etc/passwd"')],
    ["absolute path", plain.replace('"src/app.ts"', '"/etc/passwd"')],
    ["backslash traversal", plain.replace('"src/app.ts"', '"src\\\\..\\\\x"')],
    ["empty path", plain.replace('"src/app.ts"', '""')],
    ["bad URI scheme", plain.replace('"src/app.ts"', '"ftp://x/y"')],
    ["unknown kind", plain.replace('"file"', '"folder"')],
    ["upper-case hash", plain.replace("sha256:" + "a".repeat(64), "sha256:" + "A".repeat(64))],
    ["short hash", plain.replace("sha256:" + "a".repeat(64), "sha256:" + "a".repeat(63))],
    ["sha512 prefix", plain.replace("sha256:" + "a".repeat(64), "sha512:" + "a".repeat(64))],
    ["bad parent", plain.replace("sha256:" + "b".repeat(64), "sha256:" + "g".repeat(64))],
    ["parent not a string", plain.replace(/"parent_hashes":\[[^\]]*\]/, '"parent_hashes":[1]')],
    ["parents not a list", plain.replace(/"parent_hashes":\[[^\]]*\]/, '"parent_hashes":"x"')],
    [
      "parents trailing comma",
      plain.replace(/"parent_hashes":\[([^\]]*)\]/, '"parent_hashes":[$1,]'),
    ],
    ["parents unclosed", plain.replace(/"parent_hashes":\[([^\]]*)\]/, '"parent_hashes":[$1')],
    ["empty agent", plain.replace('"claude-1"', '""')],
    ["empty kid", plain.replace('"0123456789abcdef"', '""')],
    ["agent a number", plain.replace('"claude-1"', "7")],
    ["null hmac", plain.replace(/"operator_hmac":"[0-9a-f]*"/, '"operator_hmac":null')],
    ["bad trust", plain.replace('"tool_call_id"', '"trust_class":"root","tool_call_id"')],
    ["trust null", plain.replace('"tool_call_id"', '"trust_class":null,"tool_call_id"')],
    ["empty digests", plain.replace('"content_hash"', '"attachment_digests":[],"content_hash"')],
    [
      "digest prefixed",
      plain.replace(
        '"content_hash"',
        `"attachment_digests":["sha256:${"d".repeat(64)}"],"content_hash"`,
      ),
    ],
    ["bad source", plain.replace('"agent_card_kid"', '"activity_source":"me","agent_card_kid"')],
    [
      "model_ref",
      plain.replace(
        '"operator_hmac"',
        '"model_ref":{"model_reported":null,"model_requested":"m","provider":"local","routing_decision_hash":"","version":null},"operator_hmac"',
      ),
    ],
    ["truncated", plain.slice(0, -1)],
    ["two objects", plain + plain],
    ["array", `[${plain}]`],
    ["empty", ""],
    ["just braces", "{}"],
    ["nested quote unclosed", plain.replace('"span"', '"span')],
  ];
  // Valid lines that are not the plain form: the strict way reads them, the fast path leaves them.
  const validNotPlain = new Set(["model_ref", "unicode path", "DEL", "escaped quote"]);
  for (const [label, text] of hostile) {
    const bytes = encoder.encode(text);
    strictEqual(plainEntryOfLine(bytes), undefined, `${label}: read fast`);
    strictEqual(strictEntry(bytes) !== undefined, validNotPlain.has(label), `${label}: strict`);
  }
});

Deno.test("seeded byte mutations: the fast path never accepts what the strict way refuses", () => {
  let seed = 0x2545f491;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const lines = [
    entryBytes(sealEntry(base, KEY)),
    entryBytes(sealEntry({
      ...base,
      trust_class: "public",
      attachment_digests: ["d".repeat(64)],
      activity_source: "adapter",
    }, KEY)),
  ];
  const alphabet = encoder.encode('{}[]",:0123456789-.eE \\/ uabcdefsv_\x7f\x00\xc3');
  let accepted = 0;
  for (let round = 0; round < 6000; round++) {
    const line = lines[round % lines.length].slice();
    const edits = 1 + Math.floor(next() * 3);
    let bytes = line;
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(next() * bytes.length);
      const kind = next();
      const b = alphabet[Math.floor(next() * alphabet.length)];
      if (kind < 0.5) {
        bytes[at] = b;
      } else if (kind < 0.75) {
        bytes = new Uint8Array([...bytes.subarray(0, at), b, ...bytes.subarray(at)]);
      } else {
        bytes = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
      }
    }
    if (agrees(bytes, `mutation ${round}: ${new TextDecoder().decode(bytes)}`) !== undefined) {
      accepted++;
    }
  }
  // Some mutations keep a valid plain line (a changed hex digit, a changed id): those the
  // fast path must still read, or the test checks nothing.
  ok(accepted > 100, `only ${accepted} mutated lines were read fast`);
});
