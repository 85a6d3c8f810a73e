// The deterministic model server: one Deno.serve on 127.0.0.1 (random port) that answers the
// Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and Gemini APIs by path. Each
// model request is answered from a script (the prompt's `@model` lines, else the server's
// own): per turn a tool call picked from the tools the CLI offered, aimed inside the working
// directory the CLI announced, then a final text; or a scripted failure (HTTP status, hang,
// malformed stream). Every request is logged; anything that is not for this server (another
// Host) or that the script cannot do is recorded as a problem, so tests can fail on it.
import { join } from "node:path";
import { anthropicCodec } from "./anthropic.ts";
import { geminiCodec } from "./gemini.ts";
import { chatCodec } from "./openai_chat.ts";
import { responsesCodec } from "./openai_responses.ts";
import {
  type ApiCodec,
  type ApiName,
  json,
  type MediaPart,
  type ParsedRequest,
  recordOf,
  SSE_HEADERS,
  type Usage,
} from "./_wire.ts";
import {
  FailureCounters,
  type ModelAction,
  type ModelFailure,
  type ModelScript,
  parseScript,
  scriptLines,
} from "./script.ts";
import { findCwd, namedCall, shellCall, type ToolCall, writeCall } from "./tools.ts";

/** One logged request. */
export interface LoggedRequest {
  /** Arrival order, from 0. */
  seq: number;
  /** HTTP method. */
  method: string;
  /** Path and query. */
  path: string;
  /** The Host header. */
  host: string;
  /** Request headers (lower-case names). */
  headers: Record<string, string>;
  /** Body text. */
  body: string;
  /** API of a model call. */
  api?: ApiName;
  /** turn (a model call with tools), side (one without: titles, checks), or other. */
  kind: "turn" | "side" | "other";
  /** Turn number of a turn request. */
  turn?: number;
  /** Working directory announced in the request, when found. */
  cwd?: string;
  /** What the server answered, in words (`write a.txt via Write`, `fail 429`, `hang`, …). */
  answer: string;
  /** Usage reported with the answer (text or tool call). */
  usage?: Usage;
  /** Media that arrived as media (image blocks, inlineData, image_url data URLs). */
  media?: MediaPart[];
}

/** Options of {@linkcode startModelServer}. */
export interface ModelServerOptions {
  /** Script for requests whose prompt has no `@model` lines (lines, or a parsed script). */
  script?: readonly string[] | ModelScript;
  /** Working directory to assume when a request names none. */
  cwd?: string;
  /** Model name reported in answers. */
  model?: string;
  /**
   * A model fit for `bernstein doctor --endpoint` (its conformance subset): `tools: obey`
   * answers a request forcing a tool with a call of that tool (every argument 2), `ignore`
   * answers it with text (a model whose tool calling is broken); a prompt asking for JSON gets
   * `{"status":"ok"}`; `contextTokens` is claimed by the model list and record, and a longer
   * request (about 4 characters a token) is refused with 400.
   */
  conformance?: { tools: "obey" | "ignore"; contextTokens?: number };
  /** Every request (model calls, model lists, probes) answered with this HTTP status. */
  failAll?: number;
}

/** A running model server. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Port. */
  port: number;
  /** Every request so far. */
  requests: LoggedRequest[];
  /** Things that should never happen in a test (foreign Host, unusable script, no tool, …). */
  problems: string[];
  /** The server's own script (replaceable between runs). */
  script: ModelScript;
  /** Model requests answered with a turn, for one working directory (all when omitted). */
  turns(cwd?: string): LoggedRequest[];
  /**
   * Resolves once `count` answered requests match `test` (with them); rejects if the server
   * closes first. Tests wait on this instead of a timer.
   */
  answered(test: (r: LoggedRequest) => boolean, count?: number): Promise<LoggedRequest[]>;
  /** Stops the server, ending hanging answers first. */
  close(): Promise<void>;
}

/** Usage answered with a tool call. */
export const CALL_USAGE: Usage = { input: 20, output: 9 };
/** Usage answered with a final text. */
export const TEXT_USAGE: Usage = { input: 12, output: 5 };
/** Usage answered to side requests (titles, next-speaker checks). */
export const SIDE_USAGE: Usage = { input: 3, output: 2 };

const CODECS: readonly ApiCodec[] = [anthropicCodec, responsesCodec, chatCodec, geminiCodec];

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/** bernstein's marker of an attachment delivered beside the prompt text (not inlined). */
const DELIVERY_MARKER =
  /<attachment mime="([^"]+)" sha256="([0-9a-f]{64})" delivery="(?:content-block|file-reference|file-argument)"/g;

function toScript(script: readonly string[] | ModelScript | undefined): ModelScript {
  if (script === undefined) return { turns: [], key: "" };
  return "turns" in script ? script : parseScript(script);
}

/** Starts a model server on 127.0.0.1 with a random port. */
export function startModelServer(options: ModelServerOptions = {}): ModelServer {
  const model = options.model ?? "fake-model";
  const requests: LoggedRequest[] = [];
  const problems: string[] = [];
  const counters = new FailureCounters();
  const hanging = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const state = { script: toScript(options.script) };
  let port = 0;
  const waiters: {
    test: (r: LoggedRequest) => boolean;
    count: number;
    resolve: (r: LoggedRequest[]) => void;
    reject: (e: Error) => void;
  }[] = [];

  /** Settles the waiters whose requests have all been answered. */
  function wake(): void {
    for (const w of [...waiters]) {
      const matched = requests.filter((r) => r.answer !== "" && w.test(r));
      if (matched.length < w.count) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(matched);
    }
  }

  /** A request whose last user text asks for a JSON answer. */
  function asksJson(parsed: ParsedRequest): boolean {
    return /\bJSON\b/.test(parsed.userTexts.at(-1) ?? "");
  }

  function scriptFor(parsed: ParsedRequest): ModelScript {
    for (const text of parsed.userTexts) {
      const lines = scriptLines(text);
      if (lines.length > 0) return parseScript(lines);
    }
    return state.script;
  }

  /**
   * Every attachment the prompt says travels beside the text (a bernstein marker block with
   * `delivery="…"`) must have arrived as media with the same bytes (sha256) and MIME type.
   */
  function checkDelivered(parsed: ParsedRequest, log: LoggedRequest): void {
    for (const text of parsed.userTexts) {
      for (const m of text.matchAll(DELIVERY_MARKER)) {
        const [, mime, sha] = m;
        const got = parsed.media.find((p) => p.sha256 === sha);
        if (got === undefined) {
          problems.push(
            `#${log.seq}: attachment ${sha.slice(0, 12)}… (${mime}) did not arrive as media`,
          );
        } else if (got.mime !== mime) {
          problems.push(
            `#${log.seq}: attachment ${sha.slice(0, 12)}… arrived as ${got.mime}, not ${mime}`,
          );
        }
      }
    }
  }

  function failureResponse(codec: ApiCodec, failure: ModelFailure, turn: number): Response {
    switch (failure.kind) {
      case "status": {
        const res = codec.error(
          failure.status,
          failure.status === 429 ? codec.rateLimitMessage : `scripted failure ${failure.status}`,
        );
        if (failure.retry_after_s !== undefined) {
          res.headers.set("retry-after", String(failure.retry_after_s));
        }
        return res;
      }
      case "hang": {
        // Headers go out, then nothing: the CLI waits on an open stream.
        const body = new ReadableStream<Uint8Array>({ start: (c) => void hanging.add(c) });
        return new Response(body, { headers: { ...SSE_HEADERS } });
      }
      case "malformed":
        return new Response(codec.malformed({ model, turn, stream: true }), {
          headers: { ...SSE_HEADERS },
        });
    }
  }

  function conformanceTooLong(raw: string): string | undefined {
    const limit = options.conformance?.contextTokens;
    if (limit === undefined || raw.length <= limit * 4) return undefined;
    return `context length exceeded: about ${Math.ceil(raw.length / 4)} tokens, limit ${limit}`;
  }

  /** The conformance persona's answer to a request forcing a tool (else undefined). */
  function personaAnswer(
    codec: ApiCodec,
    parsed: ParsedRequest,
    log: LoggedRequest,
  ): Response | undefined {
    const c = options.conformance;
    if (c === undefined || parsed.forcedTool === undefined || parsed.toolResults > 0) {
      return undefined;
    }
    const tool = parsed.tools.find((t) => t.name === parsed.forcedTool);
    const ctx = { model, turn: 0, stream: parsed.stream };
    log.kind = "turn";
    log.turn = 0;
    if (c.tools === "ignore" || tool === undefined) {
      log.answer = "say (forced tool ignored)";
      log.usage = TEXT_USAGE;
      return codec.text("I would rather answer in text.", TEXT_USAGE, ctx);
    }
    log.answer = `call ${tool.name} (forced)`;
    log.usage = CALL_USAGE;
    return codec.call(
      { name: tool.name, args: Object.fromEntries(tool.props.map((p) => [p, 2])) },
      CALL_USAGE,
      ctx,
    );
  }

  function actionCall(
    action: ModelAction,
    parsed: ParsedRequest,
    cwd: string | undefined,
  ): ToolCall | string {
    if (action.kind === "shell") {
      if (action.command.includes("{cwd}") && cwd === undefined) {
        return "no working directory in the request for {cwd}";
      }
      return shellCall(parsed.tools, action.command.replaceAll("{cwd}", cwd ?? "")) ??
        `no shell tool among ${parsed.tools.map((t) => t.name).join(", ")}`;
    }
    if (action.kind === "say") return "not a tool action";
    if (cwd === undefined) return "no working directory in the request";
    if (action.kind === "call") return namedCall(parsed.tools, action.tools, action.args, cwd);
    return writeCall(parsed.tools, join(cwd, action.path), action.content) ??
      `no file-writing or shell tool among ${parsed.tools.map((t) => t.name).join(", ")}`;
  }

  function modelCall(
    codec: ApiCodec,
    pathname: string,
    raw: string,
    log: LoggedRequest,
  ): Response {
    let body: Record<string, unknown>;
    try {
      body = recordOf(JSON.parse(raw));
    } catch {
      problems.push(`#${log.seq} ${log.path}: the body is not JSON`);
      log.answer = "400 (body not JSON)";
      return codec.error(400, "body is not JSON");
    }
    const parsed = codec.parse(body, pathname);
    const stream = parsed.stream;
    if (parsed.media.length > 0) log.media = parsed.media;
    checkDelivered(parsed, log);
    const tooLong = conformanceTooLong(raw);
    if (tooLong !== undefined) {
      log.answer = "400 (context length exceeded)";
      return codec.error(400, tooLong);
    }
    if (parsed.tools.length === 0 && options.conformance && asksJson(parsed)) {
      log.kind = "side";
      log.answer = "side: json";
      log.usage = SIDE_USAGE;
      return codec.text('{"status":"ok"}', SIDE_USAGE, { model, turn: 0, stream });
    }
    if (parsed.tools.length === 0) {
      // Side requests (opencode's title, gemini/qwen's next-speaker check) get a plain text.
      log.kind = "side";
      log.usage = SIDE_USAGE;
      const asksNext = raw.includes("next_speaker");
      log.answer = asksNext ? "side: next speaker is the user" : "side: text";
      const text = asksNext ? '{"reasoning":"done","next_speaker":"user"}' : "Fake title";
      return codec.text(text, SIDE_USAGE, { model, turn: 0, stream });
    }
    let script: ModelScript;
    try {
      script = scriptFor(parsed);
    } catch (error) {
      problems.push(`#${log.seq}: ${(error as Error).message}`);
      log.answer = "500 (script error)";
      return codec.error(500, (error as Error).message);
    }
    const persona = personaAnswer(codec, parsed, log);
    if (persona !== undefined) return persona;
    const turn = parsed.toolResults;
    const cwd = findCwd(parsed.texts) ?? options.cwd;
    log.kind = "turn";
    log.turn = turn;
    if (cwd !== undefined) log.cwd = cwd;
    const { failure, action } = counters.next(script, turn);
    const ctx = { model, turn, stream };
    if (failure !== undefined) {
      log.answer = failure.kind === "status" ? `fail ${failure.status}` : failure.kind;
      return failureResponse(codec, failure, turn);
    }
    if (action.kind === "say") {
      log.answer = `say ${action.text}`;
      log.usage = TEXT_USAGE;
      return codec.text(action.text, TEXT_USAGE, ctx);
    }
    const call = actionCall(action, parsed, cwd);
    if (typeof call === "string") {
      problems.push(`#${log.seq} turn ${turn}: cannot ${action.kind}: ${call}`);
      log.answer = `say (cannot ${action.kind}: ${call})`;
      log.usage = TEXT_USAGE;
      return codec.text(`cannot ${action.kind}: ${call}`, TEXT_USAGE, ctx);
    }
    const what = action.kind === "write" ? `write ${action.path}` : action.kind;
    log.answer = `${what} via ${call.name}`;
    log.usage = CALL_USAGE;
    return codec.call(call, CALL_USAGE, ctx);
  }

  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
      onError: (error) => {
        problems.push(`server error: ${(error as Error).message}`);
        return new Response("internal error", { status: 500 });
      },
    },
    async (req) => {
      try {
        return await respond(req);
      } finally {
        wake();
      }
    },
  );

  async function respond(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname + url.search;
    const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
    const host = req.headers.get("host") ?? "";
    const log: LoggedRequest = {
      seq: requests.length,
      method: req.method,
      path,
      host,
      headers: Object.fromEntries(req.headers),
      body,
      kind: "other",
      answer: "",
    };
    requests.push(log);
    if (options.failAll !== undefined) {
      log.answer = `fail ${options.failAll} (every request)`;
      return json({ error: { message: `scripted failure ${options.failAll}` } }, options.failAll);
    }
    if (!LOOPBACK.some((h) => host === `${h}:${port}`)) {
      problems.push(`#${log.seq} request for another host: ${host} ${req.method} ${path}`);
      log.answer = "421 (not this host)";
      return json({ error: { message: `not ${host}` } }, 421);
    }
    if (req.method === "HEAD" || (req.method === "GET" && url.pathname === "/")) {
      log.answer = "200 (probe)";
      return new Response(null, { status: 200 });
    }
    const claim = options.conformance?.contextTokens;
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      log.answer = "model list";
      return json({
        object: "list",
        data: [{
          id: model,
          object: "model",
          owned_by: "test",
          ...(claim !== undefined ? { context_length: claim } : {}),
        }],
      });
    }
    if (req.method === "GET" && /\/models\/[^/:]+$/.test(url.pathname)) {
      // The model's own record (Anthropic /v1/models/<id>, Gemini /v1beta/models/<id>).
      log.answer = "model record";
      return json({
        id: model,
        name: `models/${model}`,
        ...(claim !== undefined ? { max_input_tokens: claim, inputTokenLimit: claim } : {}),
      });
    }
    if (url.pathname.endsWith("/messages/count_tokens")) {
      log.answer = "token count";
      return json({ input_tokens: 12 });
    }
    if (url.pathname.endsWith(":countTokens")) {
      log.answer = "token count";
      return json({ totalTokens: 12 });
    }
    const codec = req.method === "POST"
      ? CODECS.find((c) => c.isModelCall(url.pathname))
      : undefined;
    if (codec === undefined) {
      problems.push(`#${log.seq} no route: ${req.method} ${path}`);
      log.answer = "404";
      return json({ error: { message: `no route ${req.method} ${path}` } }, 404);
    }
    log.api = codec.api;
    return modelCall(codec, url.pathname, body, log);
  }
  port = server.addr.port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    problems,
    get script() {
      return state.script;
    },
    set script(next: ModelScript) {
      state.script = next;
    },
    turns: (cwd) =>
      requests.filter((r) => r.kind === "turn" && (cwd === undefined || r.cwd === cwd)),
    answered(test, count = 1) {
      return new Promise((resolve, reject) => {
        waiters.push({ test, count, resolve, reject });
        wake();
      });
    },
    async close() {
      for (const w of waiters.splice(0)) w.reject(new Error("model server closed"));
      for (const c of hanging) {
        try {
          c.error(new Error("model server closed"));
        } catch {
          // Already closed by the client going away.
        }
      }
      hanging.clear();
      await server.shutdown();
    },
  };
}
