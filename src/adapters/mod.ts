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
  capabilitiesOf,
  CAPABILITY_TABLE,
  type DocumentMime,
  type ImageMime,
  TEST_MULTIMODAL_SETTING,
} from "./capabilities.ts";
export { claude } from "./claude.ts";
export { codex, CODEX_ENDPOINT_KEY_ENV, CODEX_PROVIDER_ID, codexConfigToml } from "./codex.ts";
export {
  checkFlags,
  type FlagCheck,
  helpMentionsFlag,
  type ProbeOptions,
  type ProbeRunner,
  probeVersion,
  systemProbeRunner,
  type VersionResult,
} from "./contract.ts";
export { cursor } from "./cursor.ts";
export { agentEgress, type EgressInput, PROVIDER_HOSTS } from "./egress.ts";
export { AdapterError } from "./errors.ts";
export { gemini, geminiSettings } from "./gemini.ts";
export { generic, GENERIC_ENDPOINT_ENV, genericAdapter } from "./generic.ts";
export { goose } from "./goose.ts";
export {
  type AdapterCheck,
  type AdapterReport,
  checkAdapter,
  inspectAdapters,
  type InspectOptions,
} from "./inspect.ts";
export { defaultOllamaEndpoint, ollama } from "./ollama.ts";
export {
  opencode,
  OPENCODE_ENDPOINT_KEY_ENV,
  OPENCODE_POLICY_PLUGIN,
  OPENCODE_PROVIDER_ID,
  opencodeConfig,
} from "./opencode.ts";
export { LineSplitter, parseOutput, StreamingParse } from "./parse.ts";
export { cliHookTimeoutS, hookShellLine, unenforcedNote } from "./_policy_hook.ts";
export { mapPathLookup, type PathLookup, systemPathLookup } from "./path_lookup.ts";
export { qwen, QWEN_POLICY_SETTINGS, qwenSettings } from "./qwen.ts";
export {
  ADAPTER_NAMES,
  ADAPTERS,
  type AdapterSettingsMap,
  AUTO_PREFERENCE,
  type Availability,
  type AvailabilityOptions,
  checkAllAvailability,
  checkAvailability,
  cliForRole,
  endpointForRole,
  getAdapter,
  isAdapterName,
  resolveCli,
  type ResolveCliOptions,
  type ResolvedCli,
  type RoleConfig,
} from "./registry.ts";
export {
  AGENT_SERVER_ENV,
  scripted,
  SCRIPTED_RECORD_ENV,
  scriptedAgentPath,
  type ScriptedRuntime,
  scriptedRuntime,
} from "./scripted.ts";
export {
  type Adapter,
  type AdapterSettings,
  type AgentResult,
  type Effort,
  type EndpointApi,
  type EndpointProfile,
  type ExitInfo,
  type FlagContract,
  type Invocation,
  type InvocationInput,
  type OutputParser,
  type PlannedFile,
  type PlannedWorktreeFile,
  type ProgressEvent,
  type PromptChannel,
  type PromptMedia,
  type Tier,
  TIERS,
  type TokenUsage,
  type ToolPolicyHook,
  type VersionProbe,
} from "./types.ts";
export { writeInvocationFiles } from "./write_files.ts";
