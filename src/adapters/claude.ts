// Claude Code (`@anthropic-ai/claude-code`): `claude -p` with the prompt on stdin (one
// stream-json user message with image blocks when attachments carry images) and stream-json
// output whose final `result` event carries turns, usage and cost.
import { join } from "node:path";
import { childEnv, endpointKey, endpointTimeoutMs, requireEndpointApi } from "./_env.ts";
import { blockMedia, refuseMedia, streamJsonUserMessage } from "./_media.ts";
import { executable, extraArgs, resolveModel } from "./_options.ts";
import { preToolUseGroup } from "./_policy_hook.ts";
import { ARGV_PROMPT_LIMIT, utf8 } from "./_prompt.ts";
import { streamJsonParser } from "./_stream_json.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

/** Provider credentials passed through when no endpoint is configured. */
const PROVIDER_ENV = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "CLAUDE_CODE_OAUTH_TOKEN",
] as const;

/**
 * The pre-tool hook lives in argv (`--settings` JSON), where the agent cannot rewrite it, and
 * `--setting-sources ""` keeps every settings file away — the project's `.claude/` (a hostile
 * repository, or an earlier agent's merged work, could set `disableAllHooks` there) and the
 * spawn's own `$CLAUDE_CONFIG_DIR`.
 */
function policyArgs(policy: NonNullable<InvocationInput["tool_policy"]>): string[] {
  const settings = {
    disableAllHooks: false,
    hooks: { PreToolUse: [preToolUseGroup(policy, { timeoutUnit: "s" })] },
  };
  return ["--setting-sources", "", "--settings", JSON.stringify(settings)];
}

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(input, claude.models, notes);
  // Root: claude refuses bypassPermissions for uid 0. The operator chooses, in
  // adapters.claude.root_permission, between acceptEdits (file tools only; shell commands
  // are refused in print mode) and IS_SANDBOX=1 (declares the machine a sandbox).
  let mode = "bypassPermissions";
  const own: Record<string, string> = {
    CLAUDE_CONFIG_DIR: join(input.home, ".claude"),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  if (input.is_root) {
    if (input.settings?.root_permission === "is_sandbox") {
      own.IS_SANDBOX = "1";
      notes.push(
        "running as root: IS_SANDBOX=1 with bypassPermissions (adapters.claude.root_permission: is_sandbox)",
      );
    } else {
      mode = "acceptEdits";
      notes.push(
        "running as root: --permission-mode acceptEdits, so shell commands are refused; set " +
          "adapters.claude.root_permission: is_sandbox on a sandboxed machine to allow them",
      );
    }
  }
  let names: readonly string[] = PROVIDER_ENV;
  if (input.endpoint !== undefined) {
    requireEndpointApi("claude", input.endpoint, ["anthropic"]);
    // The real provider credentials never travel to a local endpoint.
    names = [];
    own.ANTHROPIC_BASE_URL = input.endpoint.base_url;
    own.ANTHROPIC_API_KEY = endpointKey(input, input.endpoint);
    own.CLAUDE_CODE_MAX_RETRIES = "0";
    const timeoutMs = endpointTimeoutMs(input.endpoint);
    if (timeoutMs !== undefined) {
      // The whole request, and a stream that stops mid-answer (a hung server sends headers).
      own.API_TIMEOUT_MS = String(timeoutMs);
      own.CLAUDE_STREAM_IDLE_TIMEOUT_MS = String(timeoutMs);
    }
  }
  const argv = [
    executable(input, claude.binary),
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    mode,
    "--no-session-persistence",
  ];
  if (model !== undefined) argv.push("--model", model);
  if (input.effort !== undefined) argv.push("--effort", input.effort);
  if (input.max_turns !== undefined) argv.push("--max-turns", String(input.max_turns));
  let prompt = input.prompt;
  if (input.system_prompt) {
    if (utf8(input.system_prompt).length <= ARGV_PROMPT_LIMIT) {
      argv.push("--append-system-prompt", input.system_prompt);
    } else {
      prompt = `${input.system_prompt}\n\n${prompt}`;
      notes.push("protocol text too long for argv: prepended to the prompt");
    }
  }
  if (input.tool_policy !== undefined) argv.push(...policyArgs(input.tool_policy));
  // Images go as content blocks of one stream-json user message: the API gets them as images
  // (not as base64 text), with the exact attested bytes.
  refuseMedia("claude", input, { blocks: true });
  const media = blockMedia(input);
  if (media.length > 0) {
    argv.push("--input-format", "stream-json");
    notes.push(`${media.length} attachment(s) as content blocks (--input-format stream-json)`);
  }
  argv.push(...extraArgs(input));
  return {
    argv,
    env: childEnv(names, input, own),
    stdin: utf8(media.length > 0 ? streamJsonUserMessage(prompt, media) : prompt),
    files: [],
    cwd: input.cwd,
    prompt_channel: "stdin",
    notes,
  };
}

/** The Claude Code adapter. */
export const claude: Adapter = {
  name: "claude",
  summary: "Claude Code (claude -p, stream-json; reports turns, tokens and cost)",
  binary: "claude",
  prompt: "stdin",
  models: { haiku: "haiku", sonnet: "sonnet", opus: "opus" },
  model_flag: "--model",
  effort_flag: "--effort",
  max_turns_flag: "--max-turns",
  approval_flag: "--permission-mode bypassPermissions (acceptEdits or IS_SANDBOX=1 as root)",
  policy_hook: 'PreToolUse hook in `--settings` JSON (argv), `--setting-sources ""`',
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("claude"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "-p" },
    { flag: "--output-format" },
    { flag: "--verbose" },
    { flag: "--permission-mode" },
    { flag: "--no-session-persistence" },
    { flag: "--model" },
    { flag: "--effort" },
    { flag: "--append-system-prompt" },
    { flag: "--input-format" },
    { flag: "--settings" },
    { flag: "--setting-sources" },
    {
      // Accepted in print mode but absent from `claude --help`.
      flag: "--max-turns",
      hidden: { probe: ["-p", "--max-turns", "1"], unknown_option: /unknown option/i },
    },
  ],
  build,
  parser: () => streamJsonParser({ cost: true }),
};
