// The prompt an agent is given: its role template, the task, recovery facts when it was routed
// on a failure, and the protocol text that says how to report back.

import { RUN_CONFIG_FILES, STATE_DIR } from "../config/mod.ts";

/** What the prompt is built from. */
export interface PromptInput {
  /** Task id. */
  taskId: string;
  /** One line. */
  title: string;
  /** What to do. */
  description: string;
  /** Role (picks the template). */
  role: string;
  /** Files the task expects to change. */
  ownedFiles: readonly string[];
  /** Completion signals, rendered as text for the agent. */
  signals: readonly string[];
  /** The run's goal, when there is one. */
  goal?: string;
  /** Why the previous attempt failed (retries carry it forward). */
  failureContext?: string;
  /** Attempt number, 1-based. */
  attempt: number;
  /**
   * How often to report progress on long work (`tuning.agent.heartbeat_interval_s`) and what it
   * earns at the deadline (`deadline_extension_s`, up to `deadline_max_s`).
   */
  progress?: { everyS: number; extensionS: number; maxS: number };
  /** A catalog agent's preamble for the role (replaces the built-in role template). */
  preamble?: string;
  /** `cells:` of the configuration: how a manager is asked to split the work. */
  cells?: number | readonly { name: string; roles?: readonly string[] }[];
  /** Why a recovery step runs: the failure it recovers from and its receipt. */
  recovery?: RecoveryPromptFacts;
}

/** What a recovery step's prompt says about the failure it was routed on. */
export interface RecoveryPromptFacts {
  /** The failing task. */
  sourceTask: string;
  /** How it ended (`failed` …). */
  sourceStatus: string;
  /** The condition that routed here. */
  condition: string;
  /** The spine entry hash of the failure receipt (`sha256:…`). */
  receiptHash: string;
  /** The receipt file, relative to the project root. */
  receipt: string;
  /** Why it failed. */
  result: string;
  /** The output of its failed check. */
  output: string;
}

/** The recovery facts stamped on a routed task's metadata, if any. */
export function recoveryFactsOf(
  metadata: { [key: string]: unknown },
): RecoveryPromptFacts | undefined {
  const hash = metadata.recovery_receipt_hash;
  const r = metadata.recovery as Record<string, unknown> | undefined;
  if (typeof hash !== "string" || r === null || typeof r !== "object") return undefined;
  const text = (k: string) => (typeof r[k] === "string" ? r[k] as string : "");
  return {
    sourceTask: text("source_task"),
    sourceStatus: text("source_status"),
    condition: text("condition"),
    receiptHash: hash,
    receipt: text("receipt"),
    result: text("result"),
    output: text("output"),
  };
}

function recoverySection(r: RecoveryPromptFacts): string[] {
  const out = [
    "",
    `## Why this task runs: ${r.sourceTask} ended ${r.sourceStatus}`,
    `This is a recovery step: it was routed to because \`${r.condition}\` held for ${r.sourceTask}.`,
    `Failure receipt: ${r.receiptHash} (${r.receipt}; it holds the gate report and the run's events about ${r.sourceTask}).`,
  ];
  if (r.result.trim() !== "") out.push("", "What failed:", ...quote(r.result));
  if (r.output.trim() !== "" && r.output.trim() !== r.result.trim()) {
    out.push("", "Output of the failed check (tail):", ...quote(r.output));
  }
  return out;
}

function quote(text: string): string[] {
  return text.trimEnd().split("\n").map((l) => `> ${l}`);
}

const ROLE_TEMPLATES: Readonly<Record<string, string>> = {
  manager: "You are the manager of a team of coding agents. Break the goal below into small, " +
    "independent tasks that other agents can do in parallel, each with a clear title, a precise " +
    "description and the files it will change. Do not implement anything yourself.",
  backend: "You are a careful backend engineer. Make the smallest correct change, with tests.",
  frontend: "You are a careful frontend engineer. Make the smallest correct change, with tests.",
  qa: "You are a QA engineer. Write focused tests for the behaviour described, and make them pass.",
  docs: "You are a technical writer. Write clear, accurate documentation for the change described.",
  reviewer: "You are a code reviewer. Check the work described and record concrete findings.",
  security: "You are a security engineer. Look for and fix the weaknesses described.",
};

const DEFAULT_TEMPLATE = "You are a careful software engineer. Make the smallest correct change.";

/** The role template for a role (a generic one for roles without their own). */
export function roleTemplate(role: string): string {
  return ROLE_TEMPLATES[role] ?? DEFAULT_TEMPLATE;
}

/**
 * The protocol text: how an agent reports back. It goes through every spawn path as part of
 * the prompt (or the system prompt where the CLI has one), so no adapter can lose it.
 */
export function protocolText(
  taskId: string,
  role: string,
  progress?: PromptInput["progress"],
): string {
  const lines = [
    "## How to report",
    `Your task id is ${taskId}. Work only inside the current directory (a git worktree made for you).`,
    `Do not edit ${
      RUN_CONFIG_FILES.join(", ")
    } or anything under ${STATE_DIR} — a gate refuses such changes.`,
    "You do not need to commit: bernstein commits and merges your work after checks pass.",
    "When you are done, run:",
    `  bernstein task complete ${taskId} --summary "<one line: what you did>"`,
    "If you cannot do it, run:",
    `  bernstein task fail ${taskId} --reason "<why>"`,
    progress === undefined
      ? "To report progress on long work:"
      : `On long work, report progress at least every ${progress.everyS}s (at your deadline, ` +
        `progress since the last check earns ${progress.extensionS}s more, up to ` +
        `${progress.maxS}s in all):`,
    `  bernstein task progress ${taskId} --message "<what is done so far>"`,
  ];
  if (role === "manager") {
    lines.push(
      "Create each sub-task with:",
      '  bernstein task create --title "<title>" --description "<what to do>" --role <role> --file <path>',
      "Use --depends-on <task id> when a sub-task needs another one merged first. " +
        "Complete your own task once every sub-task is created.",
    );
  }
  return lines.join("\n");
}

/**
 * What a manager is told about `cells:`: the number form asks for that many parallel work cells
 * (groups of sub-tasks that share no files and do not depend on each other); the list form
 * names the cells and their roles, so each sub-task goes to a role of the right cell.
 */
export function cellsText(cells: NonNullable<PromptInput["cells"]>): string {
  if (typeof cells === "number") {
    return `## Work cells
Split the work into ${cells} parallel work cells: ${cells} groups of ` +
      "sub-tasks that share no files and do not depend on each other (sub-tasks inside one cell " +
      "may depend on each other), so the cells can run side by side.";
  }
  const lines = cells.map((c) =>
    `- ${c.name}: ${c.roles && c.roles.length > 0 ? c.roles.join(", ") : "(no roles)"}`
  );
  return [
    "## Work cells",
    "The team works in these cells (cell: its roles); give each sub-task " +
    "a role of the cell that should do it:",
    ...lines,
  ].join("\n");
}

/** The task part of the prompt (role template, goal, task, files, signals, failure context). */
export function buildPromptBody(input: PromptInput): string {
  const parts = [input.preamble ?? roleTemplate(input.role), ""];
  // The goal is quoted context; a manager's own description already is the goal.
  if (input.goal && input.goal.trim() !== input.description.trim()) {
    parts.push("## Goal of the run", ...input.goal.trimEnd().split("\n").map((l) => `> ${l}`), "");
  }
  parts.push(`## Your task: ${input.title}`);
  if (input.description.trim() !== "") parts.push(input.description.trimEnd());
  if (input.ownedFiles.length > 0) {
    parts.push(
      "",
      "Files this task is expected to change:",
      ...input.ownedFiles.map((f) => `- ${f}`),
    );
  }
  if (input.signals.length > 0) {
    parts.push(
      "",
      "The work counts as complete when:",
      ...input.signals.map((s) => `- ${s}`),
    );
  }
  if (input.recovery) parts.push(...recoverySection(input.recovery));
  if (input.failureContext) {
    parts.push(
      "",
      `## Previous attempt failed (this is attempt ${input.attempt})`,
      input.failureContext.trimEnd(),
    );
  }
  if (input.role === "manager" && input.cells !== undefined) parts.push("", cellsText(input.cells));
  parts.push("", protocolText(input.taskId, input.role, input.progress));
  return parts.join("\n") + "\n";
}
