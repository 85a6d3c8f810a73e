// The Claude Code `stream-json` event shape (system/init, assistant, user, result), which qwen,
// cursor-agent and amp also emit. One parser, with switches for what each CLI really reports.
import { arr, clip, jsonObject, num, obj, str } from "./_json.ts";
import { finishResult, MAX_TURNS_SUBTYPE, newState, rawEvent } from "./_result.ts";
import type { OutputParser, ProgressEvent, TokenUsage } from "./types.ts";

/** What the CLI's `result` event is trusted for. */
export interface StreamJsonOptions {
  /** Read `total_cost_usd` (only CLIs that really bill; others may print a meaningless 0). */
  cost: boolean;
  /**
   * A `result` text that means failure even when the event says success (qwen 0.15 reports
   * an API error as `subtype: success` with result `[API Error: …]` and exit 0).
   */
  error_result?: RegExp;
  /** An exit code that means the turn limit ended the run (qwen: 53, with no result event). */
  turn_limit_exit?: number;
}

function usageOf(value: unknown): TokenUsage | null {
  const u = obj(value);
  if (u === undefined) return null;
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  if (input === undefined && output === undefined) return null;
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const out: TokenUsage = {
    input: (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0),
    output: output ?? 0,
  };
  if (cacheRead !== undefined) out.cache_read = cacheRead;
  if (cacheWrite !== undefined) out.cache_write = cacheWrite;
  return out;
}

function contentEvents(content: unknown, role: "assistant" | "user"): {
  events: ProgressEvent[];
  text?: string;
} {
  const events: ProgressEvent[] = [];
  let text: string | undefined;
  if (typeof content === "string") {
    if (role === "assistant" && content.trim() !== "") {
      events.push({ kind: "message", text: clip(content) });
      text = content;
    }
    return { events, text };
  }
  for (const part of arr(content)) {
    const p = obj(part);
    if (p === undefined) continue;
    if (p.type === "text" && role === "assistant") {
      const t = str(p.text) ?? "";
      if (t.trim() !== "") {
        events.push({ kind: "message", text: clip(t) });
        text = t;
      }
    } else if (p.type === "tool_use") {
      events.push({ kind: "tool_use", tool: str(p.name) ?? "unknown" });
    } else if (p.type === "tool_result") {
      const body = typeof p.content === "string" ? p.content : "";
      events.push({
        kind: "tool_result",
        text: clip(body),
        ...(p.is_error === true ? { tool: "error" } : {}),
      });
    }
  }
  return { events, text };
}

/** A parser for Claude-style stream-json output. */
export function streamJsonParser(options: StreamJsonOptions): OutputParser {
  const state = newState();
  return {
    line(line) {
      const ev = jsonObject(line);
      if (ev === undefined) return rawEvent(state, line);
      const sid = str(ev.session_id);
      if (sid !== undefined) state.session_id = sid;
      switch (ev.type) {
        case "system": {
          if (ev.subtype !== "init") return [];
          return [{
            kind: "started",
            ...(sid ? { session_id: sid } : {}),
            ...(str(ev.model) ? { model: str(ev.model) } : {}),
          }];
        }
        case "assistant": {
          const message = obj(ev.message);
          const { events, text } = contentEvents(message?.content, "assistant");
          if (text !== undefined) state.last_text = text;
          return events;
        }
        case "user": {
          const message = obj(ev.message);
          return contentEvents(message?.content, "user").events;
        }
        case "tool_call": {
          // cursor-agent: {"type":"tool_call","subtype":"started","tool_call":{"<name>ToolCall":…}}
          if (ev.subtype !== "started") return [];
          const call = obj(ev.tool_call);
          const name = call ? Object.keys(call)[0]?.replace(/ToolCall$/, "") : undefined;
          return [{ kind: "tool_use", tool: name ?? "unknown" }];
        }
        case "result": {
          state.subtype = str(ev.subtype) ?? null;
          const resultText = str(ev.result);
          if (resultText !== undefined) state.final = resultText;
          const turns = num(ev.num_turns);
          if (turns !== undefined) state.turns = turns;
          const usage = usageOf(ev.usage);
          if (usage !== null) state.tokens = usage;
          if (options.cost) {
            const cost = num(ev.total_cost_usd);
            if (cost !== undefined) state.cost_usd = cost;
          }
          const isError = ev.is_error === true ||
            (state.subtype !== null && state.subtype.startsWith("error")) ||
            (options.error_result !== undefined && resultText !== undefined &&
              options.error_result.test(resultText));
          if (isError) {
            const errors = arr(ev.errors).map((e) => (typeof e === "string" ? e : "")).filter(
              (e) => e !== "",
            );
            state.error = errors.length > 0
              ? errors.join("; ")
              : resultText && resultText.trim() !== ""
              ? resultText
              : state.subtype ?? "error";
          }
          const events: ProgressEvent[] = [];
          if (state.tokens !== null || state.turns !== null) {
            events.push({ kind: "usage", text: `turns=${state.turns ?? "?"}` });
          }
          if (isError) events.push({ kind: "error", text: clip(state.error ?? "") });
          return events;
        }
        default:
          return [];
      }
    },
    finish(exit) {
      if (
        options.turn_limit_exit !== undefined && exit.code === options.turn_limit_exit &&
        state.subtype === null
      ) {
        state.subtype = MAX_TURNS_SUBTYPE;
      }
      return finishResult(state, exit);
    },
  };
}
