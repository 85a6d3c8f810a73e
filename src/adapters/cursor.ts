// Cursor's CLI agent (`cursor-agent`): `--print --output-format stream-json --force`, prompt on
// stdin; Claude-style stream-json output without cost or turn counts.
import { childEnv, refuseEndpoint } from "./_env.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { promptWithSystem, utf8 } from "./_prompt.ts";
import { streamJsonParser } from "./_stream_json.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

function build(input: InvocationInput): Invocation {
  refuseEndpoint("cursor", input);
  const notes: string[] = [];
  const model = resolveModel(input, cursor.models, notes);
  noteUnsupported("cursor", input, { effort: true, max_turns: true, system_prompt: true }, notes);
  const argv = [
    executable(input, cursor.binary),
    "--print",
    "--output-format",
    "stream-json",
    "--force",
  ];
  if (model !== undefined) argv.push("--model", model);
  argv.push(...extraArgs(input));
  return {
    argv,
    env: childEnv(cursor.env, input),
    stdin: utf8(promptWithSystem(input)),
    files: [],
    cwd: input.cwd,
    prompt_channel: "stdin",
    notes,
  };
}

/** The cursor-agent adapter. */
export const cursor: Adapter = {
  name: "cursor",
  summary: "Cursor agent CLI (cursor-agent --print, prompt on stdin, stream-json)",
  binary: "cursor-agent",
  prompt: "stdin",
  models: { haiku: "auto", sonnet: "sonnet-4.5", opus: "opus-4.1" },
  model_flag: "--model",
  effort_flag: null,
  max_turns_flag: null,
  approval_flag: "--force",
  env: ["CURSOR_API_KEY"],
  capabilities: capabilitiesOf("cursor"),
  version: { args: ["--version"], pattern: /(\d[\w.-]*\d)/ },
  flags: [
    { flag: "--print" },
    { flag: "--output-format" },
    { flag: "--force" },
    { flag: "--model" },
  ],
  build,
  parser: () => streamJsonParser({ cost: false }),
};
