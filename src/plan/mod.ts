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
  type BacklogCheck,
  checkBacklog,
  loadBacklog,
  readBacklog,
  splitFrontMatter,
} from "./backlog.ts";
export { type ConditionContext, evaluateCondition, parseCondition } from "./condition.ts";
export { type ConnectionRequest, readConnectionRequests } from "./connections.ts";
export { PlanLoadError, type PlanProblem } from "./errors.ts";
export { compileGlob, globLiteralPrefix, GlobSyntaxError } from "./glob.ts";
export { planGraphJson } from "./json.ts";
export {
  checkPlan,
  loadPlanFile,
  parsePlan,
  type PlanCheck,
  readPlanFile,
  stepId,
} from "./load.ts";
export { MAX_ATTACHMENTS_PER_TASK } from "./_step_fields.ts";
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
export { matchesTaskFilter, parseTaskFilter, unmatchedPatterns } from "./task_filter.ts";
export {
  type CompletionSignal,
  type PlanGraph,
  type PlanStep,
  type Priority,
  type StepFields,
  stepFieldsOf,
} from "./types.ts";
