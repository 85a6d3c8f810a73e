/**
 * Agent adapters: one file per CLI, each data plus two pure functions — `build` (argv, env,
 * stdin and config files of one spawn) and `parser` (stdout → progress events + result) —
 * the registry that resolves `cli:` settings, the one capability table, and the contract
 * checks behind `bernstein adapters list|check`.
 *
 * @example
 * ```ts ignore
 * import { resolveCli, systemPathLookup, writeInvocationFiles } from "./mod.ts";
 * import { processEnv, spawnProcess } from "../io/mod.ts";
 * const { adapter, executable } = await resolveCli("claude", {
 *   lookup: systemPathLookup(processEnv),
 * });
 * const inv = adapter.build({
 *   prompt: "Add a README", cwd: "/repo/.sdd/worktrees/s1", home: "/tmp/s1-home",
 *   env: processEnv, executable, max_turns: 30,
 * });
 * await writeInvocationFiles(inv, "/tmp/s1-home");
 * const handle = spawnProcess(inv.argv, { cwd: inv.cwd, env: inv.env, stdin: inv.stdin });
 * ```
 *
 * @module
 */
export { BASE_ENV as BASE_AGENT_ENV, ENDPOINT_TIMEOUT_NATIVE } from "./_env.ts";
export { aider } from "./aider.ts";
export { amp } from "./amp.ts";
export {
  type AttachmentChannel,
  type Capabilities,
  capabilitiesFor,
  CAPABILITY_TABLE,
} from "./capabilities.ts";
export { claude } from "./claude.ts";
export { codex, CODEX_ENDPOINT_KEY_ENV } from "./codex.ts";
export { checkFlags, helpMentionsFlag, type ProbeRunner, probeVersion } from "./contract.ts";
export { cursor } from "./cursor.ts";
export { agentEgress, PROVIDER_HOSTS } from "./egress.ts";
export { AdapterError } from "./errors.ts";
export { gemini } from "./gemini.ts";
export { generic } from "./generic.ts";
export { goose } from "./goose.ts";
export { checkAdapter, inspectAdapters, type InspectOptions } from "./inspect.ts";
export { ollama } from "./ollama.ts";
export { opencode, OPENCODE_ENDPOINT_KEY_ENV } from "./opencode.ts";
export { LineSplitter, parseOutput, StreamingParse } from "./parse.ts";
export { unenforcedNote } from "./_policy_hook.ts";
export { mapPathLookup, type PathLookup, systemPathLookup } from "./path_lookup.ts";
export { qwen } from "./qwen.ts";
export {
  ADAPTER_NAMES,
  ADAPTERS,
  AUTO_PREFERENCE,
  checkAllAvailability,
  checkAvailability,
  cliForRole,
  endpointForRole,
  getAdapter,
  isAdapterName,
  resolveCli,
  type ResolvedCli,
} from "./registry.ts";
export {
  AGENT_SERVER_ENV,
  scripted,
  SCRIPTED_RECORD_ENV,
  type ScriptedRuntime,
  scriptedRuntime,
} from "./scripted.ts";
export {
  type Adapter,
  type AdapterSettings,
  type AgentResult,
  type EndpointProfile,
  type Invocation,
  type InvocationInput,
  type ProgressEvent,
  type PromptMedia,
  type ToolPolicyHook,
} from "./types.ts";
export { writeInvocationFiles } from "./write_files.ts";
