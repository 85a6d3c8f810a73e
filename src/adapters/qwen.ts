// Qwen Code (`@qwen-code/qwen-code`): `qwen --auth-type openai -o stream-json --yolo
// --max-session-turns N PROMPT`; OpenAI-compatible endpoint through OPENAI_BASE_URL/KEY.
import { join } from "node:path";
import { childEnv, endpointKey, endpointTimeoutMs, requireEndpointApi } from "./_env.ts";
import { jsonFile } from "./_json.ts";
import { refuseMedia, worktreeCopies } from "./_media.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { preToolUseGroup } from "./_policy_hook.ts";
import { ARGV_PROMPT_LIMIT, argvOrStdin, utf8 } from "./_prompt.ts";
import { TURN_LIMIT_EXIT } from "./_result.ts";
import { streamJsonParser } from "./_stream_json.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

const PROVIDER_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"] as const;

/**
 * The generated `$HOME/.qwen/settings.json` (usage statistics and telemetry off). With an
 * endpoint (`no_retries`) the CLI does not retry failed requests
 * (`model.generationConfig.maxRetries: 0`), like claude and codex there: otherwise it retries
 * a 429 for minutes without printing anything, and the run loop sees only its deadline.
 */
export function qwenSettings(
  input: { no_retries?: boolean; images?: boolean; timeout_ms?: number } = {},
): Record<string, unknown> {
  const generation: Record<string, unknown> = {
    ...(input.no_retries ? { maxRetries: 0 } : {}),
    // Qwen Code sends an image file only to a model it believes takes images (by name); a spawn
    // with image attachments declares the modality, so `@path` images reach the endpoint.
    ...(input.images ? { modalities: { image: true } } : {}),
    ...(input.timeout_ms !== undefined ? { timeout: input.timeout_ms } : {}),
  };
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    ...(Object.keys(generation).length > 0 ? { model: { generationConfig: generation } } : {}),
  };
}

/** Where the policy's system settings go, relative to the spawn's HOME. */
export const QWEN_POLICY_SETTINGS = ".bernstein-policy/qwen-system-settings.json";

/**
 * The pre-tool hook as a system settings file (QWEN_CODE_SYSTEM_SETTINGS_PATH): system
 * settings override the workspace's, so a project `.qwen/settings.json` with
 * `disableAllHooks: true` cannot switch it off (it does for hooks in the user settings).
 */
function policySettings(policy: NonNullable<InvocationInput["tool_policy"]>): string {
  return jsonFile({
    disableAllHooks: false,
    hooks: {
      PreToolUse: [preToolUseGroup(policy, { timeoutUnit: "ms", name: "bernstein-policy" })],
    },
  });
}

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(input, qwen.models, notes);
  noteUnsupported("qwen", input, { effort: true }, notes);
  const own: Record<string, string> = {};
  let names: readonly string[] = PROVIDER_ENV;
  if (input.endpoint !== undefined) {
    requireEndpointApi("qwen", input.endpoint, ["openai-chat"]);
    names = [];
    own.OPENAI_BASE_URL = input.endpoint.base_url;
    own.OPENAI_API_KEY = endpointKey(input, input.endpoint);
  }
  const argv = [
    executable(input, qwen.binary),
    "--auth-type",
    "openai",
    "--output-format",
    "stream-json",
    "--yolo",
  ];
  if (model !== undefined) argv.push("--model", model);
  if (input.max_turns !== undefined) argv.push("--max-session-turns", String(input.max_turns));
  let body = input.prompt;
  if (input.system_prompt) {
    if (utf8(input.system_prompt).length <= ARGV_PROMPT_LIMIT) {
      argv.push("--append-system-prompt", input.system_prompt);
    } else {
      body = `${input.system_prompt}\n\n${body}`;
      notes.push("protocol text too long for argv: prepended to the prompt");
    }
  }
  const prompt = argvOrStdin(body);
  argv.push(...extraArgs(input), prompt.arg);
  refuseMedia("qwen", input, { files: true });
  const copies = worktreeCopies(input);
  if (copies.length > 0) notes.push(`${copies.length} attachment(s) as @path file references`);
  const files = [{
    path: ".qwen/settings.json",
    content: jsonFile(qwenSettings({
      no_retries: input.endpoint !== undefined,
      images: copies.length > 0,
      timeout_ms: endpointTimeoutMs(input.endpoint),
    })),
    mode: 0o600,
  }];
  if (input.tool_policy !== undefined) {
    files.push({
      path: QWEN_POLICY_SETTINGS,
      content: policySettings(input.tool_policy),
      mode: 0o600,
    });
    own.QWEN_CODE_SYSTEM_SETTINGS_PATH = join(input.home, QWEN_POLICY_SETTINGS);
  }
  return {
    argv,
    env: childEnv(names, input, own),
    ...(prompt.stdin ? { stdin: prompt.stdin } : {}),
    files,
    ...(copies.length > 0 ? { worktree_files: copies } : {}),
    cwd: input.cwd,
    prompt_channel: prompt.channel,
    notes,
  };
}

/** The Qwen Code adapter. */
export const qwen: Adapter = {
  name: "qwen",
  summary: "Qwen Code (qwen PROMPT, stream-json; reports turns and tokens, no cost)",
  binary: "qwen",
  prompt: "argv",
  models: { haiku: "qwen3-coder-flash", sonnet: "qwen3-coder-plus", opus: "qwen3-coder-plus" },
  model_flag: "--model",
  effort_flag: null,
  max_turns_flag: "--max-session-turns",
  approval_flag: "--yolo",
  policy_hook: "PreToolUse hook in a system settings file under $HOME " +
    "(QWEN_CODE_SYSTEM_SETTINGS_PATH)",
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("qwen"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--auth-type" },
    { flag: "--output-format" },
    { flag: "--yolo" },
    { flag: "--model" },
    { flag: "--max-session-turns" },
    { flag: "--append-system-prompt" },
  ],
  build,
  parser: () =>
    streamJsonParser({
      cost: false,
      error_result: /^\[API Error\b/,
      turn_limit_exit: TURN_LIMIT_EXIT,
    }),
};
