// How an adapter wires bernstein's pre-tool hook (`bernstein policy hook`) into its CLI. The
// CLIs run a hook command through a shell and, when it fails or times out, let the tool call
// through — so the line fails closed by itself: `timeout` (when there is one) ends a hook
// that overruns its own deadline, and any non-zero exit becomes 2, which every CLI reads as
// "block". The command is an absolute path with its arguments: nothing in it goes through
// PATH, where the agent's private bin/ could shadow it.
import type { ToolPolicyHook } from "./types.ts";

/** The answer format `bernstein policy hook --format` speaks to a CLI. */
export type HookAnswerFormat = "claude" | "gemini";

/** Seconds between the hook's own deadline and the `timeout` that kills it. */
const KILL_MARGIN_S = 10;
/** Seconds between that kill and the CLI's own hook timeout. */
const CLI_MARGIN_S = 20;

/** Single-quotes a word for sh. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}

/** The hook command as argv (no shell): the environment is passed separately. */
export function hookArgv(policy: ToolPolicyHook, format: HookAnswerFormat): string[] {
  return [...policy.command, "--format", format, "--deadline-s", String(policy.deadline_s)];
}

/** The seconds a CLI should wait for the hook before giving up on it. */
export function cliHookTimeoutS(policy: ToolPolicyHook): number {
  return policy.deadline_s + KILL_MARGIN_S + CLI_MARGIN_S;
}

/**
 * The shell line a CLI runs: `[timeout -k 2 S] env K=V… <argv> --format F || exit 2`.
 *
 * @example
 * ```ts
 * hookShellLine({ command: ["/bin/bernstein", "policy", "hook"], deadline_s: 30 }, "claude");
 * // "/bin/bernstein policy hook --format claude --deadline-s 30 || exit 2"
 * ```
 */
export function hookShellLine(policy: ToolPolicyHook, format: HookAnswerFormat): string {
  const words: string[] = [];
  if (policy.timeout_command !== undefined) {
    words.push(policy.timeout_command, "-k", "2", String(policy.deadline_s + KILL_MARGIN_S));
  }
  const env = Object.entries(policy.env ?? {});
  if (env.length > 0) words.push("env", ...env.map(([k, v]) => `${k}=${v}`));
  words.push(...hookArgv(policy, format));
  return `${words.map(shellQuote).join(" ")} || exit 2`;
}

/**
 * A Claude-style hook group matching every tool (claude, codex, qwen, the scripted agent).
 * `name` only where the CLI's schema has it: claude silently ignores a settings object that
 * fails validation in print mode, which would leave the agent without its hook.
 */
export function preToolUseGroup(
  policy: ToolPolicyHook,
  options: { timeoutUnit: "s" | "ms"; name?: string },
): Record<string, unknown> {
  const timeout = cliHookTimeoutS(policy) * (options.timeoutUnit === "ms" ? 1000 : 1);
  const hook: Record<string, unknown> = { type: "command" };
  if (options.name !== undefined) hook.name = options.name;
  hook.command = hookShellLine(policy, "claude");
  hook.timeout = timeout;
  return { matcher: "*", hooks: [hook] };
}

/** The note every adapter without a hook leaves on its invocation. */
export function unenforcedNote(adapter: string): string {
  return `runs without tool-call policy: ${adapter} has no pre-tool hook or approval callback ` +
    "bernstein can wire (docs/ADAPTERS.md)";
}
