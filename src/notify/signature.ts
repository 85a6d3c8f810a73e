/**
 * The webhook signature: `X-Bernstein-Signature: sha256=<hex HMAC-SHA256(secret, body)>` over
 * the exact body bytes, and how a receiver checks it with the timestamp (replay window).
 */
import { hmacSha256Hex } from "../crypto/mod.ts";

/** Header names of a webhook delivery. */
export const HEADERS = {
  signature: "X-Bernstein-Signature",
  timestamp: "X-Bernstein-Timestamp",
  event: "X-Bernstein-Event",
  delivery: "X-Bernstein-Delivery",
} as const;

/** How old a delivery a receiver should still accept (documented; receivers choose). */
export const REPLAY_WINDOW_S = 300;

const encoder = new TextEncoder();

/** The signature header's value for `body` under `secret`. */
export function signBody(secret: string, body: Uint8Array): string {
  return `sha256=${hmacSha256Hex(encoder.encode(secret), body)}`;
}

/** Why a received delivery is refused, or undefined when it is good. */
export type SignatureProblem = "missing" | "mismatch" | "stale" | "bad-timestamp";

/**
 * A receiver's check: the signature matches the body, the timestamp header is a number equal
 * to the body's `timestamp`, and it is within `windowS` of `nowS`.
 *
 * @example
 * ```ts ignore
 * const problem = checkDelivery(secret, bodyBytes, request.headers, Date.now() / 1000);
 * if (problem) return new Response(problem, { status: 401 });
 * ```
 */
export function checkDelivery(
  secret: string,
  body: Uint8Array,
  headers: Headers,
  nowS: number,
  windowS = REPLAY_WINDOW_S,
): SignatureProblem | undefined {
  const got = headers.get(HEADERS.signature);
  if (got === null) return "missing";
  const want = signBody(secret, body);
  if (!constantTimeEqual(got, want)) return "mismatch";
  const ts = Number(headers.get(HEADERS.timestamp));
  if (!Number.isSafeInteger(ts)) return "bad-timestamp";
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body));
    if (typeof parsed === "object" && parsed !== null && "timestamp" in parsed) {
      if (parsed.timestamp !== ts) return "bad-timestamp";
    }
  } catch {
    // Chat-shaped bodies carry no timestamp field; the header alone is checked.
  }
  return Math.abs(nowS - ts) > windowS ? "stale" : undefined;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
