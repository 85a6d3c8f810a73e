// Block's goose (`goose run`): instructions from a file, no session, auto mode (GOOSE_MODE);
// provider and model through GOOSE_PROVIDER / GOOSE_MODEL; plain-text output.
import { join } from "node:path";
import { childEnv, endpointKey, requireEndpointApi } from "./_env.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { promptWithSystem } from "./_prompt.ts";
import { plainTextParser } from "./_plain_text.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

const PROVIDER_ENV = [
  "GOOSE_PROVIDER",
  "GOOSE_MODEL",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GOOGLE_API_KEY",
  "OPENROUTER_API_KEY",
] as const;

/** Where the instructions file goes, relative to the spawn's HOME. */
export const GOOSE_INSTRUCTIONS_FILE = "goose-instructions.md";

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(input, goose.models, notes);
  noteUnsupported("goose", input, { effort: true, system_prompt: true }, notes);
  const own: Record<string, string> = { GOOSE_MODE: "auto", GOOSE_DISABLE_KEYRING: "1" };
  let names: readonly string[] = PROVIDER_ENV;
  if (model !== undefined) own.GOOSE_MODEL = model;
  if (input.endpoint !== undefined) {
    requireEndpointApi("goose", input.endpoint, ["openai-chat"]);
    names = [];
    const url = new URL(input.endpoint.base_url);
    own.GOOSE_PROVIDER = "openai";
    own.OPENAI_HOST = url.origin;
    const path = url.pathname.replace(/^\/+|\/+$/g, "");
    own.OPENAI_BASE_PATH = path === "" ? "chat/completions" : `${path}/chat/completions`;
    own.OPENAI_API_KEY = endpointKey(input, input.endpoint);
  }
  const argv = [
    executable(input, goose.binary),
    "run",
    "--no-session",
    "--instructions",
    join(input.home, GOOSE_INSTRUCTIONS_FILE),
  ];
  if (input.max_turns !== undefined) argv.push("--max-turns", String(input.max_turns));
  argv.push(...extraArgs(input));
  return {
    argv,
    env: childEnv(names, input, own),
    files: [{ path: GOOSE_INSTRUCTIONS_FILE, content: promptWithSystem(input), mode: 0o600 }],
    cwd: input.cwd,
    prompt_channel: "file",
    notes,
  };
}

/** The goose adapter. */
export const goose: Adapter = {
  name: "goose",
  summary: "goose (goose run --instructions FILE; plain text)",
  binary: "goose",
  prompt: "file",
  models: { haiku: "claude-haiku-4-5", sonnet: "claude-sonnet-4-5", opus: "claude-opus-4-1" },
  model_flag: "env GOOSE_MODEL",
  effort_flag: null,
  max_turns_flag: "--max-turns",
  approval_flag: "env GOOSE_MODE=auto",
  env: [...PROVIDER_ENV],
  capabilities: capabilitiesOf("goose"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--no-session", help: ["run", "--help"] },
    { flag: "--instructions", help: ["run", "--help"] },
    { flag: "--max-turns", help: ["run", "--help"] },
  ],
  build,
  parser: plainTextParser,
};
