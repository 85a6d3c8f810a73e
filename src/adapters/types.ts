// What an adapter is: its settings, endpoint profiles, capabilities and the invocation it builds
// for one agent.

import type { EnvReader } from "../io/mod.ts";
import type { Capabilities } from "./capabilities.ts";

/** Model tiers a role policy may name instead of a concrete model. */
export const TIERS = ["haiku", "sonnet", "opus"] as const;

/** One of {@linkcode TIERS}. */
export type Tier = typeof TIERS[number];

/** Reasoning effort names (the config's `EFFORTS`). */
export type Effort = "low" | "medium" | "high" | "max";

/** How the prompt reaches the CLI. */
export type PromptChannel = "argv" | "stdin" | "file";

/** Per-adapter settings from `adapters.<name>` in the configuration (all optional). */
export interface AdapterSettings {
  /** Executable name or path instead of the adapter's own. */
  binary?: string;
  /** Arguments appended to every invocation. */
  extra_args?: string[];
  /** More environment variable names passed through (exact names). */
  env?: string[];
  /** claude only: what to do when running as root (see the claude adapter). */
  root_permission?: "accept_edits" | "is_sandbox";
  /** generic only: the command (executable first). */
  command?: string[];
  /** generic only: how the prompt is passed (default stdin). */
  prompt?: PromptChannel;
  /** generic only: flag before the prompt (argv) or before the prompt file's path (file). */
  prompt_flag?: string;
  /** generic only: flag before the model. */
  model_flag?: string;
  /** generic only: flag before the turn limit. */
  max_turns_flag?: string;
  /** generic only: tier → model. */
  models?: { haiku?: string; sonnet?: string; opus?: string };
  /** generic only: version probe arguments (default `--version`). */
  version_args?: string[];
  /** generic only: arguments that print the help checked by the flag contract. */
  help_args?: string[];
  /** generic only: flags the command relies on (its flag contract). */
  flags?: string[];
}

/** The wire API a `local_endpoints` profile speaks. */
export type EndpointApi = "openai-chat" | "openai-responses" | "anthropic" | "gemini";

/** A `local_endpoints` profile, resolved for one spawn (secrets are read later, by name). */
export interface EndpointProfile {
  /** Profile name (the key under `local_endpoints`). */
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:11434/v1`. */
  base_url: string;
  /** API it speaks; undefined means the adapter's native API. */
  api?: EndpointApi;
  /** Name of the environment variable holding the API key (read through the env reader). */
  api_key_env?: string;
  /** Model served there; used when the task names no concrete model. */
  model?: string;
  /** Free-form engine label (recorded in certification receipts). */
  engine?: string;
  /**
   * Request timeout in seconds: given to the CLI where it has a setting
   * ({@linkcode ENDPOINT_TIMEOUT_NATIVE}), else enforced by the run's watchdog.
   */
  timeout?: number;
}

/**
 * Bernstein's pre-tool hook for one spawn: how to run `bernstein policy hook` for this agent
 * (absolute executable; server URL, token file and task already in the arguments).
 */
export interface ToolPolicyHook {
  /** argv of `bernstein policy hook …` (the adapter appends `--format` and `--deadline-s`). */
  command: readonly string[];
  /** Variables the command needs (a source run's DENO_DIR), set on its line. */
  env?: Readonly<Record<string, string>>;
  /** The hook's own deadline in seconds (it answers deny when it passes). */
  deadline_s: number;
  /** A `timeout` executable that kills a hook overrunning its deadline, when there is one. */
  timeout_command?: string;
}

/**
 * Attachment bytes the CLI receives through its own channel instead of as prompt text
 * (ATTACHMENTS.md "Delivery"): as content blocks of the user message (`content-block`), or as a
 * copy in the worktree that the prompt names with `@path` (`file-reference`).
 */
export interface PromptMedia {
  /** MIME type (`image/png`, `application/pdf`). */
  mime: string;
  /** Hex SHA-256 of `bytes` (what was attested). */
  sha256: string;
  /** The exact attested bytes. */
  bytes: Uint8Array;
  /** Worktree-relative path of the copy the prompt references (`file-reference` only). */
  path?: string;
}

/** Everything an adapter needs to build one invocation. Pure data plus an env reader. */
export interface InvocationInput {
  /** The full prompt (text attachments inlined, FORMATS.md §7; media referenced). */
  prompt: string;
  /** Attachment bytes for the CLI's own channel (see {@linkcode PromptMedia}). */
  media?: readonly PromptMedia[];
  /** Protocol text for the system prompt where the CLI has a flag for it; else prepended. */
  system_prompt?: string;
  /** A tier name or a concrete model; undefined leaves the CLI's default. */
  model?: string;
  /** Reasoning effort. */
  effort?: Effort;
  /** Turn limit (tuning.agent.max_turns). */
  max_turns?: number;
  /** Absolute path of the worktree the agent works in (its cwd). */
  cwd: string;
  /**
   * Absolute path of this spawn's private HOME (outside the worktree). Config dirs
   * (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `~/.gemini`, …) and prompt files live under it.
   */
  home: string;
  /** The endpoint profile of `role_model_policy.<role>.endpoint`, resolved. */
  endpoint?: EndpointProfile;
  /** Where the values of the allowlisted variables are read. */
  env: EnvReader;
  /** Extra variables set by the orchestrator (server URL, agent token, task id, …). */
  extra_env?: Readonly<Record<string, string>>;
  /** The orchestrator runs as uid 0 (claude needs to know). */
  is_root?: boolean;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettings;
  /** Absolute path of the executable when the caller resolved it on PATH. */
  executable?: string;
  /**
   * Bernstein's pre-tool hook, wired into the CLI where it has one (see each adapter's
   * `policy_hook`); adapters without one add a note that the agent runs without it.
   */
  tool_policy?: ToolPolicyHook;
}

/** A file the invocation needs before the spawn, relative to the spawn's HOME. */
export interface PlannedFile {
  /** Path relative to `InvocationInput.home` (checked: no `..`, not absolute). */
  path: string;
  /** Content. */
  content: string;
  /** File mode (0o600 for anything that may carry a secret or the prompt). */
  mode: number;
}

/** A file the invocation needs in the worktree before the spawn (an attachment's copy). */
export interface PlannedWorktreeFile {
  /** Path relative to the worktree (checked: no `..`, not absolute, no symlink escape). */
  path: string;
  /** Bytes. */
  bytes: Uint8Array;
}

/** What to run: the result of an adapter's pure `build`. */
export interface Invocation {
  /** Executable and arguments (never a shell string). */
  argv: string[];
  /** The child's complete environment (allowlist + orchestrator extras + adapter settings). */
  env: Record<string, string>;
  /** Bytes for stdin (then closed); undefined means stdin is /dev/null. */
  stdin?: Uint8Array;
  /** Files to write under HOME before the spawn. */
  files: PlannedFile[];
  /** Files to write into the worktree before the spawn (attachment copies `@path` names). */
  worktree_files?: PlannedWorktreeFile[];
  /** Working directory (the worktree). */
  cwd: string;
  /** How the prompt was passed (after size rules). */
  prompt_channel: PromptChannel;
  /** Absolute path of a file the CLI writes its final message to, when it has one. */
  last_message_file?: string;
  /** Things the caller should log: ignored options, the root-permission choice, … */
  notes: string[];
}

/** One progress event parsed from the agent's stdout. */
export interface ProgressEvent {
  /** started · message (assistant text) · tool_use · tool_result · turn · usage · error · raw */
  kind: "started" | "message" | "tool_use" | "tool_result" | "turn" | "usage" | "error" | "raw";
  /** Human text (message, error, raw line), trimmed to a reasonable length by the parser. */
  text?: string;
  /** Tool name for tool_use/tool_result. */
  tool?: string;
  /** The CLI's session/thread id when it announces one. */
  session_id?: string;
  /** Model, when announced. */
  model?: string;
  /**
   * The CLI says it cannot go on but keeps running (codex waiting for an unreachable model
   * server): the caller stops it now instead of waiting for its deadline.
   */
  fatal?: boolean;
}

/** Token counts the CLI reported. */
export interface TokenUsage {
  /** Input tokens (including cached). */
  input: number;
  /** Output tokens. */
  output: number;
  /** Tokens read from the prompt cache, when reported. */
  cache_read?: number;
  /** Tokens written to the prompt cache, when reported. */
  cache_write?: number;
}

/** How the process ended, fed to the parser's `finish`. */
export interface ExitInfo {
  /** Exit code. */
  code: number;
  /** The deadline killed it. */
  timed_out?: boolean;
  /** Captured stderr text (used for the error when stdout says nothing). */
  stderr?: string;
}

/** The final result of one agent run, as far as its output says. */
export interface AgentResult {
  /** Exit 0, not timed out, and the CLI reported no error. The run loop decides the rest. */
  ok: boolean;
  /** Final message (or the last text seen). */
  summary: string;
  /** Turns, when the CLI reports them (else null). */
  turns: number | null;
  /** Token usage, when reported. */
  tokens: TokenUsage | null;
  /** Cost in USD, only where the CLI reports it (null = not reported, never guessed). */
  cost_usd: number | null;
  /** Error text the CLI reported, or a reason derived from the exit. */
  error: string | null;
  /**
   * The CLI's own result subtype (`success`, …), when it has one — except that every parser
   * reports `error_max_turns` when it recognises the CLI's turn-limit ending.
   */
  subtype: string | null;
  /** Session/thread id, when announced. */
  session_id: string | null;
  /** Exit code. */
  exit_code: number;
}

/** Stateful line parser for one run's stdout; `adapter.parser()` makes a fresh one. */
export interface OutputParser {
  /** Feeds one stdout line (without its newline); returns the events it carries. */
  line(text: string): ProgressEvent[];
  /** Ends the stream and returns the final result. */
  finish(exit: ExitInfo): AgentResult;
}

/** A flag the adapter relies on, checked against the installed CLI by `adapters check`. */
export interface FlagContract {
  /** The flag as typed (`--output-format`, `-p`). */
  flag: string;
  /** Arguments that print the help it must appear in (default `["--help"]`). */
  help?: readonly string[];
  /**
   * For flags the CLI accepts but leaves out of its help: arguments that use the flag (run
   * with stdin closed, expected to fail fast without network) and the text the CLI prints
   * for an unknown option. The flag counts as present when that text does not name it.
   */
  hidden?: { probe: readonly string[]; unknown_option: RegExp };
}

/** How to ask the CLI for its version. */
export interface VersionProbe {
  /** Arguments (e.g. `["--version"]`). */
  args: readonly string[];
  /** Extracts the version from stdout+stderr (first group). */
  pattern: RegExp;
}

/**
 * An agent adapter: data about one CLI plus two small pure functions, `build` (what to run)
 * and `parser` (what its output means).
 */
export interface Adapter {
  /** Registered name (`claude`, `codex`, …). */
  name: string;
  /** One line for `adapters list`. */
  summary: string;
  /** Executable resolved on PATH (overridable with `adapters.<name>.binary`). */
  binary: string;
  /** Default prompt channel. */
  prompt: PromptChannel;
  /** Tier → model (null: the CLI chooses its own model and tiers are ignored). */
  models: Readonly<Record<Tier, string>> | null;
  /** Flag that selects the model, or how (`-m`, `env GOOSE_MODEL`); null if none. */
  model_flag: string | null;
  /** Flag that sets reasoning effort; null if none. */
  effort_flag: string | null;
  /** Flag that limits turns; null if none. */
  max_turns_flag: string | null;
  /** Flag/setting that lets it edit without interactive approval. */
  approval_flag: string;
  /**
   * How bernstein's pre-tool hook reaches this CLI (docs), when it can; absent when the CLI
   * offers no pre-tool hook or approval callback, and its agents run without tool-call policy.
   */
  policy_hook?: string;
  /** Exact environment variable names passed through to the child when set. */
  env: readonly string[];
  /** Capabilities (a row of the one capability table). */
  capabilities: Capabilities;
  /** Version probe. */
  version: VersionProbe;
  /** The flags it relies on. */
  flags: readonly FlagContract[];
  /** Builds the invocation; pure (reads env only through `input.env`). */
  build(input: InvocationInput): Invocation;
  /** A fresh output parser for one run. */
  parser(): OutputParser;
}
