// The command table: every group and command of `bernstein`. Group files import only types
// statically, so building this table loads no YAML, zod or crypto.
import { CONFIG_COMMANDS } from "./config.ts";
import { INIT_COMMANDS } from "./init.ts";
import { LINEAGE_COMMANDS } from "./lineage.ts";
import type { CommandSpec, GroupSpec } from "./spec.ts";

/** Command groups, in help order. */
export const GROUPS: readonly GroupSpec[] = [
  { name: "config", summary: "Read, change and validate configuration." },
  { name: "lineage", summary: "Verify, inspect and merge the signed lineage log." },
];

/** Every command, in help order. */
export const COMMANDS: readonly CommandSpec[] = [
  ...INIT_COMMANDS,
  ...CONFIG_COMMANDS,
  ...LINEAGE_COMMANDS,
];
