// opencode (`opencode-ai`): `opencode run --format json --auto [-m provider/model] PROMPT`;
// configuration (permissions, endpoint provider, autoupdate/share off) goes in
// OPENCODE_CONFIG_CONTENT, so nothing is written to the worktree; the only files written are
// the ones that stop its start-up npm install in its config folder under the spawn's HOME
// (and, with a tool-call policy, the policy plugin).
import { join } from "node:path";
import { childEnv, endpointKey, endpointTimeoutMs, requireEndpointApi } from "./_env.ts";
import { clip, jsonObject, num, obj, str } from "./_json.ts";
import { refuseMedia, worktreeCopies } from "./_media.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { hookArgv } from "./_policy_hook.ts";
import { promptWithSystem, utf8 } from "./_prompt.ts";
import { addTokens, finishResult, newState, rawEvent } from "./_result.ts";
import { capabilitiesOf } from "./capabilities.ts";
import { AdapterError } from "./errors.ts";
import type {
  Adapter,
  EndpointProfile,
  Invocation,
  InvocationInput,
  OutputParser,
  PlannedFile,
  Tier,
  ToolPolicyHook,
} from "./types.ts";

const PROVIDER_ENV = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "OPENROUTER_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "OPENCODE_API_KEY",
] as const;

/** Provider id of a `local_endpoints` profile in the generated opencode config. */
export const OPENCODE_PROVIDER_ID = "bernstein";

/** Env var carrying the endpoint key (referenced as `{env:…}` in the config). */
export const OPENCODE_ENDPOINT_KEY_ENV = "BERNSTEIN_ENDPOINT_API_KEY";

/** Switches that keep opencode from fetching models, LSP servers, plugins and updates. */
const QUIET_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
};

/**
 * Files under the spawn's HOME that stop opencode's start-up install. At every start opencode
 * runs `npm install @opencode-ai/plugin` in its global config folder
 * (`$XDG_CONFIG_HOME/opencode`) in the background — a request to registry.npmjs.org, from an
 * agent that should reach nothing but its model — unless that folder already has a
 * `node_modules` folder and a lock file listing the package (opencode 1.18: it compares names
 * only). The plugin SDK is only needed for local plugins, which a spawn never has.
 */
export const OPENCODE_NO_INSTALL_FILES: readonly PlannedFile[] = [
  { path: ".config/opencode/node_modules/.bernstein-no-install", content: "", mode: 0o600 },
  {
    path: ".config/opencode/package-lock.json",
    content: JSON.stringify({
      name: "opencode-config",
      lockfileVersion: 3,
      requires: true,
      packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } },
    }) + "\n",
    mode: 0o600,
  },
];

/** How the policy reaches opencode (and ollama, which runs opencode). */
export const OPENCODE_POLICY_HOOK = "`tool.execute.before` plugin under $HOME, named in " +
  "OPENCODE_CONFIG_CONTENT";

/** Where the policy plugin goes, relative to the spawn's HOME. */
export const OPENCODE_POLICY_PLUGIN = ".bernstein-policy/opencode-policy.mjs";

/**
 * The policy plugin: a `tool.execute.before` hook that runs `bernstein policy hook` (argv, no
 * shell) with the call in Claude's hook format, and throws — which blocks the tool — on a
 * deny, an ask, an answer it cannot read, a non-zero exit or a timeout.
 */
export function opencodePolicyPlugin(policy: ToolPolicyHook): string {
  return [
    "// bernstein's tool-call policy for opencode (written by bernstein; edits are refused).",
    'import { spawnSync } from "node:child_process";',
    `const ARGV = ${JSON.stringify(hookArgv(policy, "claude"))};`,
    `const ENV = ${JSON.stringify(policy.env ?? {})};`,
    `const TIMEOUT_MS = ${(policy.deadline_s + 10) * 1000};`,
    "const refuse = (why) => { throw new Error(`bernstein policy: deny (hookFailure): ${why}`); };",
    "export const BernsteinPolicy = async () => ({",
    '  "tool.execute.before": async (input, output) => {',
    "    const payload = JSON.stringify({",
    '      hook_event_name: "PreToolUse",',
    "      tool_name: input.tool,",
    "      tool_input: output.args ?? {},",
    "      tool_use_id: input.callID,",
    "      cwd: process.cwd(),",
    "    });",
    "    let r;",
    "    try {",
    "      r = spawnSync(ARGV[0], ARGV.slice(1), {",
    '        input: payload, encoding: "utf8", timeout: TIMEOUT_MS, maxBuffer: 1 << 20,',
    "        env: { ...process.env, ...ENV },",
    "      });",
    "    } catch (e) { refuse(String(e?.message ?? e)); }",
    "    if (r.error || r.status !== 0) refuse(String(r.error?.message ?? r.stderr ?? r.status).trim());",
    "    let answer;",
    '    try { answer = r.stdout.trim() === "" ? {} : JSON.parse(r.stdout); } catch { refuse("unreadable answer"); }',
    "    const out = answer?.hookSpecificOutput;",
    "    const decision = out?.permissionDecision;",
    '    if (decision === undefined || decision === "allow") return;',
    "    throw new Error(String(out.permissionDecisionReason ?? `bernstein policy: ${decision}`));",
    "  },",
    "});",
    "",
  ].join("\n");
}

/** The generated OPENCODE_CONFIG_CONTENT. */
export function opencodeConfig(
  input: { endpoint?: EndpointProfile; model?: string; plugin?: string; images?: boolean },
): Record<string, unknown> {
  const config: Record<string, unknown> = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    // opencode otherwise keeps its own git repository of the worktree (for its undo), with ~40
    // git processes a run and ~1 s of CPU; bernstein's worktree and merge already track every
    // change, and nothing bernstein reads comes from it.
    snapshot: false,
    permission: { edit: "allow", bash: "allow", webfetch: "allow" },
  };
  if (input.plugin !== undefined) config.plugin = [`file://${input.plugin}`];
  if (input.endpoint !== undefined) {
    const models: Record<string, unknown> = {};
    // opencode sends an image file part only to a model whose configuration declares image
    // input (else it replaces it with an error text); a spawn with images declares it.
    const media = input.images
      ? { attachment: true, modalities: { input: ["text", "image"], output: ["text"] } }
      : {};
    if (input.model !== undefined) models[input.model] = { name: input.model, ...media };
    config.provider = {
      [OPENCODE_PROVIDER_ID]: {
        npm: "@ai-sdk/openai-compatible",
        name: `bernstein endpoint ${input.endpoint.name}`,
        options: {
          baseURL: input.endpoint.base_url,
          apiKey: `{env:${OPENCODE_ENDPOINT_KEY_ENV}}`,
          ...(input.endpoint.timeout !== undefined
            ? { timeout: endpointTimeoutMs(input.endpoint) }
            : {}),
        },
        models,
      },
    };
    if (input.model !== undefined) config.model = `${OPENCODE_PROVIDER_ID}/${input.model}`;
  }
  return config;
}

/** Options for {@linkcode opencodeInvocation} (shared with the ollama adapter). */
export interface OpencodeInvocationOptions {
  /** Adapter name for notes and errors. */
  adapter: string;
  /** Tier table. */
  models: Readonly<Record<Tier, string>>;
  /** Endpoint to use when the input names none (ollama's default). */
  default_endpoint?: EndpointProfile;
}

/** Builds an opencode invocation. */
export function opencodeInvocation(
  input: InvocationInput,
  options: OpencodeInvocationOptions,
): Invocation {
  const notes: string[] = [];
  const endpoint = input.endpoint ?? options.default_endpoint;
  const effective = { ...input, endpoint };
  const model = resolveModel(effective, options.models, notes);
  noteUnsupported(options.adapter, input, { max_turns: true, system_prompt: true }, notes);
  const own: Record<string, string> = { ...QUIET_ENV };
  let names: readonly string[] = PROVIDER_ENV;
  let modelArg = model;
  if (endpoint !== undefined) {
    requireEndpointApi(options.adapter, endpoint, ["openai-chat"]);
    names = [];
    own[OPENCODE_ENDPOINT_KEY_ENV] = endpointKey(input, endpoint);
    if (model === undefined) {
      throw new AdapterError(
        "adapter.model_required",
        `${options.adapter} needs a model for endpoint '${endpoint.name}': opencode addresses ` +
          "custom providers as provider/model",
        {
          location: `local_endpoints.${endpoint.name}.model`,
          hint: "set the profile's model or the role's model",
        },
      );
    }
    modelArg = `${OPENCODE_PROVIDER_ID}/${model}`;
  }
  const files = [...OPENCODE_NO_INSTALL_FILES];
  let plugin: string | undefined;
  if (input.tool_policy !== undefined) {
    files.push({
      path: OPENCODE_POLICY_PLUGIN,
      content: opencodePolicyPlugin(input.tool_policy),
      mode: 0o600,
    });
    plugin = join(input.home, OPENCODE_POLICY_PLUGIN);
  }
  // Images are worktree copies `--file` attaches to the message; the array flag takes values up
  // to the next flag, so `--format` follows.
  const channel = capabilitiesOf(options.adapter).attachment_channel;
  refuseMedia(options.adapter, input, { files: channel === "file-argument" });
  const copies = worktreeCopies(input);
  if (copies.length > 0) notes.push(`${copies.length} attachment(s) with --file`);
  const images = copies.length > 0;
  own.OPENCODE_CONFIG_CONTENT = JSON.stringify(opencodeConfig({ endpoint, model, plugin, images }));
  // The prompt goes on stdin, with no message in argv: opencode 1.18 wraps every argv word
  // holding a space in quotes and escapes its `"` (`"…\"…\"…"`), so an argv prompt never
  // reaches the model as written; stdin alone is sent as it is.
  const prompt = utf8(promptWithSystem(input));
  const argv = [executable(input, "opencode"), "run"];
  for (const copy of copies) argv.push("--file", copy.path);
  argv.push("--format", "json", "--auto");
  if (modelArg !== undefined) argv.push("--model", modelArg);
  if (input.effort !== undefined) argv.push("--variant", input.effort);
  argv.push(...extraArgs(input));
  return {
    argv,
    env: childEnv(names, input, own),
    stdin: prompt,
    files,
    ...(copies.length > 0 ? { worktree_files: copies } : {}),
    cwd: input.cwd,
    prompt_channel: "stdin",
    notes,
  };
}

/** Parses opencode's `--format json` events (step_start, text, tool_use, step_finish, error). */
export function opencodeParser(): OutputParser {
  const state = newState();
  let steps = 0;
  let cost: number | null = null;
  return {
    line(line) {
      const ev = jsonObject(line);
      if (ev === undefined) return rawEvent(state, line);
      const sid = str(ev.sessionID);
      if (sid !== undefined) state.session_id = sid;
      const part = obj(ev.part);
      switch (ev.type) {
        case "step_start":
          return steps === 0
            ? [{ kind: "started", ...(sid ? { session_id: sid } : {}) }, { kind: "turn" }]
            : [{ kind: "turn" }];
        case "text": {
          const text = str(part?.text) ?? "";
          if (text.trim() === "") return [];
          state.last_text = text;
          return [{ kind: "message", text: clip(text) }];
        }
        case "tool_use": {
          const tool = str(part?.tool) ?? "unknown";
          const status = str(obj(part?.state)?.status);
          return [
            { kind: "tool_use", tool },
            ...(status === "error"
              ? [{ kind: "tool_result" as const, tool: "error", text: clip(status) }]
              : []),
          ];
        }
        case "step_finish": {
          steps++;
          state.turns = steps;
          const c = num(part?.cost);
          if (c !== undefined) cost = (cost ?? 0) + c;
          state.cost_usd = cost;
          const t = obj(part?.tokens);
          if (t !== undefined) {
            const cache = obj(t.cache);
            const read = num(cache?.read);
            const write = num(cache?.write);
            state.tokens = addTokens(state.tokens, {
              input: (num(t.input) ?? 0) + (read ?? 0) + (write ?? 0),
              output: (num(t.output) ?? 0) + (num(t.reasoning) ?? 0),
              ...(read !== undefined ? { cache_read: read } : {}),
              ...(write !== undefined ? { cache_write: write } : {}),
            });
          }
          state.subtype = str(part?.reason) ?? state.subtype;
          return [{ kind: "usage" }];
        }
        case "error": {
          const err = obj(ev.error);
          const message = str(obj(err?.data)?.message) ?? str(err?.message) ??
            str(err?.name) ?? "error";
          state.error = message;
          return [{ kind: "error", text: clip(message) }];
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

const MODELS: Readonly<Record<Tier, string>> = {
  haiku: "anthropic/claude-haiku-4-5",
  sonnet: "anthropic/claude-sonnet-4-5",
  opus: "anthropic/claude-opus-4-1",
};

/** The opencode adapter. */
export const opencode: Adapter = {
  name: "opencode",
  summary: "opencode (opencode run --format json; reports steps, tokens and cost)",
  binary: "opencode",
  prompt: "stdin",
  models: MODELS,
  model_flag: "--model",
  effort_flag: "--variant",
  max_turns_flag: null,
  approval_flag: "--auto + permission {edit, bash: allow} in OPENCODE_CONFIG_CONTENT",
  policy_hook: OPENCODE_POLICY_HOOK,
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("opencode"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--format", help: ["run", "--help"] },
    { flag: "--auto", help: ["run", "--help"] },
    { flag: "--model", help: ["run", "--help"] },
    { flag: "--variant", help: ["run", "--help"] },
    { flag: "--file", help: ["run", "--help"] },
  ],
  build: (input) => opencodeInvocation(input, { adapter: "opencode", models: MODELS }),
  parser: opencodeParser,
};
