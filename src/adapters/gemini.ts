// Gemini CLI (`@google/gemini-cli`): `gemini --prompt … --output-format stream-json --yolo
// --skip-trust`; auth type, telemetry and the turn limit go in $HOME/.gemini/settings.json.
import { childEnv, endpointKey, requireEndpointApi } from "./_env.ts";
import { clip, jsonFile, jsonObject, num, obj, str } from "./_json.ts";
import { refuseMedia, worktreeCopies } from "./_media.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { cliHookTimeoutS, hookShellLine } from "./_policy_hook.ts";
import { argvOrStdin, promptWithSystem } from "./_prompt.ts";
import { finishResult, MAX_TURNS_SUBTYPE, newState, rawEvent } from "./_result.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput, OutputParser } from "./types.ts";

const PROVIDER_ENV = ["GEMINI_API_KEY", "GOOGLE_API_KEY"] as const;

/**
 * The generated `$HOME/.gemini/settings.json`. With an endpoint (`no_retries`) the CLI makes
 * one attempt per request (`general.maxAttempts: 1`), like claude and codex there: otherwise
 * it retries a 429 or 500 with backoff for minutes, and the run loop sees only its deadline
 * instead of the failure and its reason.
 */
export function geminiSettings(
  input: { max_turns?: number; no_retries?: boolean; tool_policy?: InvocationInput["tool_policy"] },
): Record<string, unknown> {
  return {
    ...(input.tool_policy !== undefined ? policySettings(input.tool_policy) : {}),
    // Without an explicit auth type a headless run fails with "Invalid auth method selected".
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      disableAutoUpdate: true,
      disableUpdateNag: true,
      ...(input.no_retries ? { maxAttempts: 1 } : {}),
    },
    ...(input.max_turns !== undefined ? { model: { maxSessionTurns: input.max_turns } } : {}),
  };
}

/**
 * The pre-tool hook as a `BeforeTool` hook of the user settings (under the spawn's HOME,
 * written before the CLI starts). The system settings file cannot carry it: gemini 0.61
 * reads one only when every folder above it is root-owned. A workspace `.gemini/settings.json`
 * with `hooksConfig.enabled: false`, a `disabled` list or empty hooks does not remove it
 * (tests/adapters/live).
 */
function policySettings(policy: NonNullable<InvocationInput["tool_policy"]>) {
  return {
    hooksConfig: { enabled: true },
    hooks: {
      BeforeTool: [{
        matcher: ".*",
        hooks: [{
          type: "command",
          command: hookShellLine(policy, "gemini"),
          timeout: cliHookTimeoutS(policy) * 1000,
        }],
      }],
    },
  };
}

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(input, gemini.models, notes);
  noteUnsupported("gemini", input, { effort: true, system_prompt: true }, notes);
  const own: Record<string, string> = {};
  let names: readonly string[] = PROVIDER_ENV;
  if (input.endpoint !== undefined) {
    requireEndpointApi("gemini", input.endpoint, ["gemini"]);
    names = [];
    own.GOOGLE_GEMINI_BASE_URL = input.endpoint.base_url;
    own.GEMINI_API_KEY = endpointKey(input, input.endpoint);
  }
  const prompt = argvOrStdin(promptWithSystem(input));
  const argv = [
    executable(input, gemini.binary),
    "--output-format",
    "stream-json",
    "--yolo",
    "--skip-trust",
  ];
  // An explicit model also avoids an extra routing request.
  if (model !== undefined) argv.push("--model", model);
  argv.push(...extraArgs(input), "--prompt", prompt.arg);
  // Images are copies in the worktree that the prompt names with `@path`: the CLI reads them
  // and sends them as inlineData.
  refuseMedia("gemini", input, { files: true });
  const copies = worktreeCopies(input);
  if (copies.length > 0) notes.push(`${copies.length} attachment(s) as @path file references`);
  return {
    ...(copies.length > 0 ? { worktree_files: copies } : {}),
    argv,
    env: childEnv(names, input, own),
    ...(prompt.stdin ? { stdin: prompt.stdin } : {}),
    files: [{
      path: ".gemini/settings.json",
      content: jsonFile(
        geminiSettings({
          max_turns: input.max_turns,
          no_retries: input.endpoint !== undefined,
          tool_policy: input.tool_policy,
        }),
      ),
      mode: 0o600,
    }],
    cwd: input.cwd,
    prompt_channel: prompt.channel,
    notes,
  };
}

function parser(): OutputParser {
  const state = newState();
  let current = "";
  return {
    line(line) {
      const ev = jsonObject(line);
      if (ev === undefined) return rawEvent(state, line);
      switch (ev.type) {
        case "init": {
          const id = str(ev.session_id);
          if (id !== undefined) state.session_id = id;
          return [{
            kind: "started",
            ...(id ? { session_id: id } : {}),
            ...(str(ev.model) ? { model: str(ev.model) } : {}),
          }];
        }
        case "message": {
          if (ev.role !== "assistant") return [];
          const text = str(ev.content) ?? "";
          // Deltas of one reply arrive as several events; a whole message replaces.
          current = ev.delta === true ? current + text : text;
          if (current.trim() !== "") state.last_text = current;
          return text.trim() === "" ? [] : [{ kind: "message", text: clip(text) }];
        }
        case "tool_use":
          current = "";
          return [{ kind: "tool_use", tool: str(ev.tool_name) ?? "unknown" }];
        case "tool_result":
          return [{
            kind: "tool_result",
            text: clip(str(ev.output) ?? str(ev.status) ?? ""),
            ...(ev.status === "error" ? { tool: "error" } : {}),
          }];
        case "error": {
          const message = str(ev.message) ?? "error";
          if (ev.severity === "error") state.error = message;
          return [{ kind: "error", text: clip(message) }];
        }
        case "result": {
          const stats = obj(ev.stats);
          if (stats !== undefined) {
            const input = num(stats.input_tokens) ?? num(stats.input);
            const output = num(stats.output_tokens);
            const cached = num(stats.cached);
            if (input !== undefined || output !== undefined) {
              state.tokens = {
                input: input ?? 0,
                output: output ?? 0,
                ...(cached !== undefined ? { cache_read: cached } : {}),
              };
            }
          }
          state.subtype = str(ev.status) ?? null;
          if (ev.status === "error") {
            const err = obj(ev.error);
            if (err?.type === "FatalTurnLimitedError") state.subtype = MAX_TURNS_SUBTYPE;
            state.error = str(err?.message) ?? state.error ?? "gemini reported an error";
            return [{ kind: "error", text: clip(state.error) }];
          }
          return [{ kind: "usage" }];
        }
        default:
          return [];
      }
    },
    finish(exit) {
      return finishResult(state, exit);
    },
  };
}

/** The Gemini CLI adapter. */
export const gemini: Adapter = {
  name: "gemini",
  summary: "Gemini CLI (gemini --prompt, stream-json; reports tokens)",
  binary: "gemini",
  prompt: "argv",
  models: {
    haiku: "gemini-2.5-flash-lite",
    sonnet: "gemini-2.5-flash",
    opus: "gemini-2.5-pro",
  },
  model_flag: "--model",
  effort_flag: null,
  max_turns_flag: "settings.json model.maxSessionTurns",
  approval_flag: "--yolo --skip-trust",
  policy_hook: "BeforeTool hook in `$HOME/.gemini/settings.json`",
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("gemini"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--prompt" },
    { flag: "--output-format" },
    { flag: "--yolo" },
    { flag: "--skip-trust" },
    { flag: "--model" },
  ],
  build,
  parser,
};
