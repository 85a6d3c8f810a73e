import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestMatch, UsageError } from "../errors/mod.ts";
import { GLOBAL_FLAGS, JSON_FLAG } from "./global_flags.ts";
import type { CommandSpec, FlagSpec, GroupSpec, ParsedInvocation } from "./spec.ts";

/** Every flag a command accepts: its own, `--json` when it has a JSON mode, and the globals. */
export function flagsOf(spec: CommandSpec): FlagSpec[] {
  return [...(spec.flags ?? []), ...(spec.json ? [JSON_FLAG] : []), ...GLOBAL_FLAGS];
}

/** Result of resolving argv against the table. */
export type Resolution =
  | { kind: "command"; spec: CommandSpec; rest: string[] }
  | { kind: "group"; group: GroupSpec; rest: string[] }
  | { kind: "root"; rest: string[] };

/**
 * Finds the command named by the leading words of argv. An unknown word is a usage error
 * that suggests the closest command of that level.
 */
export function resolveCommand(
  argv: readonly string[],
  commands: readonly CommandSpec[],
  groups: readonly GroupSpec[],
): Resolution {
  const first = argv[0];
  if (first === undefined || first.startsWith("-")) return { kind: "root", rest: [...argv] };
  const top = commands.filter((c) => c.path.length === 1 && c.path[0] === first);
  if (top.length === 1) return { kind: "command", spec: top[0], rest: argv.slice(1) };
  const group = groups.find((g) => g.name === first);
  if (group === undefined) {
    const known = [
      ...groups.map((g) => g.name),
      ...commands.filter((c) => c.path.length === 1 && !c.hidden).map((c) => c.path[0]),
    ];
    const near = closestMatch(first, known);
    throw new UsageError("cli.unknown_command", `unknown command '${first}'`, {
      hint: near ? `did you mean '${near}'?` : "run 'bernstein --help' for the list",
    });
  }
  const verb = argv[1];
  if (verb === undefined || verb.startsWith("-")) {
    return { kind: "group", group, rest: argv.slice(1) };
  }
  const spec = commands.find((c) =>
    c.path.length === 2 && c.path[0] === first && c.path[1] === verb
  );
  if (spec === undefined) {
    const verbs = commands.filter((c) => c.path[0] === first && c.path.length === 2 && !c.hidden)
      .map((c) => c.path[1]);
    const near = closestMatch(verb, verbs);
    throw new UsageError("cli.unknown_command", `unknown command '${first} ${verb}'`, {
      hint: near ? `did you mean '${first} ${near}'?` : `run 'bernstein ${first} --help'`,
    });
  }
  return { kind: "command", spec, rest: argv.slice(2) };
}

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
