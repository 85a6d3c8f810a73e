// A minimal local model server for adapter tests, in the wire format each CLI speaks:
// Anthropic Messages (SSE), OpenAI Responses (SSE), OpenAI Chat Completions (SSE) and Gemini
// streamGenerateContent (SSE). Modes: one final text; one file write then a final text (the
// tool is picked from the `tools` the CLI offers: a write tool, else a shell tool); an HTTP
// error. Every request is logged so tests can assert what arrived. The scripted multi-turn
// servers of the end-to-end tests (failures, hangs, several tools) are a superset of this.

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
  | {
    kind: "write";
    /** Absolute path the CLI is told to write (set once the worktree exists). */
    path: string;
    /** Content to write (no single quotes: a shell tool gets it in '…'). */
    content: string;
    /** Final text once the tool result came back. */
    text: string;
  }
  | { kind: "error"; status: number; message: string };

/** A running server. */
export interface TextModelServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The mode (mutable: a test sets `path` of a write mode once it knows the worktree). */
  mode: ServerMode;
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

/** A tool call the server decided to make. */
interface ToolCall {
  name: string;
  args: Record<string, string>;
}

interface ToolInfo {
  name: string;
  props: string[];
}

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function propsOf(schema: unknown): string[] {
  return Object.keys(recordOf(recordOf(schema).properties));
}

/** Tools offered in a request body, in any of the four APIs. */
function offeredTools(body: Record<string, unknown>): ToolInfo[] {
  const out: ToolInfo[] = [];
  for (const t of listOf(body.tools)) {
    const tool = recordOf(t);
    const fn = recordOf(tool.function);
    if (typeof fn.name === "string") out.push({ name: fn.name, props: propsOf(fn.parameters) });
    else if (typeof tool.name === "string") {
      out.push({ name: tool.name, props: propsOf(tool.input_schema ?? tool.parameters) });
    }
    for (const d of listOf(tool.functionDeclarations)) {
      const decl = recordOf(d);
      if (typeof decl.name === "string") {
        out.push({ name: decl.name, props: propsOf(decl.parametersJsonSchema ?? decl.parameters) });
      }
    }
  }
  return out;
}

/** Whether the conversation already carries a tool result (then the turn is the final one). */
function hasToolResult(body: Record<string, unknown>): boolean {
  for (const m of listOf(body.messages)) {
    const msg = recordOf(m);
    if (msg.role === "tool") return true;
    if (listOf(msg.content).some((b) => recordOf(b).type === "tool_result")) return true;
  }
  for (const i of listOf(body.input)) {
    const type = recordOf(i).type;
    if (type === "function_call_output" || type === "custom_tool_call_output") return true;
  }
  for (const c of listOf(body.contents)) {
    if (listOf(recordOf(c).parts).some((p) => recordOf(p).functionResponse !== undefined)) {
      return true;
    }
  }
  return false;
}

const WRITE_TOOLS = ["Write", "write_file", "write", "create_file"];
const SHELL_TOOLS = ["exec_command", "shell", "run_shell_command", "Bash", "bash"];

/** The call to make for a write mode, or undefined when this turn should answer text. */
function plannedCall(mode: ServerMode, raw: string): ToolCall | undefined {
  if (mode.kind !== "write") return undefined;
  let body: Record<string, unknown>;
  try {
    body = recordOf(JSON.parse(raw));
  } catch {
    return undefined;
  }
  if (hasToolResult(body)) return undefined;
  const tools = offeredTools(body);
  const write = tools.find((t) => WRITE_TOOLS.includes(t.name));
  if (write !== undefined) {
    const pathKey = ["file_path", "filePath", "path", "absolute_path"].find((k) =>
      write.props.includes(k)
    ) ?? "file_path";
    const contentKey = ["content", "text", "file_text"].find((k) => write.props.includes(k)) ??
      "content";
    return { name: write.name, args: { [pathKey]: mode.path, [contentKey]: mode.content } };
  }
  const shell = tools.find((t) => SHELL_TOOLS.includes(t.name));
  if (shell !== undefined) {
    const key = ["cmd", "command"].find((k) => shell.props.includes(k)) ?? "command";
    return { name: shell.name, args: { [key]: `printf '%s' '${mode.content}' > '${mode.path}'` } };
  }
  return undefined;
}

function anthropicCall(call: ToolCall): Response {
  return sse([
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_fake_tool",
          type: "message",
          role: "assistant",
          model: MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 20, output_tokens: 1 },
        },
      },
    },
    {
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_fake_1", name: call.name, input: {} },
      },
    },
    {
      event: "content_block_delta",
      data: {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(call.args) },
      },
    },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 9 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

function responsesCall(call: ToolCall): Response {
  const item = {
    type: "function_call",
    id: "fc_fake_1",
    call_id: "call_fake_1",
    name: call.name,
    arguments: JSON.stringify(call.args),
    status: "completed",
  };
  return sse([
    {
      event: "response.created",
      data: { type: "response.created", response: { id: "resp_fake_t", status: "in_progress" } },
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
          id: "resp_fake_t",
          status: "completed",
          output: [item],
          usage: {
            input_tokens: 20,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 9,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 29,
          },
        },
      },
    },
  ]);
}

function chatCall(call: ToolCall): Response {
  const base = { id: "chatcmpl-fake-t", object: "chat.completion.chunk", created: 0, model: MODEL };
  return sse([
    {
      data: {
        ...base,
        choices: [{
          index: 0,
          delta: {
            role: "assistant",
            content: null,
            tool_calls: [{
              index: 0,
              id: "call_fake_1",
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            }],
          },
          finish_reason: null,
        }],
      },
    },
    { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } },
    {
      data: {
        ...base,
        choices: [],
        usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
      },
    },
    { data: "[DONE]" },
  ]);
}

function geminiCall(call: ToolCall): Response {
  return sse([{
    data: {
      candidates: [{
        content: { role: "model", parts: [{ functionCall: { name: call.name, args: call.args } }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 9, totalTokenCount: 29 },
      modelVersion: MODEL,
    },
  }]);
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
  const state = { mode };
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
      const mode = state.mode;
      if (mode.kind === "error" && isModelCall) {
        return errorBody(path, mode.status, mode.message);
      }
      const call = isModelCall ? plannedCall(mode, body) : undefined;
      if (call !== undefined && url.pathname.includes(":streamGenerateContent")) {
        return geminiCall(call);
      }
      if (call !== undefined && url.pathname.endsWith("/messages")) return anthropicCall(call);
      if (call !== undefined && url.pathname.endsWith("/responses")) return responsesCall(call);
      if (call !== undefined && url.pathname.endsWith("/chat/completions")) return chatCall(call);
      const text = mode.kind === "error" ? "" : mode.text;
      if (url.pathname.endsWith("/messages")) return anthropic(body, text);
      if (url.pathname.endsWith("/responses")) return responses(body, text);
      if (url.pathname.endsWith("/chat/completions")) return chat(body, text);
      return gemini(path, body, text);
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    get mode() {
      return state.mode;
    },
    set mode(next: ServerMode) {
      state.mode = next;
    },
    requests,
    close: () => server.shutdown(),
  };
}
