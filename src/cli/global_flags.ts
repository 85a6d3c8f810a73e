// Flags every command takes (`--help`, `--debug`) and the shared `--json` flag.

import type { CommandSpec, FlagSpec } from "./spec.ts";

/** Flags every command accepts. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: "help", short: "h", type: "boolean", help: "Show help for this command." },
  { name: "debug", type: "boolean", help: "Print stack traces for unexpected errors." },
];

/** The `--json` flag added to commands that have a JSON mode. */
export const JSON_FLAG: FlagSpec = {
  name: "json",
  type: "boolean",
  help: "Print one JSON document on stdout instead of text.",
};

/** Every flag a command accepts: its own, `--json` when it has a JSON mode, and the globals. */
export function flagsOf(spec: CommandSpec): FlagSpec[] {
  return [...(spec.flags ?? []), ...(spec.json ? [JSON_FLAG] : []), ...GLOBAL_FLAGS];
}
