// `--help` text for the root, a command group and a command, and the README's command
// reference generated from the same specs.

import { MAIN_BINARY, VERSION } from "../meta/mod.ts";
import { alignColumns } from "./output.ts";
import { flagsOf } from "./global_flags.ts";
import type { CommandSpec, FlagSpec, GroupSpec } from "./spec.ts";

function usageLine(spec: CommandSpec): string {
  const parts = [MAIN_BINARY, ...spec.path];
  for (const a of spec.args ?? []) {
    const name = a.variadic ? `${a.name}...` : a.name;
    parts.push(a.required ? `<${name}>` : `[${name}]`);
  }
  if ((spec.flags ?? []).length > 0 || spec.json) parts.push("[flags]");
  return parts.join(" ");
}

function flagLabel(f: FlagSpec): string {
  const value = f.type === "boolean"
    ? ""
    : ` ${f.valueName ?? (f.type === "number" ? "N" : "VALUE")}`;
  return (f.short ? `-${f.short}, ` : "    ") + `--${f.name}${value}`;
}

function flagHelp(f: FlagSpec): string {
  const extra = [
    f.multiple ? "repeatable" : "",
    f.default !== undefined && f.default !== false ? `default: ${f.default}` : "",
  ].filter(Boolean);
  return extra.length > 0 ? `${f.help} (${extra.join("; ")})` : f.help;
}

/** `bernstein --help`. */
export function rootHelp(commands: readonly CommandSpec[], groups: readonly GroupSpec[]): string {
  const top = commands.filter((c) => c.path.length === 1 && !c.hidden);
  const lines = [
    `${MAIN_BINARY} ${VERSION} — a deterministic orchestrator for CLI coding agents`,
    "",
    "Usage:",
    `  ${MAIN_BINARY} <command> [args] [flags]`,
    `  ${MAIN_BINARY} <group> <command> [args] [flags]`,
    `  ${MAIN_BINARY} -g "GOAL"            short for: ${MAIN_BINARY} run --goal "GOAL"`,
    "",
    "Commands:",
    ...alignColumns(top.map((c) => [`  ${c.path[0]}`, c.summary])),
    "",
    "Groups:",
    ...alignColumns(groups.map((g) => [`  ${g.name}`, g.summary])),
    "",
    "Flags:",
    "  -h, --help     Show help (on every level).",
    "  -V, --version  Print the version.",
    "      --debug    Print stack traces for unexpected errors.",
    "",
    "Exit codes: 0 success · 1 the check or operation failed · 2 usage error · 3 a required key is missing.",
    `Run '${MAIN_BINARY} <group> --help' or '${MAIN_BINARY} <command> --help' for details.`,
  ];
  return lines.join("\n");
}

/** `bernstein <group> --help`. */
export function groupHelp(group: GroupSpec, commands: readonly CommandSpec[]): string {
  const verbs = commands.filter((c) => c.path[0] === group.name && c.path.length >= 2 && !c.hidden);
  return [
    `${MAIN_BINARY} ${group.name} — ${group.summary}`,
    "",
    "Usage:",
    `  ${MAIN_BINARY} ${group.name} <command> [args] [flags]`,
    "",
    "Commands:",
    ...alignColumns(verbs.map((c) => [`  ${c.path.slice(1).join(" ")}`, c.summary])),
    "",
    `Run '${MAIN_BINARY} ${group.name} <command> --help' for details.`,
  ].join("\n");
}

/** `bernstein <command> --help`. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [
    `${MAIN_BINARY} ${spec.path.join(" ")} — ${spec.summary}`,
    "",
    "Usage:",
    `  ${usageLine(spec)}`,
  ];
  if (spec.description) lines.push("", ...spec.description.trimEnd().split("\n"));
  if ((spec.args ?? []).length > 0) {
    lines.push(
      "",
      "Arguments:",
      ...alignColumns((spec.args ?? []).map((a) => [`  ${a.name}`, a.help])),
    );
  }
  lines.push(
    "",
    "Flags:",
    ...alignColumns(flagsOf(spec).map((f) => [`  ${flagLabel(f)}`, flagHelp(f)])),
  );
  if ((spec.examples ?? []).length > 0) {
    lines.push("", "Examples:", ...(spec.examples ?? []).map((e) => `  ${e}`));
  }
  return lines.join("\n");
}

/** The README's command reference, generated from the table (a test keeps them in sync). */
export function markdownReference(
  commands: readonly CommandSpec[],
  groups: readonly GroupSpec[],
): string {
  const out: string[] = [];
  const section = (spec: CommandSpec) => {
    out.push(`### \`${usageLine(spec)}\``, "", spec.summary, "");
    const flags = [
      ...(spec.flags ?? []),
      ...(spec.json
        ? [{ name: "json", type: "boolean", help: "One JSON document on stdout." } as FlagSpec]
        : []),
    ];
    if ((spec.args ?? []).length + flags.length > 0) {
      const rows: [string, string][] = [
        ...(spec.args ?? []).map((a): [string, string] => [`\`${a.name}\``, a.help]),
        ...flags.map((f): [string, string] => [
          `\`${flagLabel(f).trim()}\``,
          flagHelp(f).replace(/\|/g, "\\|"),
        ]),
      ];
      out.push(...markdownTable(["argument / flag", "meaning"], rows), "");
    }
  };
  for (const c of commands.filter((c) => c.path.length === 1 && !c.hidden)) section(c);
  for (const g of groups) {
    out.push(`### ${MAIN_BINARY} ${g.name}`, "", g.summary, "");
    for (
      const c of commands.filter((c) => c.path[0] === g.name && c.path.length >= 2 && !c.hidden)
    ) section(c);
  }
  return out.join("\n").trimEnd() + "\n";
}

/** A Markdown table padded the way `deno fmt` writes it, so formatting the README is a no-op. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}
