// The scripted agent: a deterministic Deno script (fixtures/agents/scripted_agent.ts) that
// follows `@agent …` instructions embedded in its prompt and prints Claude-style stream-json.
// It runs with the current Deno from a source checkout; a compiled binary has no Deno to run
// it with and no fixtures/ folder, so there it reports itself unavailable.
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { v8FlagsArg } from "../meta/mod.ts";
import { childEnv } from "./_env.ts";
import { refuseMedia, worktreeCopies } from "./_media.ts";
import { isTier, resolveModel } from "./_options.ts";
import { preToolUseGroup } from "./_policy_hook.ts";
import { utf8 } from "./_prompt.ts";
import { streamJsonParser } from "./_stream_json.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { Adapter, Invocation, InvocationInput } from "./types.ts";

/**
 * Variables through which an agent reaches the task server (set by the orchestrator). The
 * first three are the names `bernstein task …` reads (src/server client); the task id is
 * also in the prompt, and this variable is for agents that report without a CLI.
 */
export const AGENT_SERVER_ENV = {
  server_url: "BERNSTEIN_SERVER_URL",
  token: "BERNSTEIN_TASK_TOKEN",
  token_file: "BERNSTEIN_TASK_TOKEN_FILE",
  task_id: "BERNSTEIN_TASK_ID",
} as const;

/** When set, the scripted agent writes the exact prompt bytes it received to this path. */
export const SCRIPTED_RECORD_ENV = "BERNSTEIN_SCRIPTED_RECORD";

const SCRIPT_URL = new URL("../../fixtures/agents/scripted_agent.ts", import.meta.url);

/** Where the scripted agent's script is, or why it cannot be run. */
export type ScriptedRuntime =
  | { ok: true; deno: string; script: string }
  | { ok: false; reason: string };

/** Finds Deno and the script: both exist only when running from a source checkout. */
export async function scriptedRuntime(): Promise<ScriptedRuntime> {
  const deno = Deno.execPath();
  if (!/^deno(\.exe)?$/.test(basename(deno))) {
    return {
      ok: false,
      reason: `running from a compiled binary (${basename(deno)}): the scripted agent needs ` +
        "deno and a source checkout (fixtures/agents/)",
    };
  }
  if (SCRIPT_URL.protocol !== "file:") {
    return { ok: false, reason: `the scripted agent is not a local file (${SCRIPT_URL.href})` };
  }
  const script = fileURLToPath(SCRIPT_URL);
  try {
    const info = await Deno.stat(script);
    if (!info.isFile) return { ok: false, reason: `${script} is not a file` };
  } catch {
    return { ok: false, reason: `${script} is missing (not a source checkout)` };
  }
  return { ok: true, deno, script };
}

/** Path of the scripted agent's script in this checkout (whether or not it exists). */
export function scriptedAgentPath(): string {
  return fileURLToPath(SCRIPT_URL);
}

function loopbackAndServer(input: InvocationInput): string {
  const hosts = ["127.0.0.1", "localhost", "[::1]"];
  const url = input.extra_env?.[AGENT_SERVER_ENV.server_url];
  if (url !== undefined) {
    try {
      const host = new URL(url).host;
      if (!hosts.includes(host)) hosts.push(host);
    } catch {
      // A malformed URL is reported by the agent itself when it tries to use it.
    }
  }
  return hosts.join(",");
}

function build(input: InvocationInput): Invocation {
  const notes: string[] = [];
  const model = resolveModel(
    input,
    { haiku: "scripted-haiku", sonnet: "scripted-sonnet", opus: "scripted-opus" },
    notes,
  );
  const argv = [
    input.executable ?? "deno",
    "run",
    "-q",
    "--no-config",
    "--no-lock",
    // The V8 flags bernstein runs with: V8 checks its code cache against the flags, so a
    // process with other flags rejects and rewrites the cached code of the modules it shares
    // with bernstein (src/io), and the next bernstein start does the same back.
    v8FlagsArg(),
    "--allow-read",
    "--allow-write",
    "--allow-run",
    "--allow-env",
    `--allow-net=${loopbackAndServer(input)}`,
    scriptedAgentPath(),
  ];
  if (model !== undefined) argv.push("--model", isTier(model) ? `scripted-${model}` : model);
  if (input.max_turns !== undefined) argv.push("--max-turns", String(input.max_turns));
  if (input.effort !== undefined) argv.push("--effort", input.effort);
  if (input.tool_policy !== undefined) {
    // The same shape and place (argv) as claude's, so both exercise one hook path.
    const hooks = { PreToolUse: [preToolUseGroup(input.tool_policy, { timeoutUnit: "s" })] };
    argv.push("--setting-sources", "", "--settings", JSON.stringify({ hooks }));
  }
  argv.push(...(input.settings?.extra_args ?? []));
  const prompt = input.system_prompt ? `${input.system_prompt}\n\n${input.prompt}` : input.prompt;
  // A test that registers it as multimodal on the file-reference channel gets worktree copies.
  refuseMedia("scripted", input, { files: true });
  const copies = worktreeCopies(input);
  return {
    argv,
    env: childEnv(scripted.env, input),
    stdin: utf8(prompt),
    files: [],
    ...(copies.length > 0 ? { worktree_files: copies } : {}),
    cwd: input.cwd,
    prompt_channel: "stdin",
    notes,
  };
}

/** The scripted (deterministic, test) agent adapter. */
export const scripted: Adapter = {
  name: "scripted",
  summary: "Deterministic scripted agent (fixtures/agents/; tests and the demo)",
  binary: "deno",
  prompt: "stdin",
  models: { haiku: "scripted-haiku", sonnet: "scripted-sonnet", opus: "scripted-opus" },
  model_flag: "--model",
  effort_flag: "--effort",
  max_turns_flag: "--max-turns",
  approval_flag: "(none needed)",
  policy_hook: "PreToolUse hook in `--settings` JSON (argv), run as Claude Code runs it",
  // The server URL, token and task id arrive through `extra_env`, never from this env.
  env: [SCRIPTED_RECORD_ENV, "DENO_DIR"],
  capabilities: capabilitiesOf("scripted"),
  version: { args: ["--version"], pattern: /deno (\d+\.\d+\.\d+\S*)/ },
  flags: [],
  build,
  parser: () => streamJsonParser({ cost: true }),
};
