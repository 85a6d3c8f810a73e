// Sourcegraph Amp (`amp`): execute mode with the prompt on stdin, Claude-compatible
// stream-json output; Amp picks its own model, so tiers are ignored (with a note).
import { childEnv, refuseEndpoint } from "./_env.ts";
import { executable, extraArgs, noteUnsupported, resolveModel } from "./_options.ts";
import { promptWithSystem, utf8 } from "./_prompt.ts";
import { streamJsonParser } from "./_stream_json.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

function build(input: InvocationInput): Invocation {
  refuseEndpoint("amp", input);
  const notes: string[] = [];
  const model = resolveModel(input, null, notes);
  if (model !== undefined) notes.push(`model '${model}' ignored: amp chooses its own model`);
  noteUnsupported("amp", input, { effort: true, max_turns: true, system_prompt: true }, notes);
  const argv = [
    executable(input, amp.binary),
    "--execute",
    "--stream-json",
    "--dangerously-allow-all",
    ...extraArgs(input),
  ];
  return {
    argv,
    env: childEnv(amp.env, input),
    stdin: utf8(promptWithSystem(input)),
    files: [],
    cwd: input.cwd,
    prompt_channel: "stdin",
    notes,
  };
}

/** The Amp adapter. */
export const amp: Adapter = {
  name: "amp",
  summary: "Sourcegraph Amp (amp --execute --stream-json, prompt on stdin)",
  binary: "amp",
  prompt: "stdin",
  models: null,
  model_flag: null,
  effort_flag: null,
  max_turns_flag: null,
  approval_flag: "--dangerously-allow-all",
  env: ["AMP_API_KEY", "AMP_URL"],
  capabilities: capabilitiesOf("amp"),
  version: { args: ["--version"], pattern: /(\d+\.\d+\.\d+\S*)/ },
  flags: [
    { flag: "--execute" },
    { flag: "--stream-json" },
    { flag: "--dangerously-allow-all" },
  ],
  build,
  parser: () => streamJsonParser({ cost: false }),
};
