// The client side of the four model APIs an endpoint profile can speak: the URL, headers and
// body of a request (a conversation, tools, a forced tool, JSON mode, streaming), and the
// answer (text and tool calls) read from a JSON body or an SSE stream. Only what the
// conformance checks and health probes send; not a general SDK.

/** The wire APIs of `local_endpoints.<name>.api`. */
export type WireApi = "openai-chat" | "openai-responses" | "anthropic" | "gemini";

/** A message of a probe conversation. */
export type WireMessage =
  | { role: "user"; text: string }
  | { role: "assistant_call"; id: string; name: string; args: Record<string, unknown> }
  | { role: "tool_result"; id: string; name: string; result: string };

/** A tool offered. */
export interface WireTool {
  /** Name. */
  name: string;
  /** Description. */
  description: string;
  /** JSON schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** One request. */
export interface WireRequest {
  /** Conversation. */
  messages: WireMessage[];
  /** Tools offered. */
  tools?: WireTool[];
  /** Force a call of this tool. */
  forceTool?: string;
  /** Ask for a JSON-only answer (the API's JSON mode where it has one). */
  json?: boolean;
  /** Stream the answer (SSE). */
  stream: boolean;
  /** Answer length cap. */
  maxTokens: number;
}

/** A tool call in an answer. */
export interface WireCall {
  /** Tool name. */
  name: string;
  /** Arguments as sent (JSON text). */
  args: string;
}

/** What an answer said. */
export interface WireAnswer {
  /** Text parts, joined. */
  text: string;
  /** Tool calls. */
  calls: WireCall[];
  /** Whether it came as an SSE stream. */
  streamed: boolean;
}

/** Where and how a request goes. */
export interface WireHttpRequest {
  /** URL. */
  url: string;
  /** Headers. */
  headers: Record<string, string>;
  /** JSON body. */
  body: Record<string, unknown>;
}

type Json = Record<string, unknown>;

function rec(v: unknown): Json {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : {};
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function base(url: string): string {
  return url.replace(/\/+$/, "");
}

/** Headers carrying the key the way the API expects it. */
export function authHeaders(api: WireApi, key: string): Record<string, string> {
  if (api === "anthropic") return { "x-api-key": key, "anthropic-version": "2023-06-01" };
  if (api === "gemini") return { "x-goog-api-key": key };
  return { authorization: `Bearer ${key}` };
}

/** The URL of the model list (OpenAI) or the model's own record (Anthropic, Gemini). */
export function modelInfoUrl(api: WireApi, baseUrl: string, model: string): string {
  if (api === "anthropic") return `${base(baseUrl)}/v1/models/${encodeURIComponent(model)}`;
  if (api === "gemini") return `${base(baseUrl)}/v1beta/models/${encodeURIComponent(model)}`;
  return `${base(baseUrl)}/models`;
}

/** The context length the model list or record claims, when it claims one. */
export function claimedContext(api: WireApi, body: unknown, model: string): number | null {
  let info = rec(body);
  if (api === "openai-chat" || api === "openai-responses") {
    info = rec(list(info.data).find((m) => rec(m).id === model));
  }
  for (const key of ["context_length", "max_model_len", "max_context_length", "context_window"]) {
    const n = info[key];
    if (typeof n === "number" && Number.isInteger(n) && n > 0) return n;
  }
  for (const key of ["max_input_tokens", "inputTokenLimit"]) {
    const n = info[key];
    if (typeof n === "number" && Number.isInteger(n) && n > 0) return n;
  }
  return null;
}

function chatBody(req: WireRequest, model: string): Json {
  const messages = req.messages.map((m) => {
    if (m.role === "user") return { role: "user", content: m.text };
    if (m.role === "assistant_call") {
      return {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: m.id,
          type: "function",
          function: { name: m.name, arguments: JSON.stringify(m.args) },
        }],
      };
    }
    return { role: "tool", tool_call_id: m.id, content: m.result };
  });
  return {
    model,
    messages,
    stream: req.stream,
    temperature: 0,
    max_tokens: req.maxTokens,
    ...(req.tools
      ? {
        tools: req.tools.map((t) => ({
          type: "function",
          function: { name: t.name, description: t.description, parameters: t.parameters },
        })),
      }
      : {}),
    ...(req.forceTool
      ? { tool_choice: { type: "function", function: { name: req.forceTool } } }
      : {}),
    ...(req.json ? { response_format: { type: "json_object" } } : {}),
  };
}

function responsesBody(req: WireRequest, model: string): Json {
  const input = req.messages.map((m) => {
    if (m.role === "user") {
      return { type: "message", role: "user", content: [{ type: "input_text", text: m.text }] };
    }
    if (m.role === "assistant_call") {
      return {
        type: "function_call",
        call_id: m.id,
        name: m.name,
        arguments: JSON.stringify(m.args),
      };
    }
    return { type: "function_call_output", call_id: m.id, output: m.result };
  });
  return {
    model,
    input,
    stream: req.stream,
    temperature: 0,
    max_output_tokens: req.maxTokens,
    ...(req.tools
      ? {
        tools: req.tools.map((t) => ({
          type: "function",
          name: t.name,
          description: t.description,
          parameters: t.parameters,
        })),
      }
      : {}),
    ...(req.forceTool ? { tool_choice: { type: "function", name: req.forceTool } } : {}),
    ...(req.json ? { text: { format: { type: "json_object" } } } : {}),
  };
}

function anthropicBody(req: WireRequest, model: string): Json {
  const messages = req.messages.map((m) => {
    if (m.role === "user") return { role: "user", content: [{ type: "text", text: m.text }] };
    if (m.role === "assistant_call") {
      return {
        role: "assistant",
        content: [{ type: "tool_use", id: m.id, name: m.name, input: m.args }],
      };
    }
    return {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: m.id, content: m.result }],
    };
  });
  return {
    model,
    messages,
    stream: req.stream,
    temperature: 0,
    max_tokens: req.maxTokens,
    ...(req.tools
      ? {
        tools: req.tools.map((t) => ({
          name: t.name,
          description: t.description,
          input_schema: t.parameters,
        })),
      }
      : {}),
    ...(req.forceTool ? { tool_choice: { type: "tool", name: req.forceTool } } : {}),
  };
}

function geminiBody(req: WireRequest): Json {
  const contents = req.messages.map((m) => {
    if (m.role === "user") return { role: "user", parts: [{ text: m.text }] };
    if (m.role === "assistant_call") {
      return { role: "model", parts: [{ functionCall: { name: m.name, args: m.args } }] };
    }
    return {
      role: "user",
      parts: [{ functionResponse: { name: m.name, response: { result: m.result } } }],
    };
  });
  return {
    contents,
    generationConfig: {
      temperature: 0,
      maxOutputTokens: req.maxTokens,
      ...(req.json ? { responseMimeType: "application/json" } : {}),
    },
    ...(req.tools
      ? {
        tools: [{
          functionDeclarations: req.tools.map((t) => ({
            name: t.name,
            description: t.description,
            parameters: t.parameters,
          })),
        }],
      }
      : {}),
    ...(req.forceTool
      ? {
        toolConfig: {
          functionCallingConfig: { mode: "ANY", allowedFunctionNames: [req.forceTool] },
        },
      }
      : {}),
  };
}

/** URL, headers and body of a model request. */
export function buildRequest(
  api: WireApi,
  baseUrl: string,
  model: string,
  key: string,
  req: WireRequest,
): WireHttpRequest {
  const headers = { "content-type": "application/json", ...authHeaders(api, key) };
  switch (api) {
    case "openai-chat":
      return { url: `${base(baseUrl)}/chat/completions`, headers, body: chatBody(req, model) };
    case "openai-responses":
      return { url: `${base(baseUrl)}/responses`, headers, body: responsesBody(req, model) };
    case "anthropic":
      return { url: `${base(baseUrl)}/v1/messages`, headers, body: anthropicBody(req, model) };
    case "gemini": {
      const verb = req.stream ? "streamGenerateContent?alt=sse" : "generateContent";
      return {
        url: `${base(baseUrl)}/v1beta/models/${encodeURIComponent(model)}:${verb}`,
        headers,
        body: geminiBody(req),
      };
    }
  }
}

/** The `data:` payloads of an SSE body (JSON-parsed; `[DONE]` dropped). */
export function sseData(text: string): Json[] {
  const out: Json[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart()).join("\n");
    if (data === "" || data === "[DONE]") continue;
    out.push(rec(JSON.parse(data)));
  }
  return out;
}

function chatAnswer(events: Json[], streamed: boolean): WireAnswer {
  let text = "";
  const calls = new Map<number, WireCall>();
  for (const e of events) {
    for (const c of list(e.choices)) {
      const choice = rec(c);
      const part = rec(streamed ? choice.delta : choice.message);
      text += str(part.content);
      list(part.tool_calls).forEach((t, i) => {
        const call = rec(t);
        const index = typeof call.index === "number" ? call.index : i;
        const fn = rec(call.function);
        const seen = calls.get(index) ?? { name: "", args: "" };
        calls.set(index, { name: seen.name + str(fn.name), args: seen.args + str(fn.arguments) });
      });
    }
  }
  return { text, calls: [...calls.values()], streamed };
}

function responsesAnswer(events: Json[], streamed: boolean): WireAnswer {
  let items: unknown[] = [];
  if (!streamed) items = list(events[0]?.output);
  for (const e of events) {
    if (e.type === "response.completed") items = list(rec(e.response).output);
  }
  let text = "";
  const calls: WireCall[] = [];
  for (const i of items) {
    const item = rec(i);
    if (item.type === "function_call") {
      calls.push({ name: str(item.name), args: str(item.arguments) });
    }
    if (item.type === "message") {
      for (const c of list(item.content)) text += str(rec(c).text);
    }
  }
  return { text, calls, streamed };
}

function anthropicAnswer(events: Json[], streamed: boolean): WireAnswer {
  let text = "";
  const calls: WireCall[] = [];
  if (!streamed) {
    for (const b of list(events[0]?.content)) {
      const block = rec(b);
      if (block.type === "text") text += str(block.text);
      if (block.type === "tool_use") {
        calls.push({ name: str(block.name), args: JSON.stringify(block.input ?? {}) });
      }
    }
    return { text, calls, streamed };
  }
  const open = new Map<number, WireCall>();
  for (const e of events) {
    const index = typeof e.index === "number" ? e.index : 0;
    if (e.type === "content_block_start" && rec(e.content_block).type === "tool_use") {
      open.set(index, { name: str(rec(e.content_block).name), args: "" });
    }
    if (e.type === "content_block_delta") {
      const delta = rec(e.delta);
      if (delta.type === "text_delta") text += str(delta.text);
      const call = open.get(index);
      if (delta.type === "input_json_delta" && call) call.args += str(delta.partial_json);
    }
  }
  return { text, calls: [...open.values()], streamed };
}

function geminiAnswer(events: Json[], streamed: boolean): WireAnswer {
  let text = "";
  const calls: WireCall[] = [];
  for (const e of events) {
    for (const c of list(e.candidates).slice(0, 1)) {
      for (const p of list(rec(rec(c).content).parts)) {
        const part = rec(p);
        text += str(part.text);
        if (part.functionCall !== undefined) {
          const fc = rec(part.functionCall);
          calls.push({ name: str(fc.name), args: JSON.stringify(fc.args ?? {}) });
        }
      }
    }
  }
  return { text, calls, streamed };
}

/**
 * Reads an answer body: SSE when the content type says so, else one JSON document. Throws on
 * a body that is neither.
 */
export function parseAnswer(api: WireApi, contentType: string, body: string): WireAnswer {
  const streamed = contentType.includes("text/event-stream");
  const events = streamed ? sseData(body) : [rec(JSON.parse(body))];
  switch (api) {
    case "openai-chat":
      return chatAnswer(events, streamed);
    case "openai-responses":
      return responsesAnswer(events, streamed);
    case "anthropic":
      return anthropicAnswer(events, streamed);
    case "gemini":
      return geminiAnswer(events, streamed);
  }
}
