// OpenAI Responses API (`POST /v1/responses`, always SSE), as Codex calls it.
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
    const tool = recordOf(t);
    const name = textOf(tool.name);
    if (name !== undefined) tools.push({ name, props: propsOf(tool.parameters) });
  }
  const userTexts: string[] = [];
  const media: MediaPart[] = [];
  let toolResults = 0;
  for (const i of listOf(body.input)) {
    const item = recordOf(i);
    if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      toolResults++;
    } else if ((item.type ?? "message") === "message" && item.role === "user") {
      userTexts.push(...contentText(item.content, ["input_text"]));
      for (const c of listOf(item.content)) {
        // Codex: `{type: "input_image", image_url: "data:<mime>;base64,…"}`.
        const url = textOf(recordOf(c).image_url);
        const part = recordOf(c).type === "input_image" && url !== undefined
          ? dataUrlPart("input_image", url)
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
    stream: true,
    media,
    forcedTool: forcedToolOf(body.tool_choice),
  };
}

function response(item: Record<string, unknown>, usage: Usage, ctx: ReplyContext): Response {
  const id = `resp_fake_${ctx.turn}`;
  return sse([
    {
      event: "response.created",
      data: { type: "response.created", response: { id, status: "in_progress" } },
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
          id,
          status: "completed",
          output: [item],
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.input + usage.output,
          },
        },
      },
    },
  ]);
}

/** The OpenAI Responses codec. */
export const responsesCodec: ApiCodec = {
  api: "openai-responses",
  isModelCall: (p) => p.endsWith("/responses"),
  parse,
  text(text, usage, ctx) {
    return response(
      {
        type: "message",
        id: `msg_fake_${ctx.turn}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
      usage,
      ctx,
    );
  },
  call(call, usage, ctx) {
    return response(
      {
        type: "function_call",
        id: `fc_fake_${ctx.turn}`,
        call_id: `call_fake_${ctx.turn}`,
        name: call.name,
        arguments: JSON.stringify(call.args),
        status: "completed",
      },
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
      event: "response.created",
      data: {
        type: "response.created",
        response: { id: `resp_fake_${ctx.turn}`, status: "in_progress" },
      },
    }]) + 'event: response.output_item.added\ndata: {"type":"response.output_item.add\n\n';
  },
};
