// The pack format's small rules: member kinds, the UTC-day window, CSV quoting, fingerprints.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { LineageEntry } from "../../src/lineage/mod.ts";
import { buildPack } from "../../src/compliance/mod.ts";
import { sampleLog, samplePackContent } from "../../scripts/sample_pack.ts";
import { canonicalBytes, type JsonObject } from "../../src/canonical/mod.ts";
import {
  cardMemberName,
  checkManifestBytes,
  csvHeader,
  csvRow,
  isManifestMember,
  MANIFEST_FIELDS,
  manifestOutputHash,
  normalizeFingerprint,
  operatorBlock,
  operatorFingerprint,
  PACK_MEMBERS,
  type PackManifest,
  packMemberKind,
  packWindow,
  parsePackManifest,
  signatureMemberDigestInto,
  signatureMemberHash,
  signatureMemberName,
  utcDay,
} from "../../src/pack_format/mod.ts";
import { digestText, kidForPublicKey } from "../../src/lineage/mod.ts";
import { parseDetachedJws } from "../../src/crypto/mod.ts";

Deno.test("member names map to their kinds; anything else is unknown", () => {
  strictEqual(packMemberKind("README.md"), "readme");
  strictEqual(packMemberKind("pack-manifest.json.sig"), "manifestSignature");
  strictEqual(packMemberKind(`signatures/${"a".repeat(64)}.jws`), "signature");
  strictEqual(packMemberKind(`signatures/${"A".repeat(64)}.jws`), undefined);
  strictEqual(packMemberKind("agent-cards/claude-1/0123456789abcdef.json"), "card");
  strictEqual(packMemberKind("agent-cards/../x.json"), undefined);
  strictEqual(packMemberKind("agent-cards/a/b/c.json"), undefined);
  strictEqual(packMemberKind("notes.txt"), undefined);
  strictEqual(signatureMemberName("sha256:" + "b".repeat(64)), `signatures/${"b".repeat(64)}.jws`);
  strictEqual(cardMemberName("claude:sess/1", "k1"), "agent-cards/claude_sess_1/k1.json");
  strictEqual(cardMemberName("..", "."), "agent-cards/_../_..json");
});

Deno.test("a window is whole UTC days, both ends included; bad dates are refused", () => {
  const w = packWindow("2026-01-01", "2026-01-31");
  strictEqual(w?.days, 31);
  strictEqual(w?.startNs, BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n);
  strictEqual(w?.endNs, BigInt(Date.UTC(2026, 1, 1)) * 1_000_000n - 1n);
  strictEqual(packWindow("2026-02-01", "2026-01-31"), undefined);
  strictEqual(utcDay("2026-02-30"), undefined);
  strictEqual(utcDay("2026-1-1"), undefined);
  strictEqual(utcDay("2024-02-29"), Date.UTC(2024, 1, 29) / 86_400_000);
});

Deno.test("CSV rows quote by RFC 4180 and join parents with spaces", () => {
  const entry: LineageEntry = {
    v: 1,
    artefact_path: 'docs/a "b", c.md',
    artefact_kind: "file",
    content_hash: "sha256:" + "c".repeat(64),
    parent_hashes: ["sha256:" + "1".repeat(64), "sha256:" + "2".repeat(64)],
    agent_id: "agent-1",
    agent_card_kid: "k",
    tool_call_id: "line1\nline2",
    span_id: "",
    ts_ns: 1767225600000000001n,
    operator_hmac: "",
  };
  strictEqual(
    csvHeader(),
    "ts_ns,artefact_path,artefact_kind,content_hash,parent_hashes,agent_id,agent_card_kid,tool_call_id,span_id\n",
  );
  strictEqual(
    csvRow(entry),
    `1767225600000000001,"docs/a ""b"", c.md",file,sha256:${"c".repeat(64)},sha256:${
      "1".repeat(64)
    } sha256:${"2".repeat(64)},agent-1,k,"line1\nline2",\n`,
  );
});

Deno.test("fingerprints are accepted as people paste them", () => {
  const hex = "ab".repeat(32);
  for (const text of [hex, hex.toUpperCase(), `SHA256:${hex}`, hex.match(/../g)?.join(":") ?? ""]) {
    strictEqual(normalizeFingerprint(text), hex, text);
  }
  deepStrictEqual(
    ["", "ab", "zz".repeat(32), hex + "00"].map(normalizeFingerprint),
    [undefined, undefined, undefined, undefined],
  );
});

Deno.test("the one-pass manifest check agrees with whole serialisation, wherever output_hash sorts", () => {
  const enc = new TextEncoder();
  const cases: JsonObject[] = [
    { a: 1, output_hash: "h", z: { b: [1, { c: 2 }], a: "é", n: { deep: { x: null } } } },
    { output_hash: "h", b: 2 },
    { b: 2, output_hash: "h" },
    { only: { output_hash: "nested, not top-level" }, output_hash: "h" },
    { input_hashes: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}`, `v${i}`])) },
  ];
  for (const m of cases) {
    const bytes = canonicalBytes(m, "canon");
    deepStrictEqual(checkManifestBytes(m, bytes), {
      canonical: true,
      outputHash: manifestOutputHash(m),
    });
    const spaced = enc.encode(new TextDecoder().decode(bytes).replace(":", ": "));
    strictEqual(checkManifestBytes(m, spaced).canonical, false);
    strictEqual(checkManifestBytes(m, bytes.subarray(0, bytes.length - 1)).canonical, false);
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    longer[bytes.length] = 0x0a;
    strictEqual(checkManifestBytes(m, longer).canonical, false, "a trailing newline is refused");
  }
});

Deno.test("the manifest's native path gives the strict path's value and output hash, and refuses what it refuses", () => {
  const sample = sampleLog({ seed: 12, entries: 30 });
  const dec = new TextDecoder();
  const enc = new TextEncoder();
  // ASCII, non-ASCII (byte offsets differ from char offsets), and an escape (strict path).
  for (const org of ["Acme Bank", "Bänk 🏦 ünïcödé", 'The "Quoted" Bank']) {
    const pack = buildPack(samplePackContent(sample, { org }), sample.operator);
    const parsed = parsePackManifest(pack.manifestBytes);
    strictEqual(parsed.ok, true, org);
    if (!parsed.ok) continue;
    strictEqual(parsed.recomputedOutputHash, pack.manifest.output_hash as string, org);
    strictEqual(parsed.recomputedOutputHash, manifestOutputHash(pack.manifest), org);
    deepStrictEqual(manifestObject(parsed.manifest), pack.manifest, org);
    const text = dec.decode(pack.manifestBytes);
    for (
      const bad of [
        text.replace('":', '": '),
        text + "\n",
        text.replace('{"article12"', '{"zz":1,"article12"'),
        text.replace('"org":', '"org":"x","org":'),
        text.replace(
          /"entry_count":(\d+),"external_parents"/,
          '"entry_count":$1.0,"external_parents"',
        ),
      ]
    ) {
      const r = parsePackManifest(enc.encode(bad));
      strictEqual(r.ok, false, bad.slice(0, 60));
    }
  }
});

/** A parsed manifest as the JSON object it was parsed from. */
function manifestObject(m: PackManifest): JsonObject {
  const listed: JsonObject = {};
  for (let i = 0; i < m.input_hashes.count; i++) {
    listed[m.input_hashes.name(i)] = m.input_hashes.hash(i);
  }
  return { ...m, period: { ...m.period }, operator: { ...m.operator }, input_hashes: listed };
}

Deno.test("input_hashes is read in place from the bytes, and anything unusual in it is refused as before", () => {
  const sample = sampleLog({ seed: 5, entries: 20 });
  const pack = buildPack(samplePackContent(sample), sample.operator);
  const text = new TextDecoder().decode(pack.manifestBytes);
  const enc = new TextEncoder();
  const parsed = parsePackManifest(pack.manifestBytes);
  strictEqual(parsed.ok, true);
  if (!parsed.ok) return;
  const listed = parsed.manifest.input_hashes;
  const names = Object.keys(pack.manifest.input_hashes as JsonObject);
  strictEqual(listed.count, names.length);
  const digest = new Uint8Array(32);
  for (let i = 0; i < listed.count; i++) {
    strictEqual(listed.name(i), names[i]);
    listed.digestInto(i, digest, 0);
    strictEqual(
      "sha256:" + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
      listed.hash(i),
    );
  }
  const [first, second] = names;
  const firstHash = (pack.manifest.input_hashes as JsonObject)[first] as string;
  const secondHash = (pack.manifest.input_hashes as JsonObject)[second] as string;
  const pairs = `"${first}":"${firstHash}","${second}":"${secondHash}"`;
  const cases: [string, string][] = [
    // Out of order: not canonical.
    [text.replace(pairs, `"${second}":"${secondHash}","${first}":"${firstHash}"`), "not canonical"],
    // Twice.
    [text.replace(pairs, `"${first}":"${firstHash}","${first}":"${firstHash}"`), "duplicate key"],
    // An escaped name is not the canonical print of that name.
    [text.replace(`"${first}":`, `"${first.replace("R", "\\u0052")}":`), "not canonical"],
    // Upper-case hex, or not a string.
    [text.replace(firstHash, firstHash.toUpperCase()), "must be sha256: + 64 hex"],
    [text.replace(`"${firstHash}"`, "1"), "must be sha256: + 64 hex"],
  ];
  for (const [bad, words] of cases) {
    strictEqual(bad === text, false, words);
    const r = parsePackManifest(enc.encode(bad));
    strictEqual(r.ok, false, bad.slice(0, 80));
    if (!r.ok) strictEqual(r.problems.some((p) => p.includes(words)), true, r.problems.join("; "));
  }
  // Every printable ASCII character but the quote and backslash reads back as itself.
  let printable = "";
  for (let c = 0x20; c < 0x7f; c++) {
    if (c !== 0x22 && c !== 0x5c) printable += String.fromCharCode(c);
  }
  const odd = parsePackManifest(enc.encode(text.replace(`"${first}":`, `"${printable}":`)));
  strictEqual(odd.ok, true);
  if (odd.ok) strictEqual(odd.manifest.input_hashes.name(0), printable);
  // A key named input_hashes inside another field is not the manifest's list.
  const nested = text.replace('"article12":{', '"article12":{"0":{"input_hashes":{"x":"y"}},');
  const r = parsePackManifest(enc.encode(nested));
  strictEqual(r.ok, true);
  if (r.ok) strictEqual(r.manifest.input_hashes.count, names.length);
});

Deno.test("a signature member name reads back to its entry hash; other names to nothing", () => {
  const hash = "sha256:" + "c0".repeat(32);
  strictEqual(signatureMemberHash(signatureMemberName(hash)), hash);
  for (
    const name of [
      `signatures/${"C0".repeat(32)}.jws`,
      `signatures/${"c0".repeat(31)}.jws`,
      `signatures/${"c0".repeat(32)}.json`,
      `sig/${"c0".repeat(32)}.jws`,
      PACK_MEMBERS.manifestSignature,
    ]
  ) strictEqual(signatureMemberHash(name), undefined, name);
});

Deno.test("a signature member name's digest is read in place exactly when its hash reads back", () => {
  // Every one-character change of a member name, at every position, to characters around the
  // hex ranges (upper case, neighbours of 0-9 and a-f, non-ASCII that masks onto a digit, the
  // separators), plus cut, padded and look-alike names: the in-place reader (the verifier's
  // signature store) accepts a name exactly when signatureMemberHash does, with its digest.
  const good = signatureMemberName("sha256:" + "0123456789abcdef".repeat(4));
  const swaps = [
    "0",
    "9",
    "a",
    "f",
    "A",
    "F",
    "g",
    "/",
    ":",
    "`",
    "@",
    ".",
    "\u0130",
    "\u0561",
    "\uff10",
  ];
  const names = [good, good.slice(0, -1), good + "s", "x" + good, good.replace(".jws", ".JWS")];
  for (let i = 0; i < good.length; i++) {
    for (const c of swaps) names.push(good.slice(0, i) + c + good.slice(i + 1));
  }
  const out = new Uint8Array(40);
  let accepted = 0;
  for (const name of names) {
    const hash = signatureMemberHash(name);
    const read = signatureMemberDigestInto(name, out, 8);
    strictEqual(read, hash !== undefined, name);
    if (read) {
      accepted++;
      strictEqual(digestText(out, 8), hash, name);
    }
  }
  // The good name and the swaps to other lowercase hex digits inside the hex part.
  strictEqual(accepted > 64, true);
});

Deno.test("the manifest and its signature are the members input_hashes never lists", () => {
  strictEqual(isManifestMember(PACK_MEMBERS.manifest), true);
  strictEqual(isManifestMember(PACK_MEMBERS.manifestSignature), true);
  for (const name of Object.values(PACK_MEMBERS)) {
    if (name !== PACK_MEMBERS.manifest && name !== PACK_MEMBERS.manifestSignature) {
      strictEqual(isManifestMember(name), false, name);
    }
  }
});

Deno.test("the builder writes exactly the manifest fields, the operator block and the JWS kid of the format", () => {
  const sample = sampleLog({ seed: 3, entries: 5 });
  const pack = buildPack(samplePackContent(sample), sample.operator);
  deepStrictEqual(Object.keys(pack.manifest).sort(), [...MANIFEST_FIELDS]);
  const block = operatorBlock(sample.operator.publicKey);
  deepStrictEqual(pack.manifest.operator, { ...block });
  strictEqual(block.kid, kidForPublicKey(sample.operator.publicKey));
  strictEqual(block.public_key_sha256, operatorFingerprint(sample.operator.publicKey));
  const sig = pack.members.get(PACK_MEMBERS.manifestSignature);
  strictEqual(parseDetachedJws(sig ?? new Uint8Array()).header.kid, block.kid);
  for (const name of Object.keys(pack.manifest.input_hashes as JsonObject)) {
    strictEqual(isManifestMember(name), false, name);
  }
});
