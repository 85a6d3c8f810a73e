// Request bodies (size limit, JSON, zod) and JSON answers, including the error mapping
// `{error:{code,message,field?}}` with the HTTP status each error code gets.
import type { z } from "zod";
import { concatBytes } from "../canonical/mod.ts";
import { BernsteinError, type ErrorCode } from "../errors/mod.ts";
import type { SecretRedactor } from "../io/mod.ts";
import { describeZodError } from "../tasks/mod.ts";
import { HttpError } from "./errors.ts";

/** HTTP status of every error code the server can answer with (others are 500). */
export const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  "server.invalid_json": 400,
  "server.invalid_body": 400,
  "server.invalid_query": 400,
  "server.json_too_deep": 400,
  "server.bad_request": 400,
  "task.invalid": 400,
  "attach.invalid": 400,
  "task.unknown_reference": 400,
  "auth.missing_token": 401,
  "auth.invalid_token": 401,
  "auth.forbidden": 403,
  "server.ip_not_allowed": 403,
  "server.not_found": 404,
  "task.not_found": 404,
  "hold.not_found": 404,
  "approval.not_found": 404,
  "server.method_not_allowed": 405,
  "task.illegal_transition": 409,
  "task.version_conflict": 409,
  "task.duplicate_id": 409,
  "task.dependencies_unfinished": 409,
  "task.retries_exhausted": 409,
  "task.not_active": 409,
  "task.claim_lost": 409,
  "workers.session_not_held": 409,
  "workers.not_registered": 409,
  "approval.not_pending": 409,
  "server.body_too_large": 413,
  "server.head_too_large": 431,
  "server.too_many_connections": 503,
  "task.store_unavailable": 503,
  "policy.disabled": 503,
};

const JSON_TYPE = "application/json; charset=utf-8";

/** A JSON answer. */
export function jsonResponse(status: number, body: unknown, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body) + "\n", {
    status,
    headers: { "content-type": JSON_TYPE, "cache-control": "no-store", ...headers },
  });
}

/** An error as `{error:{code,message,field?}}` with its status; stacks never leave the server. */
export function errorResponse(error: unknown): Response {
  if (error instanceof BernsteinError) {
    const status = error instanceof HttpError ? error.status : STATUS_BY_CODE[error.code] ?? 500;
    const body: {
      code: string;
      aliases?: readonly string[];
      message: string;
      field?: string;
      hint?: string;
    } = {
      code: error.code,
      message: error.location ? `${error.location}: ${error.message}` : error.message,
    };
    if (error.aliases !== undefined) body.aliases = error.aliases;
    if (error.location) body.field = error.location;
    if (error.hint) body.hint = error.hint;
    const headers: Record<string, string> = status === 401
      ? { "www-authenticate": 'Bearer realm="bernstein"' }
      : {};
    return jsonResponse(status, { error: body }, headers);
  }
  return jsonResponse(500, { error: { code: "internal", message: "internal server error" } });
}

/**
 * Reads a request body of at most `limit` bytes: a larger `Content-Length` is refused before
 * reading, a longer stream is cut off as soon as it passes the limit.
 */
export async function readBodyLimited(req: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new HttpError(413, "server.body_too_large", `request body is larger than ${limit} bytes`);
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge();
  if (req.body === null) return new Uint8Array();
  const reader = req.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    parts.push(value);
  }
  return parts.length === 0 ? new Uint8Array() : concatBytes(parts, total);
}

/** Limits on a JSON request body. */
export interface JsonLimits {
  /** Largest body in bytes (413 past it). */
  maxBytes: number;
  /** Deepest nesting of arrays and objects (400 past it, checked before parsing). */
  maxDepth: number;
  /**
   * Redacts every parsed body (the run's minted connection secrets): what an agent sends
   * — a summary, a reason, a tool call — is stored and audited without them.
   */
  redactor?: SecretRedactor;
}

/**
 * The nesting depth of JSON text, counted without parsing (brackets outside strings). Stops
 * as soon as `limit` is passed, so a hostile body costs one linear scan, never a deep parse.
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > limit) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

/** Parses a JSON body (empty = `{}`) within the limits; a bad body is a 400 naming why. */
export async function readJsonValue(req: Request, limits: JsonLimits): Promise<unknown> {
  const bytes = await readBodyLimited(req, limits.maxBytes);
  if (bytes.length === 0) return {};
  if (jsonDepthExceeds(bytes, limits.maxDepth)) {
    throw new HttpError(
      400,
      "server.json_too_deep",
      `body nests arrays/objects deeper than ${limits.maxDepth} levels`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new HttpError(
      400,
      "server.invalid_json",
      `body is not JSON: ${(error as Error).message}`,
    );
  }
  return limits.redactor === undefined ? value : limits.redactor.json(value);
}

/** Parses a JSON body (empty = `{}`) and validates it; errors name the field. */
export async function readJsonBody<S extends z.ZodTypeAny>(
  req: Request,
  limits: JsonLimits,
  schema: S,
): Promise<z.output<S>> {
  return validate(schema, await readJsonValue(req, limits), "server.invalid_body");
}

/** Validates `value` with `schema`, or throws a 400 naming the first bad field. */
export function validate<S extends z.ZodTypeAny>(
  schema: S,
  value: unknown,
  code: ErrorCode,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { message, location } = describeZodError(parsed.error);
  throw new HttpError(400, code, message, { location: location ?? undefined });
}
