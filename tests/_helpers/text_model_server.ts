// A minimal local model server for adapter tests: it answers every model request with one
// final text (no tool calls) — or with an HTTP error — in the wire format each CLI speaks:
// Anthropic Messages (SSE), OpenAI Responses (SSE), OpenAI Chat Completions (SSE) and Gemini
// streamGenerateContent (SSE). Every request is logged so tests can assert what arrived.
// The scripted multi-turn servers that make CLIs call tools belong to the end-to-end tests.

/** One logged request. */
export interface LoggedRequest {
  /** HTTP method. */
  method: string;
  /** Path and query. */
  path: string;
  /** Request body as text. */
  body: string;
}

/** How the server answers model requests. */
export type ServerMode =
  | { kind: "text"; text: string }
  | { kind: "error"; status: number; message: string };

/** A running server. */
export interface TextModelServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Every request so far. */
  requests: LoggedRequest[];
  /** Stops the server. */
  close(): Promise<void>;
}

const MODEL = "fake-model";

function sse(events: { event?: string; data: unknown }[]): Response {
  const body = events.map((e) =>
    `${e.event ? `event: ${e.event}\n` : ""}data: ${
      typeof e.data === "string" ? e.data : JSON.stringify(e.data)
    }\n\n`
  ).join("");
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json" },
  });
}

// Gemini and qwen ask "who speaks next" with a JSON-schema request after a turn.
function replyText(body: string, text: string): string {
  return body.includes("next_speaker") ? '{"reasoning":"done","next_speaker":"user"}' : text;
}

function anthropic(body: string, text: string): Response {
  const reply = replyText(body, text);
  const streaming = /"stream"\s*:\s*true/.test(body);
  const usage = { input_tokens: 12, output_tokens: 5 };
  if (!streaming) {
    return json({
      id: "msg_fake_1",
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [{ type: "text", text: reply }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage,
    });
  }
  return sse([
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_fake_1",
          type: "message",
          role: "assistant",
          model: MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 1 },
        },
      },
    },
    {
      event: "content_block_start",
      data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    },
    {
      event: "content_block_delta",
      data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: reply } },
    },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

function responses(body: string, text: string): Response {
  const reply = replyText(body, text);
  const item = {
    type: "message",
    id: "msg_fake_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: reply, annotations: [] }],
  };
  return sse([
    {
      event: "response.created",
      data: { type: "response.created", response: { id: "resp_fake_1", status: "in_progress" } },
    },
    {
      event: "response.output_item.added",
      data: { type: "response.output_item.added", output_index: 0, item },
    },
    {
      event: "response.output_item.done",
      data: { type: "response.output_item.done", output_index: 0, item },
    },
    {
      event: "response.completed",
      data: {
        type: "response.completed",
        response: {
          id: "resp_fake_1",
          status: "completed",
          output: [item],
          usage: {
            input_tokens: 12,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 5,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 17,
          },
        },
      },
    },
  ]);
}

function chat(body: string, text: string): Response {
  const reply = replyText(body, text);
  const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
  if (!/"stream"\s*:\s*true/.test(body)) {
    return json({
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 0,
      model: MODEL,
      choices: [{
        index: 0,
        message: { role: "assistant", content: reply },
        finish_reason: "stop",
      }],
      usage,
    });
  }
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model: MODEL };
  return sse([
    {
      data: {
        ...base,
        choices: [{
          index: 0,
          delta: { role: "assistant", content: reply },
          finish_reason: null,
        }],
      },
    },
    { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } },
    { data: { ...base, choices: [], usage } },
    { data: "[DONE]" },
  ]);
}

function gemini(path: string, body: string, text: string): Response {
  const reply = replyText(body, text);
  const chunk = {
    candidates: [{
      content: { role: "model", parts: [{ text: reply }] },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 },
    modelVersion: MODEL,
  };
  if (path.includes(":countTokens")) return json({ totalTokens: 12 });
  if (path.includes(":streamGenerateContent")) return sse([{ data: chunk }]);
  return json(chunk);
}

function errorBody(path: string, status: number, message: string): Response {
  if (path.includes("/v1beta/")) {
    return json({ error: { code: status, message, status: "INTERNAL" } }, status);
  }
  if (path.includes("/messages")) {
    return json({ type: "error", error: { type: "api_error", message } }, status);
  }
  return json({ error: { message, type: "server_error", code: null } }, status);
}

/** Starts the server on 127.0.0.1 (random port). */
export function startTextModelServer(mode: ServerMode): TextModelServer {
  const requests: LoggedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const path = url.pathname + url.search;
      const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      requests.push({ method: req.method, path, body });
      if (req.method === "HEAD" || (req.method === "GET" && url.pathname === "/")) {
        return new Response(null, { status: 200 });
      }
      if (req.method === "GET" && url.pathname.endsWith("/models")) {
        return json({ object: "list", data: [{ id: MODEL, object: "model", owned_by: "test" }] });
      }
      const isModelCall =
        /\/messages$|\/responses$|\/chat\/completions$|:(streamGenerateContent|generateContent)$/
          .test(url.pathname);
      if (url.pathname.endsWith("/messages/count_tokens")) return json({ input_tokens: 12 });
      if (!isModelCall && !url.pathname.includes(":countTokens")) {
        return json({ error: { message: `no route ${req.method} ${path}` } }, 404);
      }
      if (mode.kind === "error" && isModelCall) {
        return errorBody(path, mode.status, mode.message);
      }
      const text = mode.kind === "text" ? mode.text : "";
      if (url.pathname.endsWith("/messages")) return anthropic(body, text);
      if (url.pathname.endsWith("/responses")) return responses(body, text);
      if (url.pathname.endsWith("/chat/completions")) return chat(body, text);
      return gemini(path, body, text);
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}
