// How prompts travel: UTF-8 bytes, the argv size rule, protocol text for CLIs without a flag.
import { type InvocationInput } from "./types.ts";

/**
 * Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); prompts above this size go
 * through stdin even for CLIs that normally take them in argv.
 */
export const ARGV_PROMPT_LIMIT = 96 * 1024;

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Prompt with the protocol text in front, for CLIs without a system-prompt flag. */
export function promptWithSystem(input: InvocationInput): string {
  return input.system_prompt ? `${input.system_prompt}\n\n${input.prompt}` : input.prompt;
}

/** True when a prompt is too large for one argv element. */
export function tooLongForArgv(prompt: string): boolean {
  return utf8(prompt).length > ARGV_PROMPT_LIMIT;
}

/**
 * Text given in argv when a long prompt goes through stdin to a CLI that appends its argv
 * prompt to stdin input (gemini, qwen, opencode): the model sees stdin, a blank line, this.
 */
export const STDIN_PROMPT_TAIL = "Follow the instructions given above.";

/**
 * The argv prompt and stdin for CLIs that take the prompt in argv and append it to stdin.
 * A prompt too long for argv, or one starting with `-` (the CLI's option parser would read
 * it as a flag), goes through stdin.
 */
export function argvOrStdin(
  prompt: string,
): { arg: string; stdin?: Uint8Array; channel: "argv" | "stdin" } {
  if (!tooLongForArgv(prompt) && !prompt.startsWith("-")) return { arg: prompt, channel: "argv" };
  return { arg: STDIN_PROMPT_TAIL, stdin: utf8(prompt), channel: "stdin" };
}
