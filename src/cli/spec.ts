// How a command is declared: its path, flags, arguments, help text and handler.

import type { EnvReader } from "../io/mod.ts";
import type { Output } from "./output.ts";

/** Kinds of flag values. Numbers are parsed and validated by the CLI layer. */
export type FlagType = "boolean" | "string" | "number";

/** One flag of a command. */
export interface FlagSpec {
  /** Long name without dashes (`operator-key`). */
  name: string;
  /** Value kind. */
  type: FlagType;
  /** One-letter alias. */
  short?: string;
  /** The flag may repeat; values are collected in order. */
  multiple?: boolean;
  /** Value used when the flag is absent (shown in help). */
  default?: string | number | boolean;
  /** Placeholder in help (`FILE`, `N`). */
  valueName?: string;
  /** One line of help. */
  help: string;
}

/** One positional argument. */
export interface ArgSpec {
  /** Name shown in help and used to read the value. */
  name: string;
  /** Must be given. */
  required?: boolean;
  /** Takes every remaining positional. */
  variadic?: boolean;
  /** One line of help. */
  help: string;
}

/** Values the CLI parsed for a command. */
export interface ParsedInvocation {
  /** Positional values by argument name. */
  args: Record<string, string | string[] | undefined>;
  /** Flag values by long name (defaults applied). */
  flags: Record<string, string | number | boolean | string[] | number[] | undefined>;
}

/** Everything a command handler may touch. */
export interface CommandContext extends ParsedInvocation {
  /** Where output goes (colour and JSON aware). */
  out: Output;
  /** Environment access (`BERNSTEIN_*` and friends). */
  env: EnvReader;
  /** Directory the command was started in. */
  cwd: string;
  /** Print stacks for unexpected errors. */
  debug: boolean;
  /** `--json` was given. */
  json: boolean;
}

/** A command handler: returns the process exit code. */
export type CommandHandler = (ctx: CommandContext) => Promise<number>;

/** One command of the table. */
export interface CommandSpec {
  /** Words that select the command: `["lineage", "gate"]`. */
  path: string[];
  /** One line, shown in lists. */
  summary: string;
  /** Longer text for `--help` (what it does, output, exit codes). */
  description?: string;
  /** Positional arguments in order. */
  args?: ArgSpec[];
  /** Flags (global ones are added automatically). */
  flags?: FlagSpec[];
  /** The command has a `--json` output mode. */
  json?: boolean;
  /** Hidden from help and the README (internal helpers such as the scripted agent). */
  hidden?: boolean;
  /** Usage examples shown in help. */
  examples?: string[];
  /** The handler. Heavy modules are imported inside it so help and --version stay fast. */
  run: CommandHandler;
}

/** A group of commands (`config`, `lineage`, …). */
export interface GroupSpec {
  /** The group's word. */
  name: string;
  /** One line, shown in the root help. */
  summary: string;
}

/** Reads a string flag. */
export function stringFlag(ctx: ParsedInvocation, name: string): string | undefined {
  const v = ctx.flags[name];
  return typeof v === "string" ? v : undefined;
}

/** Reads a repeatable string flag. */
export function stringsFlag(ctx: ParsedInvocation, name: string): string[] {
  const v = ctx.flags[name];
  if (Array.isArray(v)) return v.map(String);
  return typeof v === "string" ? [v] : [];
}

/** Reads a boolean flag. */
export function booleanFlag(ctx: ParsedInvocation, name: string): boolean {
  return ctx.flags[name] === true;
}

/** Reads a number flag. */
export function numberFlag(ctx: ParsedInvocation, name: string): number | undefined {
  const v = ctx.flags[name];
  return typeof v === "number" ? v : undefined;
}

/** Reads a positional argument. */
export function stringArg(ctx: ParsedInvocation, name: string): string | undefined {
  const v = ctx.args[name];
  return typeof v === "string" ? v : undefined;
}

/** Reads a variadic positional argument. */
export function stringsArg(ctx: ParsedInvocation, name: string): string[] {
  const v = ctx.args[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}
