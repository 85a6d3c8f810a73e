// Anthropic Messages API (`POST /v1/messages`, SSE when `stream: true`), as Claude Code calls it.
import {
  allStrings,
  type ApiCodec,
  contentText,
  forcedToolOf,
  json,
  listOf,
  type MediaPart,
  mediaPart,
  type ParsedRequest,
  propsOf,
  recordOf,
  type ReplyContext,
  sse,
  type SseEvent,
  sseText,
  textOf,
  type Usage,
} from "./_wire.ts";
import type { OfferedTool, ToolCall } from "./tools.ts";

function parse(body: Record<string, unknown>): ParsedRequest {
  const tools: OfferedTool[] = [];
  for (const t of listOf(body.tools)) {
    const tool = recordOf(t);
    const name = textOf(tool.name);
    if (name !== undefined) tools.push({ name, props: propsOf(tool.input_schema) });
  }
  const userTexts: string[] = [];
  const media: MediaPart[] = [];
  let toolResults = 0;
  for (const m of listOf(body.messages)) {
    const msg = recordOf(m);
    if (msg.role !== "user") continue;
    userTexts.push(...contentText(msg.content, ["text"]));
    toolResults += listOf(msg.content).filter((b) => recordOf(b).type === "tool_result").length;
    for (const b of listOf(msg.content)) {
      const block = recordOf(b);
      const source = recordOf(block.source);
      if ((block.type !== "image" && block.type !== "document") || source.type !== "base64") {
        continue;
      }
      const part = mediaPart(
        block.type,
        textOf(source.media_type) ?? "",
        textOf(source.data) ?? "",
      );
      if (part !== undefined) media.push(part);
    }
  }
  return {
    tools,
    userTexts,
    texts: allStrings(body),
    toolResults,
    stream: body.stream === true,
    media,
    forcedTool: recordOf(body.tool_choice).type === "tool"
      ? forcedToolOf(body.tool_choice)
      : undefined,
  };
}

function start(ctx: ReplyContext, usage: Usage): SseEvent {
  return {
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: `msg_fake_${ctx.turn}`,
        type: "message",
        role: "assistant",
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    },
  };
}

function finish(stop: string, usage: Usage): SseEvent[] {
  return [
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
}

function message(content: unknown[], stop: string, usage: Usage, ctx: ReplyContext): Response {
  return json({
    id: `msg_fake_${ctx.turn}`,
    type: "message",
    role: "assistant",
    model: ctx.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  });
}

/** The Anthropic Messages codec. */
export const anthropicCodec: ApiCodec = {
  api: "anthropic",
  isModelCall: (p) => p.endsWith("/messages"),
  parse,
  text(text, usage, ctx) {
    if (!ctx.stream) return message([{ type: "text", text }], "end_turn", usage, ctx);
    return sse([
      start(ctx, usage),
      {
        event: "content_block_start",
        data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      },
      {
        event: "content_block_delta",
        data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
      },
      ...finish("end_turn", usage),
    ]);
  },
  call(call: ToolCall, usage, ctx) {
    const id = `toolu_fake_${ctx.turn}`;
    if (!ctx.stream) {
      return message(
        [{ type: "tool_use", id, name: call.name, input: call.args }],
        "tool_use",
        usage,
        ctx,
      );
    }
    return sse([
      start(ctx, usage),
      {
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id, name: call.name, input: {} },
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
      ...finish("tool_use", usage),
    ]);
  },
  rateLimitMessage:
    "This request would exceed the rate limit for your organization of 50 requests per minute (scripted)",
  error(status, message) {
    const type = status === 429
      ? "rate_limit_error"
      : status === 529
      ? "overloaded_error"
      : status >= 500
      ? "api_error"
      : "invalid_request_error";
    return json({ type: "error", error: { type, message } }, status);
  },
  malformed(ctx) {
    return sseText([start(ctx, { input: 1, output: 1 })]) +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_bl\n\n';
  },
};
