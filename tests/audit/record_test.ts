import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { createHmac, hkdfSync } from "node:crypto";
import {
  type AuditChainKeys,
  auditChainKeys,
  AuditError,
  auditTimestampMicros,
  buildRecord,
  checkRecordLine,
  formatAuditTimestamp,
  GENESIS_HMAC,
  segmentNameFor,
} from "../../src/audit/mod.ts";
import { canonicalize, jsonFloat } from "../../src/canonical/mod.ts";

const K_TEXT = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const KEY = { bytes: new TextEncoder().encode(K_TEXT), path: "/nonexistent/audit.key" };
const KEYS: AuditChainKeys = auditChainKeys(KEY);
const enc = (s: string) => new TextEncoder().encode(s);
const TS = "2026-01-01T10:00:00.000000Z";

function lineOf(bytes: Uint8Array): Uint8Array {
  strictEqual(bytes[bytes.length - 1], 0x0a);
  return bytes.subarray(0, bytes.length - 1);
}

Deno.test("timestamps are UTC with six fractional digits", () => {
  strictEqual(formatAuditTimestamp(1767261600123456789n), "2026-01-01T10:00:00.123456Z");
  strictEqual(formatAuditTimestamp(0n), "1970-01-01T00:00:00.000000Z");
  strictEqual(formatAuditTimestamp(999n), "1970-01-01T00:00:00.000000Z");
  strictEqual(segmentNameFor(1767225599999999999n), "2025-12-31.jsonl");
  strictEqual(segmentNameFor(1767225600000000000n), "2026-01-01.jsonl");
  strictEqual(auditTimestampMicros("2026-01-01T10:00:00.123456Z"), 1767261600123456n);
  strictEqual(auditTimestampMicros("2026-01-01T10:00:00.123456+00:00"), 1767261600123000n);
  strictEqual(auditTimestampMicros("yesterday"), undefined);
});

Deno.test("a scheme-2 record's HMAC is HMAC(K2, prefix || prev_hmac || bytes without hmac)", () => {
  const { record, line } = buildRecord({
    actor: "orchestrator",
    event_type: "task.transition",
    resource_type: "task",
    resource_id: "t-1",
    details: { to: "done", note: "café" },
  }, { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS });
  // Independent recomputation with node:crypto from the FORMATS.md wording.
  const k2 = new Uint8Array(hkdfSync("sha256", enc(K_TEXT), new Uint8Array(0), enc("audit"), 32));
  const body = '{"actor": "orchestrator", "details": {"note": "caf\\u00e9", "to": "done"}, ' +
    '"event_type": "task.transition", "prev_hmac": "' + GENESIS_HMAC + '", ' +
    '"resource_id": "t-1", "resource_type": "task", "scheme": 2, "timestamp": "' + TS + '"}';
  const expected = createHmac("sha256", k2).update("bernstein:audit:v2" + GENESIS_HMAC + body)
    .digest("hex");
  strictEqual(record.hmac, expected);
  const text = new TextDecoder().decode(line);
  strictEqual(
    text,
    body.slice(0, -1).replace('"prev_hmac"', `"hmac": "${expected}", "prev_hmac"`) + "}\n",
  );
  const check = checkRecordLine(lineOf(line), KEYS);
  strictEqual(check.kind, "record");
  ok(check.kind === "record" && check.hmacOk && check.claimOk && !check.legacy);
});

Deno.test("a legacy record (no scheme) uses K directly and no prefix", () => {
  const body = '{"actor": "a", "details": {}, "event_type": "e", "prev_hmac": "' + GENESIS_HMAC +
    '", "resource_id": "r", "resource_type": "t", "timestamp": "2025-01-01T00:00:00.5+00:00"}';
  const hmac = createHmac("sha256", enc(K_TEXT)).update(GENESIS_HMAC + body).digest("hex");
  const line = enc(
    body.slice(0, -1).replace('"prev_hmac"', `"hmac": "${hmac}", "prev_hmac"`) + "}",
  );
  const check = checkRecordLine(line, KEYS);
  ok(check.kind === "record" && check.hmacOk && check.legacy);
  // The same bytes MAC'd with the scheme-2 construction do not pass as legacy.
  const wrong = createHmac("sha256", KEYS.v2).update("bernstein:audit:v2" + GENESIS_HMAC + body)
    .digest("hex");
  const forged = enc(new TextDecoder().decode(line).replace(hmac, wrong));
  const check2 = checkRecordLine(forged, KEYS);
  ok(check2.kind === "record" && !check2.hmacOk);
});

Deno.test("arbitrary details round-trip byte-exactly (unicode, big integers, floats, nesting)", () => {
  const details = {
    sha256: "ab".repeat(32),
    mime: "image/png",
    operator_install_id_sig: "cd".repeat(32),
    worker_id: "w-1",
    turn_seq: 0,
    worktree_id: "0123456789abcdef",
    prev_chain_digest: GENESIS_HMAC,
    nested: { list: [1, jsonFloat(2), 0.5, null, true, "\u2028 \ud83d\ude00 \n"] },
    big: 17329000001234567891n,
  };
  const { line } = buildRecord({
    actor: "a",
    event_type: "multimodal.attach",
    resource_type: "task",
    resource_id: "t",
    details,
  }, { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS });
  const check = checkRecordLine(lineOf(line), KEYS);
  ok(check.kind === "record" && check.hmacOk && check.claimOk);
  if (check.kind === "record") {
    strictEqual(
      canonicalize(check.record.details, "py-default"),
      canonicalize(details, "py-default"),
    );
    deepStrictEqual(check.record.details.big, 17329000001234567891n);
  }
});

Deno.test("event input is checked field by field", () => {
  const base = { actor: "a", event_type: "e", resource_type: "t", resource_id: "r" };
  const opts = { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS };
  throws(() => buildRecord({ ...base, actor: "" }, opts), /field 'actor' is empty/);
  throws(
    () => buildRecord({ ...base, resource_id: 5 as unknown as string }, opts),
    /'resource_id' must be a string/,
  );
  throws(
    () => buildRecord({ ...base, details: [] as unknown as Record<string, never> }, opts),
    /'details' must be an object/,
  );
  throws(
    () => buildRecord({ ...base, details: { x: NaN } }, opts),
    (e) => e instanceof AuditError && e.code === "audit.invalid_event",
  );
});

Deno.test("line checks name what is wrong: JSON, byte binding, shape, scheme", () => {
  const { line } = buildRecord(
    { actor: "a", event_type: "e", resource_type: "t", resource_id: "r" },
    { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS },
  );
  const text = new TextDecoder().decode(lineOf(line));
  const cases: [string, string, RegExp][] = [
    ["{not json", "audit.invalid_json", /invalid JSON/],
    [text.replace(", ", ","), "audit.non_canonical", /non-canonical line bytes/],
    ["[1, 2]", "audit.not_a_record", /not a JSON object/],
    [text.replace('"scheme": 2', '"scheme": 3'), "audit.unknown_scheme", /unknown scheme/],
    [
      text.replace('"actor": "a", ', '"actor": "a", "color": "red", '),
      "audit.not_a_record",
      /unexpected field 'color'/,
    ],
    [text.replace(TS, "2026-01-01T10:00:00Z"), "audit.not_a_record", /timestamp/],
  ];
  for (const [input, code, message] of cases) {
    const check = checkRecordLine(enc(input), KEYS);
    strictEqual(check.kind, "bad", input);
    if (check.kind === "bad") {
      strictEqual(check.code, code, input);
      ok(message.test(check.message), check.message);
    }
  }
  const invalidUtf8 = new Uint8Array([...lineOf(line)]);
  invalidUtf8[10] = 0xff;
  const check = checkRecordLine(invalidUtf8, KEYS);
  ok(check.kind === "bad" && check.code === "audit.invalid_json" && /UTF-8/.test(check.message));
});

Deno.test("a nested or quoted 'hmac' in details does not confuse the HMAC input", () => {
  const { line } = buildRecord({
    actor: "a",
    event_type: "e",
    resource_type: "t",
    resource_id: "r",
    details: { hmac: "ab".repeat(32), note: ', "hmac": "', z: [{ hmac: "cd".repeat(32) }] },
  }, { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS });
  const check = checkRecordLine(lineOf(line), KEYS);
  ok(check.kind === "record" && check.hmacOk);
  const altered = new TextDecoder().decode(lineOf(line)).replace('"ab', '"ac');
  const check2 = checkRecordLine(enc(altered), KEYS);
  ok(check2.kind === "record" && !check2.hmacOk);
});

Deno.test("lines the runtime JSON parser would accept differently are still judged exactly", () => {
  const { line } = buildRecord(
    { actor: "a", event_type: "e", resource_type: "t", resource_id: "r", details: { n: 1 } },
    { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS },
  );
  const text = new TextDecoder().decode(lineOf(line));
  // A duplicate key: JSON.parse keeps the last one; the exact parser refuses the line.
  const duplicate = text.replace('"actor": "a", ', '"actor": "b", "actor": "a", ');
  const dup = checkRecordLine(enc(duplicate), KEYS);
  ok(dup.kind === "bad" && dup.code === "audit.invalid_json" && /duplicate/.test(dup.message));
  // A big integer and an integral float: JSON.parse would round or drop the ".0".
  for (const value of ["17329000001234567891", "1.0", "-0.0", "1e+20"]) {
    const { line: l } = buildRecord({
      actor: "a",
      event_type: "e",
      resource_type: "t",
      resource_id: "r",
      details: {
        n: value === "17329000001234567891" ? 17329000001234567891n : jsonFloat(Number(value)),
      },
    }, { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS });
    ok(new TextDecoder().decode(l).includes(`"n": ${value}}`), value);
    const check = checkRecordLine(lineOf(l), KEYS);
    ok(check.kind === "record" && check.hmacOk, value);
  }
  // A lone surrogate escape is how Python's json writes such a string (ensure_ascii): it is
  // read exactly, so an edited one is an HMAC mismatch and one written that way verifies.
  const lone = text.replace('"r"', '"\\ud800"');
  const edited = checkRecordLine(enc(lone), KEYS);
  ok(edited.kind === "record" && !edited.hmacOk, "an edited lone surrogate verifies");
  const { line: written } = buildRecord(
    { actor: "a", event_type: "e", resource_type: "t", resource_id: "\ud800", details: {} },
    { prevHmac: GENESIS_HMAC, timestamp: TS, keys: KEYS },
  );
  ok(new TextDecoder().decode(written).includes('"resource_id": "\\ud800"'));
  const check = checkRecordLine(lineOf(written), KEYS);
  ok(check.kind === "record" && check.hmacOk && check.record.resource_id === "\ud800");
});
