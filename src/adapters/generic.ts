// Any command as an agent, described in `adapters.generic` of the configuration: the command,
// how the prompt is passed, model and turn-limit flags, extra env names, its version probe
// and the flags it relies on. Output is read as plain text.
import { join } from "node:path";
import { childEnv, endpointKey } from "./_env.ts";
import { noteUnsupported, resolveModel } from "./_options.ts";
import { promptWithSystem, tooLongForArgv, utf8 } from "./_prompt.ts";
import { plainTextParser } from "./_plain_text.ts";
import { capabilitiesOf } from "./capabilities.ts";
import { AdapterError } from "./errors.ts";
import type { Adapter, AdapterSettings, Invocation, InvocationInput, Tier } from "./types.ts";

/** Where a file-channel prompt goes, relative to the spawn's HOME. */
export const GENERIC_PROMPT_FILE = "generic-prompt.md";

/** Env names through which an endpoint profile reaches a generic command. */
export const GENERIC_ENDPOINT_ENV = {
  base_url: "BERNSTEIN_ENDPOINT_BASE_URL",
  api_key: "BERNSTEIN_ENDPOINT_API_KEY",
  model: "BERNSTEIN_ENDPOINT_MODEL",
  api: "BERNSTEIN_ENDPOINT_API",
} as const;

function command(settings: AdapterSettings | undefined): string[] {
  const cmd = settings?.command;
  if (cmd === undefined || cmd.length === 0) {
    throw new AdapterError(
      "adapter.bad_settings",
      "the generic adapter needs a command",
      { location: "adapters.generic.command", hint: 'e.g. command: ["my-agent", "--headless"]' },
    );
  }
  return cmd;
}

function models(settings: AdapterSettings | undefined): Record<Tier, string> | null {
  const m = settings?.models;
  if (m === undefined) return null;
  return { haiku: m.haiku ?? "haiku", sonnet: m.sonnet ?? "sonnet", opus: m.opus ?? "opus" };
}

function build(input: InvocationInput): Invocation {
  const settings = input.settings;
  const cmd = command(settings);
  const notes: string[] = [];
  const model = resolveModel(input, models(settings), notes);
  noteUnsupported("generic", input, { effort: true, system_prompt: true }, notes);
  const argv = [input.executable ?? settings?.binary ?? cmd[0], ...cmd.slice(1)];
  if (model !== undefined) {
    if (settings?.model_flag) argv.push(settings.model_flag, model);
    else notes.push(`model '${model}' not passed: adapters.generic.model_flag is not set`);
  }
  if (input.max_turns !== undefined && settings?.max_turns_flag) {
    argv.push(settings.max_turns_flag, String(input.max_turns));
  }
  argv.push(...(settings?.extra_args ?? []));
  const own: Record<string, string> = {};
  if (input.endpoint !== undefined) {
    own[GENERIC_ENDPOINT_ENV.base_url] = input.endpoint.base_url;
    own[GENERIC_ENDPOINT_ENV.api_key] = endpointKey(input, input.endpoint);
    if (input.endpoint.api) own[GENERIC_ENDPOINT_ENV.api] = input.endpoint.api;
    if (model !== undefined) own[GENERIC_ENDPOINT_ENV.model] = model;
  }
  const prompt = promptWithSystem(input);
  const channel = settings?.prompt ?? "stdin";
  const base = { env: childEnv([], input, own), cwd: input.cwd, notes };
  if (channel === "file") {
    const path = join(input.home, GENERIC_PROMPT_FILE);
    if (settings?.prompt_flag) argv.push(settings.prompt_flag);
    argv.push(path);
    return {
      ...base,
      argv,
      files: [{ path: GENERIC_PROMPT_FILE, content: prompt, mode: 0o600 }],
      prompt_channel: "file",
    };
  }
  if (channel === "argv") {
    if (tooLongForArgv(prompt)) {
      throw new AdapterError(
        "adapter.prompt_too_long",
        `prompt of ${utf8(prompt).length} bytes is too long for one argument`,
        { location: "adapters.generic.prompt", hint: "use prompt: stdin or prompt: file" },
      );
    }
    if (settings?.prompt_flag) argv.push(settings.prompt_flag);
    argv.push(prompt);
    return { ...base, argv, files: [], prompt_channel: "argv" };
  }
  return { ...base, argv, stdin: utf8(prompt), files: [], prompt_channel: "stdin" };
}

/** The generic adapter with its settings applied (binary, version probe, flag contract). */
export function genericAdapter(settings: AdapterSettings | undefined): Adapter {
  const cmd = settings?.command;
  const help = settings?.help_args ?? ["--help"];
  return {
    ...generic,
    binary: settings?.binary ?? cmd?.[0] ?? generic.binary,
    models: models(settings),
    model_flag: settings?.model_flag ?? null,
    max_turns_flag: settings?.max_turns_flag ?? null,
    prompt: settings?.prompt ?? "stdin",
    version: { args: settings?.version_args ?? ["--version"], pattern: generic.version.pattern },
    flags: (settings?.flags ?? []).map((flag) => ({ flag, help })),
  };
}

/** The generic adapter, unconfigured (its binary resolves only once `command` is set). */
export const generic: Adapter = {
  name: "generic",
  summary: "Any command (adapters.generic: command, prompt channel, flags)",
  binary: "(adapters.generic.command)",
  prompt: "stdin",
  models: null,
  model_flag: null,
  effort_flag: null,
  max_turns_flag: null,
  approval_flag: "(part of adapters.generic.command)",
  env: [],
  capabilities: capabilitiesOf("generic"),
  version: { args: ["--version"], pattern: /(\d+\.\d+(?:\.\d+)?\S*)/ },
  flags: [],
  build,
  parser: plainTextParser,
};
