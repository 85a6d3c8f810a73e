// Certification receipts: signed over their canonical bytes with the operator key, and refused
// step by step — another signer, any edited byte, another endpoint, model or engine, too old,
// graded too low, malformed.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ed25519KeyPairFromSeed } from "../../src/crypto/mod.ts";
import {
  parseReceipt,
  type ReceiptBody,
  type ReceiptExpectation,
  signReceipt,
  verifyReceipt,
} from "../../src/providers/mod.ts";

const KEY = ed25519KeyPairFromSeed(new Uint8Array(32).fill(7));
const OTHER = ed25519KeyPairFromSeed(new Uint8Array(32).fill(9));
const NOW = Date.parse("2026-12-01T12:00:00Z");

function body(overrides: Partial<ReceiptBody> = {}): ReceiptBody {
  return {
    schema: "bernstein.endpoint-receipt/1",
    name: "workhorse",
    endpoint: "http://127.0.0.1:11434/v1",
    api: "openai-chat",
    engine: "ollama",
    model: "qwen2.5-coder:7b",
    grade: "advanced",
    checks: [{ name: "completion", ok: true, detail: "answered", ms: 12 }],
    latency_ms: { n: 5, p50: 10, p95: 14, max: 14 },
    context_tokens: { claimed: 32768, sent: 32512, ok: true },
    certified_at: "2026-11-30T12:00:00.000Z",
    bernstein: "0.0.0-test",
    ...overrides,
  };
}

function want(overrides: Partial<ReceiptExpectation> = {}): ReceiptExpectation {
  return {
    base_url: "http://127.0.0.1:11434/v1/",
    model: "qwen2.5-coder:7b",
    engine: "ollama",
    publicKey: KEY.publicKey,
    nowMs: NOW,
    maxAgeDays: 30,
    minGrade: "advanced",
    ...overrides,
  };
}

Deno.test("a signed receipt verifies for its own endpoint, model and engine (trailing slash aside)", () => {
  const receipt = signReceipt(body(), KEY);
  strictEqual(verifyReceipt(receipt, want()), undefined);
  // Round trip through its file text.
  const parsed = parseReceipt(JSON.stringify(receipt, null, 2));
  deepStrictEqual(parsed, receipt);
});

Deno.test("a receipt is refused with the reason of the first step that fails", () => {
  const receipt = signReceipt(body(), KEY);
  const code = (r: typeof receipt, w = want()) => verifyReceipt(r, w)?.code;
  strictEqual(code(signReceipt(body(), OTHER)), "receipt.foreign_signer");
  // Any edited member breaks the signature: the grade, a check, the date.
  strictEqual(code({ ...receipt, grade: "expert" }), "receipt.bad_signature");
  strictEqual(
    code({ ...receipt, checks: [{ ...receipt.checks[0], ok: false }] }),
    "receipt.bad_signature",
  );
  strictEqual(
    code({ ...receipt, certified_at: "2026-12-01T00:00:00.000Z" }),
    "receipt.bad_signature",
  );
  strictEqual(
    code(receipt, want({ base_url: "http://127.0.0.1:8080/v1" })),
    "receipt.endpoint_mismatch",
  );
  strictEqual(code(receipt, want({ model: "llama3" })), "receipt.model_mismatch");
  strictEqual(code(receipt, want({ engine: "vllm" })), "receipt.engine_mismatch");
  strictEqual(code(receipt, want({ maxAgeDays: 0.5 })), "receipt.stale");
  strictEqual(
    code(signReceipt(body({ certified_at: "2026-12-03T00:00:00.000Z" }), KEY)),
    "receipt.stale",
  );
  strictEqual(code(signReceipt(body({ grade: "basic" }), KEY)), "receipt.grade_too_low");
  strictEqual(
    code(signReceipt(body({ grade: "none" }), KEY), want({ minGrade: "basic" })),
    "receipt.grade_too_low",
  );
});

Deno.test("malformed receipt files are refused with the field that is wrong", () => {
  const receipt = signReceipt(body(), KEY);
  const bad = (text: string) => {
    const r = parseReceipt(text);
    return "code" in r ? `${r.code}: ${r.message}` : "parsed";
  };
  strictEqual(bad("{not json").startsWith("receipt.malformed: not JSON"), true);
  strictEqual(
    bad(JSON.stringify({ ...receipt, grade: "superb" })).startsWith("receipt.malformed: grade"),
    true,
  );
  strictEqual(bad(JSON.stringify({ ...receipt, extra: 1 })).startsWith("receipt.malformed"), true);
  const { signature: _s, ...unsigned } = receipt;
  strictEqual(bad(JSON.stringify(unsigned)).startsWith("receipt.malformed: signature"), true);
  strictEqual(
    verifyReceipt({ ...receipt, signature: "@@@" }, want())?.code,
    "receipt.malformed",
  );
});
