// aider (`aider-chat`): one-shot with the prompt in a file (`--message-file`), edits applied
// without confirmation (`--yes-always`), no commits of its own (the orchestrator commits).
// Output is plain text; the parser reads aider's "Tokens: … Cost: …" lines.
import { join } from "node:path";
import { childEnv, endpointKey, requireEndpointApi } from "./_env.ts";
import { clip } from "./_json.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { promptWithSystem } from "./_prompt.ts";
import { finishResult, newState } from "./_result.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput, OutputParser, TokenUsage } from "./types.ts";

const PROVIDER_ENV = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "OPENAI_API_BASE",
  "GEMINI_API_KEY",
  "OPENROUTER_API_KEY",
  "DEEPSEEK_API_KEY",
] as const;

/** Where the prompt file goes, relative to the spawn's HOME. */
export const AIDER_PROMPT_FILE = "aider-prompt.md";

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  let model = resolveModel(input, aider.models, notes);
  noteUnsupported("aider", input, { effort: true, max_turns: true, system_prompt: true }, notes);
  const own: Record<string, string> = {};
  let names: readonly string[] = PROVIDER_ENV;
  if (input.endpoint !== undefined) {
    requireEndpointApi("aider", input.endpoint, ["openai-chat"]);
    names = [];
    own.OPENAI_API_BASE = input.endpoint.base_url;
    own.OPENAI_API_KEY = endpointKey(input, input.endpoint);
    // litellm routes "openai/<model>" to OPENAI_API_BASE.
    if (model !== undefined && !model.startsWith("openai/")) model = `openai/${model}`;
  }
  const argv = [
    executable(input, aider.binary),
    "--message-file",
    join(input.home, AIDER_PROMPT_FILE),
    "--yes-always",
    "--no-auto-commits",
    "--no-stream",
    "--no-pretty",
    "--no-check-update",
    "--no-show-model-warnings",
    "--analytics-disable",
  ];
  if (model !== undefined) argv.push("--model", model);
  if (input.endpoint?.timeout !== undefined) argv.push("--timeout", String(input.endpoint.timeout));
  argv.push(...extraArgs(input));
  return {
    argv,
    env: childEnv(names, input, own),
    files: [{ path: AIDER_PROMPT_FILE, content: promptWithSystem(input), mode: 0o600 }],
    cwd: input.cwd,
    prompt_channel: "file",
    notes,
  };
}

const SIZE: Record<string, number> = { "": 1, k: 1e3, K: 1e3, m: 1e6, M: 1e6 };

function count(text: string, unit: string): number {
  return Math.round(Number(text.replace(/,/g, "")) * (SIZE[unit] ?? 1));
}

function parser(): OutputParser {
  const state = newState();
  let sessionCost: number | null = null;
  return {
    line(line) {
      const text = line.trim();
      if (text === "") return [];
      // "Tokens: 2.3k sent, 1.2k cache write, 120 received. Cost: $0.01 message, $0.02 session."
      const tokens = /^Tokens:\s*([\d.,]+)([kKmM]?) sent(?:,.*?)?,\s*([\d.,]+)([kKmM]?) received/
        .exec(text);
      if (tokens) {
        const usage: TokenUsage = {
          input: count(tokens[1], tokens[2]),
          output: count(tokens[3], tokens[4]),
        };
        state.tokens = usage;
        const cost = /\$([\d.]+) session/.exec(text);
        if (cost) sessionCost = Number(cost[1]);
        state.cost_usd = sessionCost;
        return [{ kind: "usage", text: clip(text) }];
      }
      if (/^Applied edit to /.test(text)) {
        return [{ kind: "tool_result", tool: "edit", text: clip(text) }];
      }
      if (/^(litellm\.|Error:|.*APIError)/.test(text)) {
        state.error = text;
        return [{ kind: "error", text: clip(text) }];
      }
      state.last_text = text;
      return [{ kind: "message", text: clip(text) }];
    },
    finish(exit) {
      return finishResult(state, exit);
    },
  };
}

/** The aider adapter. */
export const aider: Adapter = {
  name: "aider",
  summary: "aider (--message-file, --yes-always; plain text, reports tokens and cost)",
  binary: "aider",
  prompt: "file",
  // aider's own model aliases.
  models: { haiku: "haiku", sonnet: "sonnet", opus: "opus" },
  model_flag: "--model",
  effort_flag: null,
  max_turns_flag: null,
  approval_flag: "--yes-always",
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("aider"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--message-file" },
    { flag: "--yes-always" },
    { flag: "--no-auto-commits" },
    { flag: "--no-stream" },
    { flag: "--no-pretty" },
    { flag: "--no-check-update" },
    { flag: "--no-show-model-warnings" },
    { flag: "--analytics-disable" },
    { flag: "--model" },
    { flag: "--timeout" },
  ],
  build,
  parser,
};
