/**
 * Endpoint certification receipts (FORMATS.md "Endpoint certification receipts"): what
 * `bernstein doctor --endpoint` observed of a model server — endpoint, engine, model, API,
 * grade, each check's result and timings, the date — signed with the install identity
 * (`.sdd/keys/install.key`) over its canonical bytes. Pure: building, signing and every step of
 * verification (shape, signer, signature, endpoint and model match, engine, age, grade) are
 * functions of bytes, keys and the clock's reading.
 */
import { z } from "zod";
import { canonicalBytes, fromBase64, toBase64 } from "../canonical/mod.ts";
import { ed25519Sign, ed25519Verify, sha256Hex } from "../crypto/mod.ts";
import { atLeast, type ConformanceLevel, type Grade, GRADES } from "./grades.ts";

/** `schema` of a receipt. */
export const RECEIPT_SCHEMA = "bernstein.endpoint-receipt/1";

/** Folder of receipts, relative to `.sdd/`. */
export const RECEIPTS_DIR = "endpoints";

/** A receipt's file, relative to `.sdd/`. */
export function receiptPath(name: string): string {
  return `${RECEIPTS_DIR}/${name}.receipt.json`;
}

const Check = z.object({
  name: z.string(),
  ok: z.boolean(),
  detail: z.string(),
  ms: z.number().int().nonnegative(),
}).strict();

/** The signed receipt file. */
export const ReceiptSchema = z.object({
  schema: z.literal(RECEIPT_SCHEMA),
  name: z.string().min(1),
  endpoint: z.string().min(1),
  api: z.string().min(1),
  engine: z.string().nullable(),
  model: z.string().min(1),
  grade: z.enum(GRADES as [Grade, ...Grade[]]),
  checks: z.array(Check),
  latency_ms: z.object({
    n: z.number().int().nonnegative(),
    p50: z.number().int().nonnegative(),
    p95: z.number().int().nonnegative(),
    max: z.number().int().nonnegative(),
  }).strict(),
  context_tokens: z.object({
    claimed: z.number().int().positive().nullable(),
    sent: z.number().int().nonnegative(),
    ok: z.boolean(),
  }).strict(),
  certified_at: z.string().datetime(),
  bernstein: z.string(),
  signer: z.object({
    alg: z.literal("Ed25519"),
    public_key: z.string().min(1),
  }).strict(),
  signature: z.string().min(1),
}).strict();

/** A receipt as stored. */
export type EndpointReceipt = z.infer<typeof ReceiptSchema>;

/** One conformance check's result. */
export type CheckResult = z.infer<typeof Check>;

/** A receipt before signing. */
export type ReceiptBody = Omit<EndpointReceipt, "signer" | "signature">;

/** The key that signs receipts. */
export interface ReceiptSigner {
  /** Ed25519 seed. */
  seed: Uint8Array;
  /** Its public key (32 bytes). */
  publicKey: Uint8Array;
}

function signedBytes(body: ReceiptBody, publicKey: string): Uint8Array {
  const value = { ...body, signer: { alg: "Ed25519", public_key: publicKey } };
  return canonicalBytes(value, "canon");
}

/** Signs a receipt body: the signature covers every member but `signature`. */
export function signReceipt(body: ReceiptBody, signer: ReceiptSigner): EndpointReceipt {
  const publicKey = toBase64(signer.publicKey);
  const signature = ed25519Sign(signer.seed, signedBytes(body, publicKey));
  return {
    ...body,
    signer: { alg: "Ed25519", public_key: publicKey },
    signature: toBase64(signature),
  };
}

/** The stable reason codes of a refused receipt. */
export type ReceiptProblemCode =
  | "receipt.missing"
  | "receipt.malformed"
  | "receipt.foreign_signer"
  | "receipt.bad_signature"
  | "receipt.endpoint_mismatch"
  | "receipt.model_mismatch"
  | "receipt.engine_mismatch"
  | "receipt.stale"
  | "receipt.grade_too_low";

/** Why a receipt does not certify a profile. */
export interface ReceiptProblem {
  /** Stable code. */
  code: ReceiptProblemCode;
  /** One line. */
  message: string;
}

/** What a receipt must match. */
export interface ReceiptExpectation {
  /** The profile's base URL. */
  base_url: string;
  /** The profile's model (a receipt for another model does not count). */
  model?: string;
  /** The profile's engine label, when set. */
  engine?: string;
  /** The project's operator public key (the only accepted signer). */
  publicKey: Uint8Array;
  /** Now, ms since the epoch. */
  nowMs: number;
  /** Oldest accepted receipt, in days. */
  maxAgeDays: number;
  /** Least grade. */
  minGrade: ConformanceLevel;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** URLs compared without a trailing slash. */
function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}

/** Parses receipt text: the receipt, or why it is malformed. */
export function parseReceipt(text: string): EndpointReceipt | ReceiptProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { code: "receipt.malformed", message: `not JSON: ${(error as Error).message}` };
  }
  const parsed = ReceiptSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      code: "receipt.malformed",
      message: `${issue.path.join(".") || "receipt"}: ${issue.message}`,
    };
  }
  return parsed.data;
}

/** Step 1: the signer is this install's identity key and the signature holds. */
function checkSignature(r: EndpointReceipt, publicKey: Uint8Array): ReceiptProblem | undefined {
  let signer: Uint8Array;
  let signature: Uint8Array;
  try {
    signer = fromBase64(r.signer.public_key);
    signature = fromBase64(r.signature);
  } catch {
    return { code: "receipt.malformed", message: "signer or signature is not base64" };
  }
  if (!sameBytes(signer, publicKey)) {
    return {
      code: "receipt.foreign_signer",
      message: "signed by another key than this install's identity (copied from elsewhere?)",
    };
  }
  const { signer: _s, signature: _g, ...body } = r;
  if (!ed25519Verify(publicKey, signedBytes(body, r.signer.public_key), signature)) {
    return { code: "receipt.bad_signature", message: "the signature does not match (edited?)" };
  }
  return undefined;
}

/** Step 2: the receipt is about this endpoint, model and engine. */
function checkSubject(r: EndpointReceipt, want: ReceiptExpectation): ReceiptProblem | undefined {
  if (!sameUrl(r.endpoint, want.base_url)) {
    return {
      code: "receipt.endpoint_mismatch",
      message: `certifies ${r.endpoint}, the profile says ${want.base_url}`,
    };
  }
  if (want.model !== undefined && r.model !== want.model) {
    return {
      code: "receipt.model_mismatch",
      message: `certifies model ${r.model}, the profile says ${want.model}`,
    };
  }
  if (want.engine !== undefined && r.engine !== want.engine) {
    return {
      code: "receipt.engine_mismatch",
      message: `certifies engine ${r.engine ?? "(none)"}, the profile says ${want.engine}`,
    };
  }
  return undefined;
}

/** Step 3: not older than allowed (and not from the future), and graded high enough. */
function checkFreshAndGrade(
  r: EndpointReceipt,
  want: ReceiptExpectation,
): ReceiptProblem | undefined {
  const at = Date.parse(r.certified_at);
  const ageDays = (want.nowMs - at) / 86_400_000;
  if (ageDays > want.maxAgeDays) {
    return {
      code: "receipt.stale",
      message: `certified ${r.certified_at}, ${Math.floor(ageDays)} days ago ` +
        `(tuning.providers.receipt_max_age_days is ${want.maxAgeDays})`,
    };
  }
  if (ageDays < -1 / 24) {
    return { code: "receipt.stale", message: `certified_at ${r.certified_at} is in the future` };
  }
  if (!atLeast(r.grade, want.minGrade)) {
    return {
      code: "receipt.grade_too_low",
      message: `graded ${r.grade}; this role needs ${want.minGrade}`,
    };
  }
  return undefined;
}

/**
 * Verifies a receipt for a profile, step by step: signer and signature, subject (endpoint,
 * model, engine), age, grade. The first problem, or undefined when it certifies the profile.
 */
export function verifyReceipt(
  r: EndpointReceipt,
  want: ReceiptExpectation,
): ReceiptProblem | undefined {
  return checkSignature(r, want.publicKey) ?? checkSubject(r, want) ??
    checkFreshAndGrade(r, want);
}

/** Hex SHA-256 of a receipt's canonical bytes (audit events name receipts by it). */
export function receiptDigest(r: EndpointReceipt): string {
  return sha256Hex(canonicalBytes(r, "canon"));
}
