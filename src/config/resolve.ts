/**
 * Layers → the effective configuration: each layer validated on its own (so errors point into
 * the file that caused them), merged in precedence order with the layer that set each leaf,
 * then the checks that need the whole picture. Pure: no I/O.
 */
import { z } from "zod";
import { closestMatch } from "../errors/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import { agentDeadlineSeconds, DEFAULT_TUNING, MANAGER_SCOPE } from "./defaults.ts";
import type { ConfigProblem } from "./errors.ts";
import { readEnvOverrides } from "./env_overrides.ts";
import { deleteInPlace, dottedPath, getPath, mergeLayer, setPath } from "./merge.ts";
import { notImplementedWarnings } from "./not_implemented.ts";
import { collapseRepeats } from "./problems.ts";
import { type Config, ConfigSchema, LayerSchema } from "./schema.ts";
import { objectLayer, type YamlLayer } from "./yaml_layer.ts";

/** Built-in values of every key that has a default. */
export const DEFAULT_CONFIG: Readonly<Record<string, unknown>> = {
  cli: "auto",
  max_agents: 4,
  storage: { backend: "memory" },
  network: { allowed_ips: ["127.0.0.1", "::1"], egress: [] },
  isolation: "auto",
  sandbox: { read_only: [] },
  quality_gates: { run_config: true, secrets: true },
  github: { sync_backlog: false, api_url: "https://api.github.com", comment_on_merge: false },
  lineage: { enabled: true, strict: false },
  policy: { enabled: true, unenforced: "warn" },
  compliance: { risk_paths: [], remote_biometric_identification: false, retention_days: 183 },
  tuning: DEFAULT_TUNING,
};

/**
 * Watchdog and deadline keys: a bad value (unparseable, zero, negative, NaN, infinite) in any
 * layer falls through to the next lower layer with a warning instead of stopping the run, so
 * a typo never disables a watchdog or makes it fire at once.
 */
export const WATCHDOG_KEYS: readonly string[] = [
  "tuning.orchestrator.stale_claim_timeout_s",
  "tuning.orchestrator.stalled_manager_threshold_s",
  "tuning.orchestrator.max_agent_runtime_s",
  "tuning.orchestrator.scope_runtime_s.small",
  "tuning.orchestrator.scope_runtime_s.medium",
  "tuning.orchestrator.scope_runtime_s.large",
  "tuning.orchestrator.scope_runtime_s.xl",
  "tuning.orchestrator.stalled_run_grace_s",
  "tuning.orchestrator.stalled_run_ticks",
  "tuning.agent.max_turns",
  "tuning.agent.idle_log_age_threshold_s",
  "tuning.agent.stall_threshold_s",
  "tuning.agent.heartbeat_interval_s",
];

/** Common misnamings of top-level keys, suggested even when the spelling is far off. */
const KEY_ALIASES: Readonly<Record<string, string>> = {
  tasks: "cells",
  agents: "max_agents",
  adapter: "cli",
  models: "role_model_policy",
  model_policy: "role_model_policy",
  gates: "quality_gates",
  endpoints: "local_endpoints",
};

type AnySchema = z.ZodTypeAny;

/** The schema inside optional/nullable/default/refinement wrappers. */
export function unwrapSchema(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
    else if (s instanceof z.ZodDefault) s = s.removeDefault();
    else if (s instanceof z.ZodEffects) s = s.innerType();
    else return s;
  }
}

/** The keys a config object accepts at `path`, read from the schema. */
export function knownKeysAt(path: readonly (string | number)[]): string[] {
  let s: AnySchema = ConfigSchema;
  for (const seg of path) {
    s = unwrapSchema(s);
    if (s instanceof z.ZodUnion) {
      s = (s.options as AnySchema[]).map(unwrapSchema).find((o) =>
        o instanceof z.ZodArray || o instanceof z.ZodObject
      ) ?? s;
    }
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, AnySchema>)[String(seg)];
    else if (s instanceof z.ZodRecord) s = s.valueSchema;
    else if (s instanceof z.ZodArray) s = s.element;
    else return [];
    if (s === undefined) return [];
  }
  s = unwrapSchema(s);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function describeIssue(issue: z.ZodIssue): string {
  const field = issue.path.length > 0 ? `${dottedPath(issue.path)}: ` : "";
  if (issue.code === "invalid_type") {
    return `${field}expected ${issue.expected}, got ${issue.received}`;
  }
  if (issue.code === "invalid_enum_value") {
    return `${field}'${String(issue.received)}' is not one of ${
      issue.options.map(String).join(", ")
    }`;
  }
  return `${field}${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`;
}

/**
 * Unknown keys of one layer reported in full (location and suggestion); past this many only
 * the count matters (they are collapsed into one line anyway), so a file of ten thousand
 * junk keys is not ten thousand edit-distance searches.
 */
const DETAILED_UNKNOWN_KEYS = 200;

function unknownKeyProblem(
  layer: YamlLayer,
  issue: z.ZodIssue,
  key: string,
  detailed: boolean,
): ConfigProblem {
  const where = issue.path.length > 0 ? ` in ${dottedPath(issue.path)}` : "";
  if (!detailed) {
    return {
      severity: "warning",
      code: "config.unknown_key",
      message: `unknown key '${key}'${where}; ignored`,
      location: layer.file ?? layer.label,
    };
  }
  const near = closestMatch(
    key,
    knownKeysAt(issue.path),
    issue.path.length === 0 ? { aliases: KEY_ALIASES } : {},
  );
  return {
    severity: "warning",
    code: "config.unknown_key",
    message: `unknown key '${key}'${where}; ignored`,
    location: layer.locate([...issue.path, key], true),
    hint: near ? `did you mean '${near}'?` : undefined,
  };
}

function watchdogProblem(layer: YamlLayer, issue: z.ZodIssue): ConfigProblem {
  const key = dottedPath(issue.path);
  return {
    severity: "warning",
    code: "config.watchdog_invalid",
    message: `${describeIssue(issue)} (a watchdog needs a positive, finite number); ignored, ` +
      `${key} comes from the next layer`,
    location: layer.locate(issue.path),
  };
}

/**
 * Validates one layer against the (all-optional) layer schema. Unknown keys become warnings
 * with the closest known key and are dropped; a bad watchdog value is dropped with a warning
 * (the next layer's value applies); other wrong values become errors at file:line:col.
 */
export function validateLayer(
  layer: YamlLayer,
): { raw: Record<string, unknown>; problems: ConfigProblem[] } {
  // One copy, then removals in place: linear however many keys are dropped.
  const raw = structuredClone(layer.raw);
  const problems: ConfigProblem[] = [];
  let unknown = 0;
  for (let round = 0; round < 10; round++) {
    const result = LayerSchema.safeParse(raw);
    if (result.success) break;
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          problems.push(unknownKeyProblem(layer, issue, key, ++unknown <= DETAILED_UNKNOWN_KEYS));
          deleteInPlace(raw, [...issue.path, key]);
        }
        continue;
      }
      if (issue.path.length === 0) {
        problems.push({
          severity: "error",
          code: "config.invalid_value",
          message: describeIssue(issue),
          location: layer.locate([]),
        });
        return { raw: {}, problems: sortByLocation(problems) };
      }
      const watchdog = WATCHDOG_KEYS.includes(dottedPath(issue.path));
      problems.push(
        watchdog ? watchdogProblem(layer, issue) : {
          severity: "error",
          code: "config.invalid_value",
          message: describeIssue(issue),
          location: layer.locate(issue.path),
        },
      );
      deleteInPlace(raw, issue.path);
    }
  }
  return { raw, problems: sortByLocation(problems) };
}

function locationOrder(location: string | undefined): [number, number] {
  const m = /:(\d+):(\d+)$/.exec(location ?? "");
  return m ? [Number(m[1]), Number(m[2])] : [Infinity, 0];
}

/** Orders one layer's problems by line and column, so output follows the file. */
function sortByLocation(problems: ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) => {
    const [la, ca] = locationOrder(a.location);
    const [lb, cb] = locationOrder(b.location);
    return la - lb || ca - cb;
  });
}

/** Everything that goes into the effective configuration. */
export interface ResolveInput {
  /** File and inline layers, lowest precedence first (defaults are added automatically). */
  layers: readonly YamlLayer[];
  /** Environment for the individual `BERNSTEIN_*` overrides. */
  env: EnvReader;
  /** Values from CLI flags, the highest layer. */
  flags?: Record<string, unknown>;
  /** Problems found while reading and parsing the layers' files (reported first). */
  readProblems?: readonly ConfigProblem[];
}

/** The effective configuration with where each value came from. */
export interface ResolvedConfig {
  /** Present when no layer had an error. */
  config?: Config;
  /** The merged values even when invalid (for `config list`). */
  merged: Record<string, unknown>;
  /** Dotted leaf path → label of the layer that set it. */
  sources: Map<string, string>;
  /** Every warning and error, in layer order; repeats are reported once with a count. */
  problems: ConfigProblem[];
  /**
   * `file:line:col` of a dotted key (a leaf, a map or a list item) in the layer that set it:
   * of the key itself, or with `value` of its value.
   */
  locate(dotted: string, value?: boolean): string | undefined;
}

/**
 * Where a dotted key was set: its own layer, else the layer of its first leaf below it (a
 * map), else the layer of the nearest key above it (an item of a list).
 */
function locator(
  sources: ReadonlyMap<string, string>,
  byLabel: ReadonlyMap<string, YamlLayer>,
): (dotted: string, value?: boolean) => string | undefined {
  return (dotted, value = false) => {
    let label = sources.get(dotted);
    if (label === undefined) {
      for (const [leaf, l] of sources) {
        if (leaf.startsWith(dotted + ".")) {
          label = l;
          break;
        }
      }
    }
    for (let up = dotted.lastIndexOf("."); label === undefined && up > 0;) {
      label = sources.get(dotted.slice(0, up));
      up = dotted.lastIndexOf(".", up - 1);
    }
    if (label === undefined) return undefined;
    if (label.startsWith("env:")) return label.slice(4);
    const layer = byLabel.get(label);
    return layer ? layer.locate(dotted.split("."), !value) : label;
  };
}

/** The nearest ancestor of `path` that some layer set, located; else the fallback. */
function nearestLocation(
  locate: (dotted: string) => string | undefined,
  path: readonly (string | number)[],
): string {
  for (let n = path.length; n > 0; n--) {
    const found = locate(dottedPath(path.slice(0, n)));
    if (found !== undefined) return found;
  }
  return "effective configuration";
}

/**
 * `fallback_model` is the design's deprecated sugar for a one-rung ladder: it keeps working
 * (and, like the ladder, escalates only on evidence) with a note; both on one role is an error.
 */
function ladderProblems(
  config: Config,
  locate: (dotted: string) => string | undefined,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [role, policy] of Object.entries(config.role_model_policy ?? {})) {
    if (policy.fallback_model === undefined) continue;
    const key = `role_model_policy.${role}.fallback_model`;
    if (policy.ladder !== undefined) {
      problems.push({
        severity: "error",
        code: "config.invalid_value",
        message: `${key}: ladder and fallback_model are mutually exclusive; keep the ladder`,
        location: locate(key) ?? "effective configuration",
      });
      continue;
    }
    problems.push({
      severity: "warning",
      code: "config.deprecated",
      message: `${key} is deprecated: write ladder: [{model: ${policy.fallback_model}}] ` +
        "(it escalates on evidence only, like the ladder)",
      location: locate(key),
    });
  }
  return problems;
}

/**
 * The stalled-manager watchdog must be able to fire: a threshold at or above the manager's own
 * deadline means the manager is stopped there first (or extended while it shows progress), with
 * no diagnostic. (The design warns against the idle-log threshold instead, because its idle
 * watchdog, if wired, would race the diagnostic; here idleness is only reported — it stops
 * nothing — so a threshold above it, like the design's own 300 s and 900 s, is no conflict.)
 */
function stallThresholdProblems(
  config: Config,
  sources: ReadonlyMap<string, string>,
  locate: (dotted: string) => string | undefined,
): ConfigProblem[] {
  const key = "tuning.orchestrator.stalled_manager_threshold_s";
  const stall = config.tuning.orchestrator.stalled_manager_threshold_s;
  const deadline = agentDeadlineSeconds(config.tuning, MANAGER_SCOPE);
  if (stall < deadline) return [];
  return [{
    severity: "warning",
    code: "config.stall_threshold_high",
    message: `${key} (${stall}, set by ${sources.get(key) ?? "default"}) is at or above the ` +
      `manager's deadline (${deadline}s: tuning.orchestrator.max_agent_runtime_s, ` +
      `scope_runtime_s.${MANAGER_SCOPE}); a manager that creates no task is stopped at its ` +
      "deadline before the stalled-manager diagnostic can fire",
    location: locate(key),
  }];
}

/** Checks that need the merged values (clamps, cross-key rules), after the schema passed. */
function wholeConfigChecks(
  config: Config,
  sources: ReadonlyMap<string, string>,
  locate: (dotted: string) => string | undefined,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const budget = config.tuning.slo.error_budget_min_failures;
  if (budget < 0) {
    config.tuning.slo.error_budget_min_failures = 0;
    problems.push({
      severity: "warning",
      code: "config.clamped",
      message: `tuning.slo.error_budget_min_failures ${budget} is negative; clamped to 0`,
      location: locate("tuning.slo.error_budget_min_failures"),
    });
  }
  problems.push(...ladderProblems(config, locate));
  if (problems.some((p) => p.severity === "error")) return problems;
  problems.push(...stallThresholdProblems(config, sources, locate));
  return problems;
}

/**
 * Merges defaults < layers < environment overrides < flags, validating each layer on its own
 * so errors point into the file that caused them. Pure: no I/O.
 */
export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const sources = new Map<string, string>();
  const problems: ConfigProblem[] = [...(input.readProblems ?? [])];
  const byLabel = new Map<string, YamlLayer>();
  const locate = locator(sources, byLabel);
  let merged = mergeLayer(
    {},
    structuredClone(DEFAULT_CONFIG) as Record<string, unknown>,
    "default",
    sources,
  );
  const apply = (layer: YamlLayer) => {
    byLabel.set(layer.label, layer);
    const checked = validateLayer(layer);
    problems.push(...checked.problems);
    merged = mergeLayer(merged, checked.raw, layer.label, sources);
  };
  for (const layer of input.layers) apply(layer);
  const env = readEnvOverrides(input.env);
  problems.push(...env.problems);
  for (const [dotted, label] of env.setBy) {
    const path = dotted.split(".");
    merged = mergeLayer(merged, setPath({}, path, getPath(env.raw, path)), label, sources);
  }
  if (input.flags && Object.keys(input.flags).length > 0) {
    apply(objectLayer("flags", input.flags));
  }
  const final = ConfigSchema.safeParse(merged);
  const layerErrors = problems.some((p) => p.severity === "error");
  if (!final.success && !layerErrors) {
    // A layer error already explains any resulting gap; otherwise a required key is missing.
    for (const issue of final.error.issues) {
      problems.push({
        severity: "error",
        code: "config.invalid_value",
        message: describeIssue(issue),
        location: nearestLocation(locate, issue.path),
      });
    }
  }
  const done = (config?: Config): ResolvedConfig => ({
    config,
    merged,
    sources,
    problems: collapseRepeats(problems),
    locate,
  });
  if (layerErrors || !final.success) return done();
  const config = final.data;
  problems.push(...wholeConfigChecks(config, sources, locate));
  problems.push(...notImplementedWarnings({
    sources,
    valueOf: (key) => getPath(merged, key.split(".")),
    locate,
  }));
  return problems.some((p) => p.severity === "error") ? done() : done(config);
}
