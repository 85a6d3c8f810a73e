// The task record and the schemas that guard it at every boundary (HTTP bodies, the task log,
// plan loading). The core works on the parsed types only.
import { z } from "zod";
import { EFFORTS } from "../config/mod.ts";
import { checkRelativePath } from "../io/mod.ts";
import {
  type AttachmentDeclaration,
  checkDeclarations,
  type CompletionSignal,
  MAX_ATTACHMENTS_PER_TASK,
} from "../plan/mod.ts";
import { TaskAttachmentInvalidError, TaskValidationError } from "./errors.ts";
import { TASK_STATUSES, type TaskStatus } from "./status.ts";

/** Task scopes, smallest first (they pick the agent's wall-clock deadline). */
export const TASK_SCOPES = ["small", "medium", "large", "xl"] as const;

/** A task's scope. */
export type TaskScope = typeof TASK_SCOPES[number];

/** Task complexities (a hint for model choice). */
export const TASK_COMPLEXITIES = ["low", "medium", "high"] as const;

/** A task's complexity. */
export type TaskComplexity = typeof TASK_COMPLEXITIES[number];

/** Reasoning effort, as in the configuration's `role_model_policy`. */
export type TaskEffort = typeof EFFORTS[number];

/** A JSON value as it round-trips through `JSON.stringify`/`JSON.parse` (task metadata). */
export type TaskJson = null | boolean | number | string | TaskJson[] | { [key: string]: TaskJson };

/**
 * One check that tells whether an agent's work is complete (run against its worktree). The
 * one definition lives with the plan format (src/plan), which declares signals.
 */
export type { CompletionSignal };

/**
 * A task. Every field is always present; "not set" is `null`, never absent, so the JSON
 * shape is stable for agents and the API.
 */
export interface Task {
  /** Stable id (`t-` + a time-ordered ULID unless the creator chose one). */
  id: string;
  /** One line. */
  title: string;
  /** What to do, for the agent's prompt. */
  description: string;
  /** Role that should do it (`backend`, `qa`, `manager`, …). */
  role: string;
  /** 1 is the highest priority. */
  priority: number;
  /** Size bucket; picks the agent's deadline. */
  scope: TaskScope;
  /** Difficulty hint. */
  complexity: TaskComplexity;
  /** Ids of tasks that must be `closed` (merged) before this one can be claimed. */
  depends_on: string[];
  /** The task that created this one (a manager's child), or null. */
  parent_task_id: string | null;
  /** Repo-relative paths or globs this task expects to change (scheduler avoids overlap). */
  owned_files: string[];
  /** Checks run when the agent reports completion. */
  completion_signals: CompletionSignal[];
  /** Adapter to run, or null for the role's policy. */
  cli: string | null;
  /** Model, or null for the role's policy. */
  model: string | null;
  /** Reasoning effort, or null for the role's policy. */
  effort: TaskEffort | null;
  /** Given to the agent with the prompt: repo-relative paths, or held by value. */
  attachments: AttachmentDeclaration[];
  /** How many times a failed task may be reopened. */
  max_retries: number;
  /** How many times it was reopened after failing. */
  retry_count: number;
  /** Agent (session) holding the claim, or null. */
  assigned_agent: string | null;
  /** The agent's summary when it completed. */
  result_summary: string | null;
  /** Why the task failed, blocked, was cancelled or orphaned. */
  terminal_reason: string | null;
  /** ISO-8601 UTC creation time (ms precision); age order for scheduling. */
  created_at: string;
  /** Optimistic concurrency: 1 at creation, +1 on every change. */
  version: number;
  /** Free-form JSON for planners and adapters. */
  metadata: { [key: string]: TaskJson };
  /** Current state. */
  status: TaskStatus;
  /** ISO-8601 UTC time of the last change (claim, progress, transition): claim liveness. */
  updated_at: string;
}

/** What a caller gives to create a task; omitted fields take their defaults. */
export type TaskDraft = z.input<typeof TaskDraftSchema>;

/** A task id: letters, digits, `.`, `_`, `-`; starts with a letter or digit; ≤ 128 chars. */
export const TaskIdSchema: z.ZodString = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
  "must be 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
);

const TaskJsonSchema: z.ZodType<TaskJson> = z.lazy(() =>
  z.union([
    z.null(),
    z.boolean(),
    z.number().finite(),
    z.string(),
    z.array(TaskJsonSchema),
    z.record(z.string(), TaskJsonSchema),
  ])
);

const RelativePath = z.string().superRefine((value, ctx) => {
  try {
    checkRelativePath(value);
  } catch (error) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
  }
});

const NonEmpty = z.string().min(1);

/** Schema of one completion signal (the plan format's shape: `kind` plus its fields). */
export const CompletionSignalSchema: z.ZodType<CompletionSignal, z.ZodTypeDef, unknown> = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("path_exists"), path: RelativePath }).strict(),
    z.object({ kind: z.literal("glob_exists"), glob: RelativePath }).strict(),
    z.object({
      kind: z.literal("file_contains"),
      path: RelativePath,
      contains: z.string().optional(),
      regex: NonEmpty.optional(),
    }).strict(),
    z.object({
      kind: z.literal("test_passes"),
      command: z.array(NonEmpty).min(1),
      timeout_s: z.number().positive().finite().optional(),
    }).strict(),
  ])
  .superRefine((signal, ctx) => {
    if (
      signal.kind === "file_contains" &&
      (signal.contains === undefined) === (signal.regex === undefined)
    ) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["contains"],
        message: "give exactly one of contains or regex",
      });
    }
  })
  .transform((signal) => signal as CompletionSignal);

const Text = (max: number) => z.string().max(max);
const Name = z.string().min(1).max(200);
const Iso = z.string().datetime({ offset: false, precision: 3 });

/**
 * A draft's attachment list, checked with the agent-core rules (plan/host_attachment.ts):
 * every problem is an issue at its own path (`attachments[3].image.mime`).
 */
const DeclarationListSchema = z.array(z.unknown()).superRefine((list, ctx) => {
  const { problems } = checkDeclarations(list, {
    pathProblem: (p) => p.length > 4096 ? "is longer than 4096 characters" : undefined,
    max: MAX_ATTACHMENTS_PER_TASK,
  });
  for (const p of problems) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: p.path, message: p.message });
  }
}).transform((list) => list as AttachmentDeclaration[]);

/** A stored declaration: a path, or an attachment held by value (checked when created). */
const StoredDeclaration = z.union([
  z.string(),
  z.object({ name: z.string(), text: z.string() }).strict(),
  z.object({ name: z.string(), image: z.object({ mime: z.string(), base64: z.string() }).strict() })
    .strict(),
]);

/** Schema of a task draft (HTTP `POST /tasks`, plan loading, `TaskStore.create`). */
export const TaskDraftSchema = z.object({
  id: TaskIdSchema.optional(),
  title: z.string().min(1).max(500).refine((t) => t.trim() !== "", "must not be blank"),
  description: Text(200_000).default(""),
  role: Name,
  priority: z.number().int().min(1).max(1000).optional(),
  scope: z.enum(TASK_SCOPES).default("medium"),
  complexity: z.enum(TASK_COMPLEXITIES).default("medium"),
  depends_on: z.array(TaskIdSchema).max(10_000).default([]),
  parent_task_id: TaskIdSchema.nullable().default(null),
  owned_files: z.array(RelativePath).default([]),
  completion_signals: z.array(CompletionSignalSchema).default([]),
  cli: Name.nullable().default(null),
  model: Name.nullable().default(null),
  effort: z.enum(EFFORTS).nullable().default(null),
  attachments: DeclarationListSchema.default([]),
  max_retries: z.number().int().min(0).max(100).optional(),
  metadata: z.record(z.string(), TaskJsonSchema).default({}),
  status: z.enum(["planned", "open"]).default("open"),
}).strict();

/** A draft after validation (defaults applied except priority and max_retries). */
export type ParsedTaskDraft = z.output<typeof TaskDraftSchema>;

/** Schema of a stored task (every line of the task log is checked against it). */
export const TaskSchema: z.ZodType<Task, z.ZodTypeDef, unknown> = z.object({
  id: TaskIdSchema,
  title: z.string().min(1).max(500),
  description: Text(200_000),
  role: Name,
  priority: z.number().int().min(1).max(1000),
  scope: z.enum(TASK_SCOPES),
  complexity: z.enum(TASK_COMPLEXITIES),
  depends_on: z.array(TaskIdSchema),
  parent_task_id: TaskIdSchema.nullable(),
  owned_files: z.array(z.string()),
  completion_signals: z.array(CompletionSignalSchema),
  cli: Name.nullable(),
  model: Name.nullable(),
  effort: z.enum(EFFORTS).nullable(),
  attachments: z.array(StoredDeclaration),
  max_retries: z.number().int().min(0),
  retry_count: z.number().int().min(0),
  assigned_agent: Name.nullable(),
  result_summary: z.string().nullable(),
  terminal_reason: z.string().nullable(),
  created_at: Iso,
  version: z.number().int().min(1),
  metadata: z.record(z.string(), TaskJsonSchema),
  status: z.enum(TASK_STATUSES),
  updated_at: Iso,
}).strict();

/** `path` of a zod issue as `depends_on[2].x`. */
export function issuePath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) {
    out += typeof seg === "number" ? `[${seg}]` : out === "" ? seg : `.${seg}`;
  }
  return out;
}

/** A zod issue as a short problem text without the field (`required`, `expected …`). */
export function describeZodIssue(issue: z.ZodIssue): string {
  if (issue.code === "invalid_type") {
    return issue.received === "undefined"
      ? "required"
      : `expected ${issue.expected}, got ${issue.received}`;
  }
  if (issue.code === "invalid_enum_value") {
    return `'${String(issue.received)}' is not one of ${issue.options.join(", ")}`;
  }
  if (issue.code === "unrecognized_keys") {
    return `unknown field${issue.keys.length === 1 ? "" : "s"} ${issue.keys.join(", ")}`;
  }
  if (issue.code === "invalid_union_discriminator") {
    return `'type' must be one of ${issue.options.map(String).join(", ")}`;
  }
  return `${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`;
}

/**
 * A zod failure as a {@linkcode TaskValidationError}: `location` is the first bad field's path
 * (`depends_on[2]`), the message says what is wrong with it.
 */
export function validationError(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
): TaskValidationError | TaskAttachmentInvalidError {
  const { message, location } = describeZodError(error, prefix);
  // The attachment rules have their own code (and the agent-core design's alias for it).
  const first = error.issues[0]?.path ?? [];
  if (first[0] === "attachments") return new TaskAttachmentInvalidError(message, { location });
  return new TaskValidationError(message, { location });
}

/** The first issue of a zod failure: its field path (if any) and what is wrong, plus a count. */
export function describeZodError(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
): { message: string; location: string | undefined } {
  const first = error.issues[0];
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  const path = [...prefix, ...(first?.path ?? [])];
  // An unknown key is reported at the key itself, so the location names the offending field.
  if (first?.code === "unrecognized_keys") path.push(first.keys[0]);
  return {
    message: `${first ? describeZodIssue(first) : "invalid"}${more}`,
    location: path.length > 0 ? issuePath(path) : undefined,
  };
}

/**
 * Validates a draft; throws {@linkcode TaskValidationError} naming the first bad field.
 * `index` (a draft's position in a batch) prefixes the field path: `[3].title`.
 */
export function parseTaskDraft(input: unknown, index?: number): ParsedTaskDraft {
  const result = TaskDraftSchema.safeParse(input);
  if (!result.success) {
    throw validationError(result.error, index === undefined ? [] : [index]);
  }
  return result.data;
}
