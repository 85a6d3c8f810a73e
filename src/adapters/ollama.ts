// Ollama models driven by opencode through an OpenAI-compatible `local_endpoints` profile
// (Ollama serves /v1/chat/completions). Without a profile, the default Ollama address is used:
// $OLLAMA_HOST when set, else http://127.0.0.1:11434.
import { capabilitiesOf } from "./capabilities.ts";
import { OPENCODE_POLICY_HOOK, opencodeInvocation, opencodeParser } from "./opencode.ts";
import type { Adapter, EndpointProfile, InvocationInput, Tier } from "./types.ts";

const MODELS: Readonly<Record<Tier, string>> = {
  haiku: "qwen2.5-coder:7b",
  sonnet: "qwen2.5-coder:14b",
  opus: "qwen2.5-coder:32b",
};

/** The profile used when a role names no endpoint. */
export function defaultOllamaEndpoint(input: InvocationInput): EndpointProfile {
  const host = input.env.get("OLLAMA_HOST");
  let base = "http://127.0.0.1:11434";
  if (host !== undefined && host !== "") {
    base = /^https?:\/\//.test(host) ? host : `http://${host}`;
  }
  return { name: "ollama", base_url: `${base.replace(/\/+$/, "")}/v1`, api: "openai-chat" };
}

/** The ollama adapter (opencode + an OpenAI-compatible Ollama endpoint). */
export const ollama: Adapter = {
  name: "ollama",
  summary: "Ollama models through opencode and an OpenAI-compatible local_endpoints profile",
  binary: "opencode",
  prompt: "stdin",
  models: MODELS,
  model_flag: "--model bernstein/<model>",
  effort_flag: null,
  max_turns_flag: null,
  approval_flag: "--auto + permission {edit, bash: allow} in OPENCODE_CONFIG_CONTENT",
  policy_hook: OPENCODE_POLICY_HOOK,
  env: ["OLLAMA_HOST"],
  capabilities: capabilitiesOf("ollama"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--format", help: ["run", "--help"] },
    { flag: "--auto", help: ["run", "--help"] },
    { flag: "--model", help: ["run", "--help"] },
  ],
  build(input) {
    // Ollama needs a concrete model; with none asked for, take the sonnet tier's.
    const model = input.model ?? input.endpoint?.model ?? "sonnet";
    const invocation = opencodeInvocation(
      { ...input, model, effort: undefined },
      { adapter: "ollama", models: MODELS, default_endpoint: defaultOllamaEndpoint(input) },
    );
    if (input.effort !== undefined) {
      invocation.notes.push(`effort '${input.effort}' ignored: ollama has no effort setting`);
    }
    return invocation;
  },
  parser: opencodeParser,
};
