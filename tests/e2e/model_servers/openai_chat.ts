// OpenAI Chat Completions (`POST /v1/chat/completions`, SSE chunks when `stream: true`), as
// opencode and qwen call it.
import {
  allStrings,
  type ApiCodec,
  contentText,
  dataUrlPart,
  forcedToolOf,
  json,
  listOf,
  type MediaPart,
  type ParsedRequest,
  propsOf,
  recordOf,
  type ReplyContext,
  sse,
  sseText,
  textOf,
  type Usage,
} from "./_wire.ts";
import type { OfferedTool } from "./tools.ts";

function parse(body: Record<string, unknown>): ParsedRequest {
  const tools: OfferedTool[] = [];
  for (const t of listOf(body.tools)) {
    const fn = recordOf(recordOf(t).function);
    const name = textOf(fn.name);
    if (name !== undefined) tools.push({ name, props: propsOf(fn.parameters) });
  }
  const userTexts: string[] = [];
  const media: MediaPart[] = [];
  let toolResults = 0;
  for (const m of listOf(body.messages)) {
    const msg = recordOf(m);
    if (msg.role === "tool") toolResults++;
    else if (msg.role === "user") {
      userTexts.push(...contentText(msg.content, ["text"]));
      for (const c of listOf(msg.content)) {
        const url = textOf(recordOf(recordOf(c).image_url).url);
        const part = recordOf(c).type === "image_url" && url !== undefined
          ? dataUrlPart("image_url", url)
          : undefined;
        if (part !== undefined) media.push(part);
      }
    }
  }
  return {
    tools,
    userTexts,
    texts: allStrings(body),
    toolResults,
    stream: body.stream === true,
    media,
    forcedTool: forcedToolOf(body.tool_choice),
  };
}

function usageOf(usage: Usage): Record<string, number> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
}

function base(ctx: ReplyContext): Record<string, unknown> {
  return {
    id: `chatcmpl-fake-${ctx.turn}`,
    object: "chat.completion.chunk",
    created: 0,
    model: ctx.model,
  };
}

function stream(
  delta: Record<string, unknown>,
  finish: string,
  usage: Usage,
  ctx: ReplyContext,
): Response {
  const b = base(ctx);
  return sse([
    { data: { ...b, choices: [{ index: 0, delta, finish_reason: null }] } },
    { data: { ...b, choices: [{ index: 0, delta: {}, finish_reason: finish }] } },
    { data: { ...b, choices: [], usage: usageOf(usage) } },
    { data: "[DONE]" },
  ]);
}

function whole(
  message: Record<string, unknown>,
  finish: string,
  usage: Usage,
  ctx: ReplyContext,
): Response {
  return json({
    ...base(ctx),
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: usageOf(usage),
  });
}

/** The OpenAI Chat Completions codec. */
export const chatCodec: ApiCodec = {
  api: "openai-chat",
  isModelCall: (p) => p.endsWith("/chat/completions"),
  parse,
  text(text, usage, ctx) {
    const message = { role: "assistant", content: text };
    return ctx.stream ? stream(message, "stop", usage, ctx) : whole(message, "stop", usage, ctx);
  },
  call(call, usage, ctx) {
    const toolCall = {
      id: `call_fake_${ctx.turn}`,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    };
    if (!ctx.stream) {
      return whole(
        { role: "assistant", content: null, tool_calls: [toolCall] },
        "tool_calls",
        usage,
        ctx,
      );
    }
    return stream(
      { role: "assistant", content: null, tool_calls: [{ index: 0, ...toolCall }] },
      "tool_calls",
      usage,
      ctx,
    );
  },
  rateLimitMessage:
    "Rate limit reached for fake-model on requests per min (RPM): Limit 3, Used 3 (scripted)",
  error(status, message) {
    const code = status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : null;
    return json({ error: { message, type: code ?? "invalid_request_error", code } }, status);
  },
  malformed(ctx) {
    return sseText([{
      data: {
        ...base(ctx),
        choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
      },
    }]) + 'data: {"id":"chatcmpl-fake","choices":[{"index":0,"delta":{"tool_ca\n\n';
  },
};
