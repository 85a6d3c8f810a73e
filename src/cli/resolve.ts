// Finds the command an argv names (a command, a group, or an unknown word with suggestions).

import { closestMatch, UsageError } from "../errors/mod.ts";
import type { CommandSpec, GroupSpec } from "./spec.ts";

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
  // A verb with its own sub-commands (`lineage attest import`).
  const nested = commands.filter((c) =>
    c.path.length === 3 && c.path[0] === first && c.path[1] === verb
  );
  if (spec === undefined && nested.length > 0) {
    const sub = argv[2];
    const found = nested.find((c) => c.path[2] === sub);
    if (found !== undefined) return { kind: "command", spec: found, rest: argv.slice(3) };
    const near = sub === undefined ? undefined : closestMatch(sub, nested.map((c) => c.path[2]));
    throw new UsageError(
      "cli.unknown_command",
      sub === undefined || sub.startsWith("-")
        ? `'${first} ${verb}' needs a command: ${nested.map((c) => c.path[2]).join(", ")}`
        : `unknown command '${first} ${verb} ${sub}'`,
      {
        hint: near ? `did you mean '${first} ${verb} ${near}'?` : `run 'bernstein ${first} --help'`,
      },
    );
  }
  if (spec === undefined) {
    const verbs = commands.filter((c) => c.path[0] === first && c.path.length >= 2 && !c.hidden)
      .map((c) => c.path[1]);
    const near = closestMatch(verb, verbs);
    throw new UsageError("cli.unknown_command", `unknown command '${first} ${verb}'`, {
      hint: near ? `did you mean '${first} ${near}'?` : `run 'bernstein ${first} --help'`,
    });
  }
  return { kind: "command", spec, rest: argv.slice(2) };
}
