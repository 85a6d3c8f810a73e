// The command table: every group and command of `bernstein`. Group files import only types
// statically, so building this table loads no YAML, zod or crypto.
import { ADAPTERS_COMMANDS } from "./adapters.ts";
import { AGENTS_COMMANDS } from "./agents.ts";
import { ATTACHMENTS_COMMANDS } from "./attachments.ts";
import { AUDIT_COMMANDS } from "./audit.ts";
import { CAS_COMMANDS } from "./cas.ts";
import { COMPLIANCE_COMMANDS } from "./compliance.ts";
import { CONFIG_COMMANDS } from "./config.ts";
import { CONN_COMMANDS } from "./conn.ts";
import { CTX_COMMANDS } from "./ctx.ts";
import { DASHBOARD_COMMANDS } from "./dashboard.ts";
import { DEMO_COMMANDS } from "./demo.ts";
import { DOCTOR_COMMANDS } from "./doctor.ts";
import { INIT_COMMANDS } from "./init.ts";
import { PLAN_COMMANDS } from "./plan.ts";
import { POLICY_COMMANDS } from "./policy.ts";
import { RUN_COMMANDS } from "./run.ts";
import { RUNS_COMMANDS } from "./runs.ts";
import { LINEAGE_COMMANDS } from "./lineage.ts";
import { LOGS_COMMANDS } from "./logs.ts";
import { NOTIFY_COMMANDS } from "./notify.ts";
import type { CommandSpec, GroupSpec } from "./spec.ts";
import { STORAGE_COMMANDS } from "./storage.ts";
import { TASK_COMMANDS } from "./task.ts";
import { VAR_COMMANDS } from "./var.ts";
import { WORKERS_COMMANDS } from "./workers.ts";

/** Command groups, in help order. */
export const GROUPS: readonly GroupSpec[] = [
  { name: "config", summary: "Read, change and validate configuration." },
  {
    name: "adapters",
    summary: "Agent CLIs: what is installed, and whether their flags still hold.",
  },
  { name: "agents", summary: "Agent definitions from the configured catalogs." },
  { name: "plan", summary: "Check plan files and the backlog before a run." },
  { name: "runs", summary: "List past runs; verify their scorecards; write their reports." },
  { name: "attachments", summary: "Export a run's attachments for an offline audit." },
  { name: "cas", summary: "Check and repair the content-addressed blob store." },
  { name: "task", summary: "Report on and inspect tasks through the task server." },
  { name: "storage", summary: "The shared task store's PostgreSQL schema." },
  { name: "workers", summary: "Workers on other hosts: tokens, list, cordon, drain." },
  {
    name: "policy",
    summary: "Tool-call policy: check calls against the rules, list them, answer agent hooks.",
  },
  { name: "approvals", summary: "Answer the tool calls a running run parked for approval." },
  {
    name: "conn",
    summary: "Connection documents: signed secret references, resolved and audited on the chain.",
  },
  {
    name: "ctx",
    summary: "Operating contexts: named configuration layers, activated atomically.",
  },
  {
    name: "var",
    summary: "Fleet variables: chained writes, pinned reads, history from the chain.",
  },
  { name: "notify", summary: "Notification channels: send a test and see what happened." },
  { name: "audit", summary: "Verify and read the HMAC-chained audit log." },
  { name: "lineage", summary: "Verify, inspect and merge the signed lineage log." },
  {
    name: "compliance",
    summary: "Build the signed EU AI Act Article 12 pack for offline audit.",
  },
];

/** Every command, in help order. */
export const COMMANDS: readonly CommandSpec[] = [
  ...INIT_COMMANDS,
  ...RUN_COMMANDS,
  ...LOGS_COMMANDS,
  ...DASHBOARD_COMMANDS,
  ...DEMO_COMMANDS,
  ...DOCTOR_COMMANDS,
  ...CONFIG_COMMANDS,
  ...ADAPTERS_COMMANDS,
  ...AGENTS_COMMANDS,
  ...PLAN_COMMANDS,
  ...RUNS_COMMANDS,
  ...ATTACHMENTS_COMMANDS,
  ...CAS_COMMANDS,
  ...TASK_COMMANDS,
  ...STORAGE_COMMANDS,
  ...WORKERS_COMMANDS,
  ...POLICY_COMMANDS,
  ...VAR_COMMANDS,
  ...NOTIFY_COMMANDS,
  ...CTX_COMMANDS,
  ...CONN_COMMANDS,
  ...AUDIT_COMMANDS,
  ...LINEAGE_COMMANDS,
  ...COMPLIANCE_COMMANDS,
];
