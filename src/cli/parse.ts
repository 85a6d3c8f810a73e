// Parses a command's arguments and flags against its spec, with a usage error naming the flag
// or argument at fault.

import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestMatch, UsageError } from "../errors/mod.ts";
import { flagsOf } from "./global_flags.ts";
import type { CommandSpec, FlagSpec, ParsedInvocation } from "./spec.ts";

interface NodeParseError extends Error {
  code?: string;
}

function unknownFlagError(
  error: NodeParseError,
  flags: readonly FlagSpec[],
  label: string,
): UsageError {
  const match = /'(-{1,2}[^'\s]+)'/.exec(error.message);
  const given = match?.[1] ?? "";
  const bare = given.replace(/^-+/, "").split("=")[0];
  const near = closestMatch(bare, flags.map((f) => f.name));
  return new UsageError("cli.unknown_flag", `unknown flag '${given}' for '${label}'`, {
    hint: near ? `did you mean '--${near}'?` : `run '${label} --help'`,
  });
}

/**
 * Parses the flags and positionals of a command with `node:util` `parseArgs`, converts number
 * flags, applies defaults and checks required and surplus positionals.
 */
export function parseInvocation(spec: CommandSpec, rest: readonly string[]): ParsedInvocation {
  const flags = flagsOf(spec);
  const label = ["bernstein", ...spec.path].join(" ");
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const f of flags) {
    options[f.name] = {
      type: f.type === "boolean" ? "boolean" : "string",
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...rest], options, strict: true, allowPositionals: true });
  } catch (error) {
    const e = error as NodeParseError;
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw unknownFlagError(e, flags, label);
    throw new UsageError("cli.bad_flag", `${label}: ${e.message.split("\n")[0]}`);
  }
  const values: ParsedInvocation["flags"] = {};
  for (const f of flags) {
    const raw = parsed.values[f.name];
    if (raw === undefined) {
      if (f.default !== undefined) values[f.name] = f.default;
      continue;
    }
    if (f.type !== "number") {
      values[f.name] = raw as string | boolean | string[];
      continue;
    }
    const toNumber = (text: string): number => {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) {
        throw new UsageError("cli.bad_flag", `--${f.name} expects a number, got '${text}'`);
      }
      return n;
    };
    values[f.name] = Array.isArray(raw) ? raw.map(String).map(toNumber) : toNumber(String(raw));
  }
  if (values.help === true) return { args: {}, flags: values };
  const args: ParsedInvocation["args"] = {};
  const positionals = [...parsed.positionals];
  for (const a of spec.args ?? []) {
    if (a.variadic) {
      args[a.name] = positionals.splice(0);
      if (a.required && (args[a.name] as string[]).length === 0) {
        throw new UsageError("cli.missing_argument", `${label}: missing <${a.name}>`);
      }
      continue;
    }
    const v = positionals.shift();
    if (v === undefined && a.required) {
      throw new UsageError("cli.missing_argument", `${label}: missing <${a.name}>`, {
        hint: `run '${label} --help'`,
      });
    }
    args[a.name] = v;
  }
  if (positionals.length > 0) {
    throw new UsageError("cli.extra_argument", `${label}: unexpected argument '${positionals[0]}'`);
  }
  return { args, flags: values };
}
