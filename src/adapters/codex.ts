// OpenAI Codex CLI (`@openai/codex`): `codex exec --json … -` with the prompt on stdin and
// JSONL events; configuration (endpoint provider, analytics off) goes in $CODEX_HOME/config.toml.
import { join } from "node:path";
import { childEnv, endpointKey, endpointTimeoutMs, requireEndpointApi } from "./_env.ts";
import { clip, jsonObject, num, obj, str } from "./_json.ts";
import { refuseMedia, worktreeCopies } from "./_media.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { preToolUseGroup } from "./_policy_hook.ts";
import { utf8 } from "./_prompt.ts";
import { addTokens, finishResult, newState, rawEvent } from "./_result.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Effort, Invocation, InvocationInput, OutputParser } from "./types.ts";

const PROVIDER_ENV = ["OPENAI_API_KEY", "CODEX_API_KEY"] as const;

/** Provider id written to config.toml for a `local_endpoints` profile. */
export const CODEX_PROVIDER_ID = "bernstein";

/** Env var that carries the endpoint key to codex (named by `env_key` in config.toml). */
export const CODEX_ENDPOINT_KEY_ENV = "BERNSTEIN_ENDPOINT_API_KEY";

const EFFORT: Record<Effort, string> = {
  low: "low",
  medium: "medium",
  high: "high",
  max: "xhigh",
};

/** A TOML basic string (JSON string escapes are valid TOML escapes for these characters). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The generated `$CODEX_HOME/config.toml` (analytics, update checks, apps and plugins off). */
export function codexConfigToml(
  input: { model?: string; endpoint?: { name: string; base_url: string; timeout?: number } },
): string {
  const lines = [
    "# Written by bernstein for one agent spawn; regenerated on every spawn.",
  ];
  if (input.endpoint !== undefined) {
    lines.push(`model_provider = ${tomlString(CODEX_PROVIDER_ID)}`);
  }
  if (input.model !== undefined) lines.push(`model = ${tomlString(input.model)}`);
  lines.push(
    "check_for_update_on_startup = false",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "apps = false",
    "plugins = false",
  );
  if (input.endpoint !== undefined) {
    lines.push(
      "",
      `[model_providers.${CODEX_PROVIDER_ID}]`,
      `name = ${tomlString(`bernstein endpoint ${input.endpoint.name}`)}`,
      `base_url = ${tomlString(input.endpoint.base_url)}`,
      `env_key = ${tomlString(CODEX_ENDPOINT_KEY_ENV)}`,
      `wire_api = "responses"`,
      "request_max_retries = 0",
      "stream_max_retries = 0",
    );
    const timeoutMs = endpointTimeoutMs(input.endpoint);
    if (timeoutMs !== undefined) lines.push(`stream_idle_timeout_ms = ${timeoutMs}`);
  }
  return lines.join("\n") + "\n";
}

/**
 * The pre-tool hook goes in argv as a session-flag hook (`--config hooks.PreToolUse=…`),
 * which codex 0.171 runs only when its trust is bypassed for this invocation; hooks stay on
 * whatever a config layer says. Project-local `.codex/` configuration is ignored for an
 * untrusted folder, and the worktree is never trusted.
 */
function policyArgs(policy: NonNullable<InvocationInput["tool_policy"]>): string[] {
  const group = preToolUseGroup(policy, { timeoutUnit: "s" });
  const hooks = (group.hooks as Record<string, unknown>[]).map((h) =>
    `{type=${tomlString(String(h.type))},command=${tomlString(String(h.command))},timeout=${
      Number(h.timeout)
    }}`
  );
  return [
    "--dangerously-bypass-hook-trust",
    "--config",
    "features.hooks=true",
    "--config",
    `hooks.PreToolUse=[{matcher=${tomlString(String(group.matcher))},hooks=[${hooks.join(",")}]}]`,
  ];
}

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(input, codex.models, notes);
  noteUnsupported("codex", input, { max_turns: true, system_prompt: true }, notes);
  const codexHome = join(input.home, ".codex");
  const own: Record<string, string> = { CODEX_HOME: codexHome };
  let names: readonly string[] = PROVIDER_ENV;
  if (input.endpoint !== undefined) {
    requireEndpointApi("codex", input.endpoint, ["openai-responses"]);
    names = [];
    own[CODEX_ENDPOINT_KEY_ENV] = endpointKey(input, input.endpoint);
  }
  const lastMessage = join(input.home, "codex-last-message.txt");
  // Images are worktree copies `--image` attaches to the first message (as `input_image`). The
  // flag takes several comma-separated values until the next flag, so `--json` follows it.
  refuseMedia("codex", input, { files: true });
  const copies = worktreeCopies(input);
  const images = copies.length > 0 ? ["--image", copies.map((c) => c.path).join(",")] : [];
  if (copies.length > 0) notes.push(`${copies.length} attachment(s) with --image`);
  const argv = [
    executable(input, codex.binary),
    "exec",
    ...images,
    "--json",
    "--dangerously-bypass-approvals-and-sandbox",
    "--skip-git-repo-check",
    "--output-last-message",
    lastMessage,
  ];
  if (model !== undefined) argv.push("--model", model);
  if (input.effort !== undefined) {
    argv.push("--config", `model_reasoning_effort=${tomlString(EFFORT[input.effort])}`);
  }
  if (input.tool_policy !== undefined) argv.push(...policyArgs(input.tool_policy));
  argv.push(...extraArgs(input), "-");
  const prompt = input.system_prompt ? `${input.system_prompt}\n\n${input.prompt}` : input.prompt;
  return {
    argv,
    env: childEnv(names, input, own),
    stdin: utf8(prompt),
    ...(copies.length > 0 ? { worktree_files: copies } : {}),
    files: [{
      path: ".codex/config.toml",
      content: codexConfigToml({ model, endpoint: input.endpoint }),
      mode: 0o600,
    }],
    cwd: input.cwd,
    prompt_channel: "stdin",
    last_message_file: lastMessage,
    notes,
  };
}

function parser(): OutputParser {
  const state = newState();
  let lastError: string | undefined;
  return {
    line(line) {
      const ev = jsonObject(line);
      if (ev === undefined) return rawEvent(state, line);
      switch (ev.type) {
        case "thread.started": {
          const id = str(ev.thread_id);
          if (id !== undefined) state.session_id = id;
          return [{ kind: "started", ...(id ? { session_id: id } : {}) }];
        }
        case "turn.started":
          return [{ kind: "turn" }];
        case "item.started":
        case "item.completed": {
          const item = obj(ev.item);
          if (item === undefined) return [];
          const type = str(item.type);
          if (ev.type === "item.started") {
            return type === "command_execution" || type === "file_change" ||
                type === "mcp_tool_call"
              ? [{ kind: "tool_use", tool: type, text: clip(str(item.command) ?? "") }]
              : [];
          }
          if (type === "agent_message") {
            const text = str(item.text) ?? "";
            state.last_text = text;
            return [{ kind: "message", text: clip(text) }];
          }
          if (type === "command_execution" || type === "file_change" || type === "mcp_tool_call") {
            return [{ kind: "tool_result", tool: type, text: clip(str(item.status) ?? "") }];
          }
          if (type === "error") {
            // A non-fatal warning item (e.g. unknown model metadata).
            return [{ kind: "raw", text: clip(str(item.message) ?? "") }];
          }
          return [];
        }
        case "turn.completed": {
          const u = obj(ev.usage);
          if (u !== undefined) {
            const cached = num(u.cached_input_tokens);
            state.tokens = addTokens(state.tokens, {
              input: num(u.input_tokens) ?? 0,
              output: num(u.output_tokens) ?? 0,
              ...(cached !== undefined ? { cache_read: cached } : {}),
            });
          }
          return [{ kind: "usage" }];
        }
        case "turn.failed": {
          const message = str(obj(ev.error)?.message) ?? "turn failed";
          state.error = message;
          return [{ kind: "error", text: clip(message) }];
        }
        case "error": {
          lastError = str(ev.message) ?? "error";
          // With its retries off codex still waits for ever when the model server refuses
          // connections ("Reconnecting... waiting for network"): fatal, so it fails fast.
          return [{
            kind: "error",
            text: clip(lastError),
            ...(/waiting for network/i.test(lastError) ? { fatal: true } : {}),
          }];
        }
        default:
          return [];
      }
    },
    finish(exit) {
      if (state.error === undefined && exit.code !== 0 && lastError !== undefined) {
        state.error = lastError;
      }
      return finishResult(state, exit);
    },
  };
}

/** The Codex CLI adapter. */
export const codex: Adapter = {
  name: "codex",
  summary: "OpenAI Codex CLI (codex exec --json; reports tokens, no cost or turns)",
  binary: "codex",
  prompt: "stdin",
  models: { haiku: "gpt-5.1-codex-mini", sonnet: "gpt-5.1-codex", opus: "gpt-5.1-codex-max" },
  model_flag: "--model",
  effort_flag: "--config model_reasoning_effort=…",
  max_turns_flag: null,
  approval_flag: "--dangerously-bypass-approvals-and-sandbox",
  policy_hook: "PreToolUse session hook in `--config hooks.PreToolUse=…` (argv), " +
    "`--dangerously-bypass-hook-trust`",
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("codex"),
  version: { args: ["--version"], pattern: /codex-cli (\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--json", help: ["exec", "--help"] },
    { flag: "--dangerously-bypass-approvals-and-sandbox", help: ["exec", "--help"] },
    { flag: "--skip-git-repo-check", help: ["exec", "--help"] },
    { flag: "--output-last-message", help: ["exec", "--help"] },
    { flag: "--model", help: ["exec", "--help"] },
    { flag: "--image", help: ["exec", "--help"] },
    { flag: "--config", help: ["exec", "--help"] },
    { flag: "--dangerously-bypass-hook-trust", help: ["exec", "--help"] },
  ],
  build,
  parser,
};
