// Gemini API (`POST /v1beta/models/<m>:streamGenerateContent?alt=sse` and `:generateContent`),
// as Gemini CLI calls it.
import {
  allStrings,
  type ApiCodec,
  json,
  listOf,
  type MediaPart,
  mediaPart,
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

/** `toolConfig.functionCallingConfig` in mode ANY with one allowed function forces it. */
function forced(body: Record<string, unknown>): string | undefined {
  const config = recordOf(recordOf(body.toolConfig).functionCallingConfig);
  const allowed = listOf(config.allowedFunctionNames);
  return config.mode === "ANY" && allowed.length === 1 ? textOf(allowed[0]) : undefined;
}

function parse(body: Record<string, unknown>, pathname: string): ParsedRequest {
  const tools: OfferedTool[] = [];
  for (const t of listOf(body.tools)) {
    for (const d of listOf(recordOf(t).functionDeclarations)) {
      const decl = recordOf(d);
      const name = textOf(decl.name);
      if (name !== undefined) {
        tools.push({ name, props: propsOf(decl.parametersJsonSchema ?? decl.parameters) });
      }
    }
  }
  const userTexts: string[] = [];
  const media: MediaPart[] = [];
  let toolResults = 0;
  for (const c of listOf(body.contents)) {
    const content = recordOf(c);
    for (const p of listOf(content.parts)) {
      const part = recordOf(p);
      if (part.functionResponse !== undefined) toolResults++;
      const text = textOf(part.text);
      if (content.role === "user" && text !== undefined) userTexts.push(text);
      const inline = recordOf(part.inlineData);
      if (content.role === "user" && part.inlineData !== undefined) {
        const got = mediaPart(
          "inlineData",
          textOf(inline.mimeType) ?? "",
          textOf(inline.data) ?? "",
        );
        if (got !== undefined) media.push(got);
      }
    }
  }
  return {
    tools,
    userTexts,
    texts: allStrings(body),
    toolResults,
    stream: pathname.includes(":streamGenerateContent"),
    media,
    forcedTool: forced(body),
  };
}

function chunk(parts: unknown[], usage: Usage, ctx: ReplyContext): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
    },
    modelVersion: ctx.model,
  };
}

function reply(parts: unknown[], usage: Usage, ctx: ReplyContext): Response {
  const body = chunk(parts, usage, ctx);
  return ctx.stream ? sse([{ data: body }]) : json(body);
}

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

/** The Gemini codec. */
export const geminiCodec: ApiCodec = {
  api: "gemini",
  isModelCall: (p) => /:(streamGenerateContent|generateContent)$/.test(p),
  parse,
  text: (text, usage, ctx) => reply([{ text }], usage, ctx),
  call: (call, usage, ctx) =>
    reply([{ functionCall: { name: call.name, args: call.args } }], usage, ctx),
  rateLimitMessage: "Resource has been exhausted (e.g. check quota). (scripted)",
  error(status, message) {
    return json(
      { error: { code: status, message, status: STATUS_NAMES[status] ?? "UNKNOWN" } },
      status,
    );
  },
  malformed(ctx) {
    return sseText([{ data: chunk([{ text: "" }], { input: 1, output: 0 }, ctx) }]) +
      'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCa\n\n';
  },
};
