// What the four API codecs share: the parsed view of a request, token usage, SSE and JSON
// responses, and lenient readers for request bodies.
import { fromBase64 } from "../../../src/canonical/mod.ts";
import { sha256Hex } from "../../../src/crypto/mod.ts";
import type { OfferedTool, ToolCall } from "./tools.ts";

/** The wire APIs the servers speak (the `api` names of `local_endpoints`). */
export type ApiName = "anthropic" | "openai-responses" | "openai-chat" | "gemini";

/** Token counts answered with a reply (deterministic, so tests can add them up). */
export interface Usage {
  /** Prompt tokens. */
  input: number;
  /** Completion tokens. */
  output: number;
}

/**
 * Media that arrived as media (not as text): an Anthropic `image`/`document` block, a Gemini
 * `inlineData` part, an OpenAI `image_url` data URL. The digest is of the decoded bytes.
 */
export interface MediaPart {
  /**
   * How it arrived: `image` / `document` (Anthropic), `inlineData` (Gemini), `image_url` (OpenAI
   * chat), `input_image` (OpenAI Responses).
   */
  via: "image" | "document" | "inlineData" | "image_url" | "input_image";
  /** The MIME type the client declared. */
  mime: string;
  /** Hex SHA-256 of the decoded bytes. */
  sha256: string;
  /** Size of the decoded bytes. */
  size: number;
}

/** What the server reads from one model request. */
export interface ParsedRequest {
  /** Tools offered (empty for side requests such as titles). */
  tools: OfferedTool[];
  /** Texts of user messages (not tool results), in order. */
  userTexts: string[];
  /** Every string in the body (system prompt included), for finding the working directory. */
  texts: string[];
  /** Tool results already in the conversation: the turn number. */
  toolResults: number;
  /** The client asked for a stream. */
  stream: boolean;
  /** Media parts of user messages, in order. */
  media: MediaPart[];
  /** The tool the client forces (`tool_choice` naming one tool), if any. */
  forcedTool?: string;
}

/** The tool a `tool_choice`-like value forces: its `name`, or its `function.name`. */
export function forcedToolOf(choice: unknown): string | undefined {
  const c = recordOf(choice);
  return textOf(c.name) ?? textOf(recordOf(c.function).name);
}

/** How to answer. */
export interface ReplyContext {
  /** Model name to report. */
  model: string;
  /** Turn number (ids are made from it). */
  turn: number;
  /** Stream (SSE) or one JSON body. */
  stream: boolean;
}

/** One API: route matching, request parsing, and the bodies of each kind of answer. */
export interface ApiCodec {
  /** API name. */
  api: ApiName;
  /** Whether a path is a model call of this API. */
  isModelCall(pathname: string): boolean;
  /** Reads a request body. */
  parse(body: Record<string, unknown>, pathname: string): ParsedRequest;
  /** A final text answer. */
  text(text: string, usage: Usage, ctx: ReplyContext): Response;
  /** A tool call answer. */
  call(call: ToolCall, usage: Usage, ctx: ReplyContext): Response;
  /** An API error with this status, in the API's own error shape. */
  error(status: number, message: string): Response;
  /** The API's own wording of a rate-limit (429) error, as its real servers send it. */
  rateLimitMessage: string;
  /** SSE text that breaks off inside an event (a malformed stream). */
  malformed(ctx: ReplyContext): string;
}

/** A media part from base64 text, or undefined when it does not decode. */
export function mediaPart(
  via: MediaPart["via"],
  mime: string,
  base64: string,
): MediaPart | undefined {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(base64);
  } catch {
    return undefined;
  }
  return { via, mime, sha256: sha256Hex(bytes), size: bytes.length };
}

/** A `data:<mime>;base64,<data>` URL as a media part. */
export function dataUrlPart(via: MediaPart["via"], url: string): MediaPart | undefined {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? mediaPart(via, m[1], m[2]) : undefined;
}

/** A value as a plain object (else empty). */
export function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

/** A value as an array (else empty). */
export function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A value as a string, or undefined. */
export function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Parameter names of a JSON schema's `properties`. */
export function propsOf(schema: unknown): string[] {
  return Object.keys(recordOf(recordOf(schema).properties));
}

/** Every string anywhere in a JSON value. */
export function allStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const v of value) allStrings(v, out); }
  else if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) allStrings(v, out);
  }
  return out;
}

/** Text of a content field: a string, or the `text` of its parts of the given types. */
export function contentText(content: unknown, types: readonly string[]): string[] {
  if (typeof content === "string") return [content];
  const out: string[] = [];
  for (const part of listOf(content)) {
    const p = recordOf(part);
    const t = textOf(p.text);
    if (t !== undefined && (p.type === undefined || types.includes(String(p.type)))) out.push(t);
  }
  return out;
}

/** An SSE event. */
export interface SseEvent {
  /** `event:` name, when the API uses them. */
  event?: string;
  /** `data:` payload (JSON-encoded unless a string). */
  data: unknown;
}

/** SSE text of events. */
export function sseText(events: readonly SseEvent[]): string {
  return events.map((e) =>
    `${e.event ? `event: ${e.event}\n` : ""}data: ${
      typeof e.data === "string" ? e.data : JSON.stringify(e.data)
    }\n\n`
  ).join("");
}

/** Headers of an SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
};

/** An SSE response. */
export function sse(events: readonly SseEvent[]): Response {
  return new Response(sseText(events), { headers: { ...SSE_HEADERS } });
}

/** A JSON response. */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json" },
  });
}
