// The command table: every group and command of `bernstein`. Group files import only types
// statically, so building this table loads no YAML, zod or crypto.
import { CONFIG_COMMANDS } from "./config.ts";
import { INIT_COMMANDS } from "./init.ts";
import type { CommandSpec, GroupSpec } from "./spec.ts";
import { TASK_COMMANDS } from "./task.ts";

/** Command groups, in help order. */
export const GROUPS: readonly GroupSpec[] = [
  { name: "config", summary: "Read, change and validate configuration." },
  { name: "task", summary: "Report on and inspect tasks through the task server." },
];

/** Every command, in help order. */
export const COMMANDS: readonly CommandSpec[] = [
  ...INIT_COMMANDS,
  ...CONFIG_COMMANDS,
  ...TASK_COMMANDS,
];
