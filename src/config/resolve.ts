import { z } from "zod";
import { closestMatch } from "../errors/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import { DEFAULT_TUNING } from "./defaults.ts";
import type { ConfigProblem } from "./errors.ts";
import { readEnvOverrides } from "./env_overrides.ts";
import { deletePath, dottedPath, getPath, mergeLayer, setPath } from "./merge.ts";
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
  github: { sync_backlog: false },
  lineage: { enabled: true, strict: false },
  compliance: { risk_paths: [], remote_biometric_identification: false, retention_days: 183 },
  tuning: DEFAULT_TUNING,
};

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

function unwrap(schema: AnySchema): AnySchema {
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
    s = unwrap(s);
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, AnySchema>)[String(seg)];
    else if (s instanceof z.ZodRecord) s = s.valueSchema;
    else if (s instanceof z.ZodArray) s = s.element;
    else return [];
    if (s === undefined) return [];
  }
  s = unwrap(s);
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
 * Validates one layer against the (all-optional) layer schema. Unknown keys become warnings
 * with the closest known key and are dropped; wrong types become errors at file:line:col.
 */
export function validateLayer(
  layer: YamlLayer,
): { raw: Record<string, unknown>; problems: ConfigProblem[] } {
  let raw = layer.raw;
  const problems: ConfigProblem[] = [];
  for (let round = 0; round < 50; round++) {
    const result = LayerSchema.safeParse(raw);
    if (result.success) return { raw, problems: sortByLocation(problems) };
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          const near = closestMatch(
            key,
            knownKeysAt(issue.path),
            issue.path.length === 0 ? { aliases: KEY_ALIASES } : {},
          );
          const where = issue.path.length > 0 ? ` in ${dottedPath(issue.path)}` : "";
          problems.push({
            severity: "warning",
            code: "config.unknown_key",
            message: `unknown key '${key}'${where}; ignored`,
            location: layer.locate([...issue.path, key], true),
            hint: near ? `did you mean '${near}'?` : undefined,
          });
          raw = deletePath(raw, [...issue.path, key]);
        }
      } else {
        problems.push({
          severity: "error",
          code: "config.invalid_value",
          message: describeIssue(issue),
          location: layer.locate(issue.path),
        });
        raw = issue.path.length > 0 ? deletePath(raw, issue.path) : {};
      }
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
}

/** The effective configuration with where each value came from. */
export interface ResolvedConfig {
  /** Present when no layer had an error. */
  config?: Config;
  /** The merged values even when invalid (for `config list`). */
  merged: Record<string, unknown>;
  /** Dotted leaf path → label of the layer that set it. */
  sources: Map<string, string>;
  /** Every warning and error, in layer order. */
  problems: ConfigProblem[];
}

/**
 * Merges defaults < layers < environment overrides < flags, validating each layer on its own
 * so errors point into the file that caused them. Pure: no I/O.
 */
export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const sources = new Map<string, string>();
  const problems: ConfigProblem[] = [];
  let merged = mergeLayer(
    {},
    structuredClone(DEFAULT_CONFIG) as Record<string, unknown>,
    "default",
    sources,
  );
  for (const layer of input.layers) {
    const checked = validateLayer(layer);
    problems.push(...checked.problems);
    merged = mergeLayer(merged, checked.raw, layer.label, sources);
  }
  const env = readEnvOverrides(input.env);
  problems.push(...env.problems);
  for (const [dotted, label] of env.setBy) {
    const path = dotted.split(".");
    merged = mergeLayer(merged, setPath({}, path, getPath(env.raw, path)), label, sources);
  }
  if (input.flags && Object.keys(input.flags).length > 0) {
    const checked = validateLayer(objectLayer("flags", input.flags));
    problems.push(...checked.problems);
    merged = mergeLayer(merged, checked.raw, "flags", sources);
  }
  const final = ConfigSchema.safeParse(merged);
  if (!final.success) {
    for (const issue of final.error.issues) {
      problems.push({
        severity: "error",
        code: "config.invalid_value",
        message: describeIssue(issue),
        location: sources.get(dottedPath(issue.path)) ?? "effective configuration",
      });
    }
  }
  if (problems.some((p) => p.severity === "error") || !final.success) {
    return { merged, sources, problems };
  }
  const config = final.data;
  if (config.tuning.slo.error_budget_min_failures < 0) {
    config.tuning.slo.error_budget_min_failures = 0;
  }
  for (const [name, settings] of Object.entries(config.adapters ?? {})) {
    if (name !== "scripted" && settings.test_multimodal !== undefined) {
      problems.push({
        severity: "error",
        code: "config.invalid_value",
        message:
          `adapters.${name}.test_multimodal: only the scripted test agent can be registered as multimodal; ` +
          "what a real adapter accepts comes from the capability table",
        location: sources.get(`adapters.${name}.test_multimodal`) ?? "effective configuration",
      });
    }
  }
  if (problems.some((p) => p.severity === "error")) return { merged, sources, problems };
  const stall = config.tuning.agent.stall_threshold_s;
  const idle = config.tuning.agent.idle_log_age_threshold_s;
  if (stall >= idle) {
    problems.push({
      severity: "warning",
      code: "config.stall_threshold_high",
      message:
        `tuning.agent.stall_threshold_s (${stall}, set by ${
          sources.get("tuning.agent.stall_threshold_s") ?? "default"
        }) is at or above tuning.agent.idle_log_age_threshold_s (${idle}); ` +
        "idle agents will be reported before they count as stalled",
    });
  }
  return { config, merged, sources, problems };
}
