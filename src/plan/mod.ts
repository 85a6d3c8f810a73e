/**
 * Plan files and the backlog: YAML (or Markdown with front matter) in, a pure, deterministic
 * plan graph out — stable step ids, resolved dependencies, every problem located at
 * `file:line:col` with its field path. The run loop turns the graph into tasks.
 *
 * @example
 * ```ts ignore
 * import { checkPlan } from "./mod.ts";
 * const { graph, problems } = checkPlan(await Deno.readTextFile("plan.yaml"), {
 *   file: "plan.yaml",
 * });
 * for (const step of graph?.steps ?? []) console.log(step.id, step.depends_on);
 * ```
 *
 * @module
 */
export {
  BACKLOG_EXTENSIONS,
  BACKLOG_ID_PATTERN,
  BACKLOG_KEYS,
  type BacklogCheck,
  type BacklogFile,
  backlogId,
  type BacklogItem,
  type BacklogOptions,
  checkBacklog,
  loadBacklog,
  readBacklog,
  splitFrontMatter,
} from "./backlog.ts";
export {
  type Condition,
  CONDITION_NAMES,
  type ConditionContext,
  evaluateCondition,
  MAX_CONDITION_LENGTH,
  parseCondition,
  type ParsedCondition,
} from "./condition.ts";
export {
  connectionEnvProblem,
  type ConnectionRequest,
  defaultConnectionEnv,
  MAX_CONNECTIONS_PER_STEP,
  readConnectionRequests,
} from "./connections.ts";
export { PlanLoadError, type PlanProblem } from "./errors.ts";
export { compileGlob, globLiteralPrefix, GlobSyntaxError } from "./glob.ts";
export { planGraphJson } from "./json.ts";
export {
  checkPlan,
  loadPlanFile,
  parsePlan,
  PLAN_KEYS,
  PLAN_STEP_KEYS,
  type PlanCheck,
  type PlanLoadOptions,
  readPlanFile,
  slugify,
  STAGE_KEYS,
  stepId,
} from "./load.ts";
export { MAX_ATTACHMENTS_PER_TASK, STEP_KEYS } from "./_step_fields.ts";
export {
  ATTACH_INVALID_ALIASES,
  type AttachmentDeclaration,
  checkDeclarations,
  HOST_IMAGE_TYPES,
  type HostAttachment,
  hostBytes,
  type ImageMime,
  imageMimeOf,
  MAX_HOST_BYTES_PER_TASK,
  MAX_HOST_NAME_CHARS,
  MAX_HOST_TEXT_BYTES,
} from "./host_attachment.ts";
export {
  matchesTaskFilter,
  parseTaskFilter,
  type TaskFilter,
  unmatchedPatterns,
} from "./task_filter.ts";
export {
  type CompletionSignal,
  COMPLEXITIES,
  type Complexity,
  type Effort,
  type PlanGraph,
  type PlanStage,
  type PlanStep,
  PRIORITIES,
  type Priority,
  PRIORITY_NAMES,
  SCOPES,
  SIGNAL_KINDS,
  type SignalKind,
  type StepCondition,
  type StepFields,
  stepFieldsOf,
  type StepScope,
} from "./types.ts";
