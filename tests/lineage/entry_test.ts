// Entry model (FORMATS.md §4): the exact field set, value rules, canonical bytes, hash, HMAC.
import { deepStrictEqual, equal, ok, strictEqual, throws } from "node:assert/strict";
import { canonicalize, parseJson, toHex } from "../../src/canonical/mod.ts";
import { hmacSha256, sha256Hex } from "../../src/crypto/mod.ts";
import {
  artefactKeyProblem,
  checkArtefactKey,
  computeOperatorHmac,
  entryBytes,
  entryHash,
  entryToJson,
  type LineageEntry,
  LineageEntryError,
  operatorHmacInput,
  parseEntry,
  sealEntry,
} from "../../src/lineage/mod.ts";

const KEY = new TextEncoder().encode("k");
const base = {
  artefact_path: "src/app.ts",
  artefact_kind: "file" as const,
  content_hash: "sha256:" + "a".repeat(64),
  parent_hashes: [],
  agent_id: "claude-1",
  agent_card_kid: "0123456789abcdef",
  tool_call_id: "toolu_1",
  span_id: "span",
  ts_ns: 1_767_225_600_123_456_789n,
};

Deno.test("entry bytes are canon: sorted keys, no spaces, raw UTF-8, exact ts_ns above 2^53", () => {
  const entry = sealEntry({ ...base, artefact_path: "docs/é.md" }, KEY);
  const text = new TextDecoder().decode(entryBytes(entry));
  strictEqual(
    text,
    `{"agent_card_kid":"0123456789abcdef","agent_id":"claude-1","artefact_kind":"file",` +
      `"artefact_path":"docs/é.md","content_hash":"sha256:${"a".repeat(64)}",` +
      `"operator_hmac":"${entry.operator_hmac}","parent_hashes":[],"span_id":"span",` +
      `"tool_call_id":"toolu_1","ts_ns":1767225600123456789,"v":1}`,
  );
  strictEqual(entryHash(entry), "sha256:" + sha256Hex(entryBytes(entry)));
  // Round trip through the BigInt-safe parser keeps every byte.
  deepStrictEqual(parseEntry(parseJson(text)), entry);
});

Deno.test("optional fields are omitted when absent and never written as null", () => {
  const plain = sealEntry(base, KEY);
  ok(!canonicalize(entryToJson(plain), "canon").includes("trust_class"));
  ok(!canonicalize(entryToJson(plain), "canon").includes("attachment_digests"));
  const withOptional = sealEntry({
    ...base,
    trust_class: "third_party",
    attachment_digests: ["b".repeat(64)],
  }, KEY);
  const text = canonicalize(entryToJson(withOptional), "canon");
  ok(text.includes(`"attachment_digests":["${"b".repeat(64)}"]`));
  ok(text.includes('"trust_class":"third_party"'));
  // Adding optional fields changes the hash; an entry without them keeps its old bytes.
  equal(entryHash(plain) === entryHash(withOptional), false);
  const nulls = JSON.parse(canonicalize(entryToJson(plain), "canon"));
  nulls.trust_class = null;
  throws(() => parseEntry(nulls), /trust_class/);
});

Deno.test("operator_hmac is HMAC-SHA256 over the canon bytes with operator_hmac blanked", () => {
  const entry = sealEntry(base, KEY);
  const blanked = entryBytes({ ...entry, operator_hmac: "" });
  deepStrictEqual(operatorHmacInput(entry), blanked);
  strictEqual(entry.operator_hmac, toHex(hmacSha256(KEY, blanked)));
  strictEqual(computeOperatorHmac(entry, KEY), entry.operator_hmac);
  ok(new TextDecoder().decode(blanked).includes('"operator_hmac":""'));
});

function bad(mutate: (e: Record<string, unknown>) => void): Record<string, unknown> {
  const obj = JSON.parse(
    canonicalize(entryToJson(sealEntry(base, KEY)), "canon").replace(
      /"ts_ns":\d+/,
      '"ts_ns":1',
    ),
  );
  mutate(obj);
  return obj;
}

Deno.test("the parser refuses every field-rule violation with the field's name", () => {
  const cases: [string, (e: Record<string, unknown>) => void][] = [
    ["extra", (e) => (e.extra = 1)],
    ["v", (e) => (e.v = 2)],
    ["v", (e) => (e.v = "1")],
    ["artefact_path", (e) => (e.artefact_path = "/etc/passwd")],
    ["artefact_path", (e) => (e.artefact_path = "a/../b")],
    ["artefact_path", (e) => (e.artefact_path = "")],
    ["artefact_path", (e) => (e.artefact_path = "ftp://x/y")],
    ["artefact_kind", (e) => (e.artefact_kind = "files")],
    ["content_hash", (e) => (e.content_hash = "sha256:" + "A".repeat(64))],
    ["content_hash", (e) => (e.content_hash = "a".repeat(64))],
    ["parent_hashes", (e) => (e.parent_hashes = "x")],
    ["parent_hashes[0]", (e) => (e.parent_hashes = ["sha256:123"])],
    ["agent_id", (e) => (e.agent_id = "")],
    ["agent_card_kid", (e) => (e.agent_card_kid = 5)],
    ["tool_call_id", (e) => delete e.tool_call_id],
    ["ts_ns", (e) => (e.ts_ns = -1)],
    ["ts_ns", (e) => (e.ts_ns = 1.5)],
    ["ts_ns", (e) => (e.ts_ns = "1")],
    ["trust_class", (e) => (e.trust_class = "root")],
    ["attachment_digests", (e) => (e.attachment_digests = [])],
    ["attachment_digests[0]", (e) => (e.attachment_digests = ["sha256:" + "a".repeat(64)])],
    ["operator_hmac", (e) => delete e.operator_hmac],
  ];
  for (const [field, mutate] of cases) {
    const obj = bad(mutate);
    let error: unknown;
    try {
      parseEntry(obj as never);
    } catch (e) {
      error = e;
    }
    ok(error instanceof LineageEntryError, `${field}: expected a LineageEntryError`);
    ok((error as Error).message.startsWith(field), `${field}: got ${(error as Error).message}`);
    strictEqual((error as LineageEntryError).code, "lineage.entry_invalid");
  }
});

Deno.test("an integral float ts_ns (1.0) is refused: only integers are exact", () => {
  const text = canonicalize(entryToJson(sealEntry(base, KEY)), "canon").replace(
    /"ts_ns":\d+/,
    '"ts_ns":1.0',
  );
  throws(() => parseEntry(parseJson(text)), /ts_ns/);
});

Deno.test("sealEntry refuses what the parser would refuse, before computing anything", () => {
  throws(() => sealEntry({ ...base, artefact_path: "../x" }, KEY), LineageEntryError);
  throws(
    () => sealEntry({ ...base, attachment_digests: [] } as unknown as typeof base, KEY),
    LineageEntryError,
  );
});

Deno.test("artefact keys: repo paths and the four canonical URI schemes", () => {
  const good = [
    "src/a.ts",
    "a",
    ".github/workflows/ci.yml",
    "dir with space/file.txt",
    "pr://github.com/acme/widget/12",
    "pkg://npm/@scope/name/1.2.3",
    "deploy://prod/docs-site",
    "doc://example.test/lineage",
    "doc://example.test:8443/a/b",
  ];
  for (const k of good) strictEqual(artefactKeyProblem(k), undefined, k);
  const badKeys: [string, RegExp][] = [
    ["", /empty/],
    ["/abs", /absolute/],
    ["C:\\x", /Windows/],
    ["a/../b", /'\.\.'/],
    ["a\\..\\b", /'\.\.'/],
    ["a\0b", /NUL/],
    ["ftp://host/x", /unknown scheme/],
    ["PR://github.com/a/b/1", /canonical/],
    ["pr://GitHub.com/a/b/1", /authority/],
    ["pr://github.com/a/b/x", /pull-request number/],
    ["pr://github.com/a/1", /at least 3/],
    ["pkg://npm/x", /at least 2/],
    ["doc://example.test/a/", /trailing/],
    ["doc://example.test//a", /empty path segment/],
    ["doc://example.test/a%20b", /percent/],
    ["doc://example.test/a b", /whitespace/],
    ["doc://example.test/../x", /'\.\.' segment/],
    ["doc://", /authority/],
    ["doc://a/x://y", /nested/],
  ];
  for (const [k, why] of badKeys) {
    const problem = artefactKeyProblem(k);
    ok(problem !== undefined && why.test(problem), `${JSON.stringify(k)}: ${problem}`);
  }
  throws(
    () => checkArtefactKey("../x", "plan.yaml:3"),
    (e: Error & { location?: string }) => e.location === "plan.yaml:3",
  );
});

Deno.test("entries read back from JSON equal the sealed entry field for field", () => {
  const entry: LineageEntry = sealEntry(
    { ...base, parent_hashes: ["sha256:" + "c".repeat(64)] },
    KEY,
  );
  const again = parseEntry(parseJson(canonicalize(entryToJson(entry), "canon")));
  deepStrictEqual(again, entry);
  strictEqual(typeof again.ts_ns, "bigint");
});
