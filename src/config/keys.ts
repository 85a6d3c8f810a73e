/**
 * The catalogue of every configuration key, read from the schema: its type, description,
 * built-in default, the variable and flag that set it, whether a running orchestrator picks up
 * a change, and whether it does anything yet. The README's configuration reference is
 * generated from it and the schema-walk test walks it.
 */
import { z } from "zod";
import { ENV_OVERRIDES } from "./env_overrides.ts";
import { getPath } from "./merge.ts";
import { notImplementedEntry, type NotImplementedKey } from "./not_implemented.ts";
import { DEFAULT_CONFIG, unwrapSchema } from "./resolve.ts";
import { ConfigSchema } from "./schema.ts";

/** Keys a plan file may set (its defaults layer). */
export const PLAN_DEFAULT_KEYS: readonly string[] = ["cli", "max_agents"];

/** Command-line flags of `bernstein run` that set a key (the highest layer). */
export const FLAG_KEYS: Readonly<Record<string, string>> = {
  max_agents: "--max-agents",
  cli: "--cli",
};

/**
 * Keys (and subtrees) a running orchestrator applies on the next tick when bernstein.yaml, the
 * overlay or .sdd/config.yaml changes (src/orchestrator/config_reload.ts); every other key is
 * read once, when the run starts (the task server, stores and adapters are set up by then).
 */
export const RELOADABLE_KEYS: readonly string[] = [
  "max_agents",
  "role_model_policy",
  "tuning.orchestrator",
  "tuning.spawn",
  "tuning.agent",
  "tuning.gates",
  "tuning.slo",
];

/** One key of the catalogue. */
export interface ConfigKey {
  /** Dotted key; `*` is any map key or list index. */
  key: string;
  /** Human type (`positive integer`, `list of string`, `memory | postgres | redis`, …). */
  type: string;
  /** One line from the schema. */
  description: string;
  /** Built-in value, when there is one. */
  default?: unknown;
  /** `BERNSTEIN_*` variable that sets it. */
  env?: string;
  /** `bernstein run` flag that sets it. */
  flag?: string;
  /** A plan file may set it. */
  plan: boolean;
  /** Picked up by a running orchestrator. */
  reloadable: boolean;
  /** Listed as accepted-but-inert, with the issue that builds it. */
  notImplemented?: NotImplementedKey;
  /** A value (not a map of further keys). */
  leaf: boolean;
}

type AnySchema = z.ZodTypeAny;

function numberText(s: z.ZodNumber): string {
  const checks = s._def.checks;
  const int = checks.some((c) => c.kind === "int");
  const min = checks.find((c) => c.kind === "min") as
    | { value: number; inclusive: boolean }
    | undefined;
  const max = checks.find((c) => c.kind === "max") as { value: number } | undefined;
  const base = int ? "integer" : "number";
  if (min && max) return `${base} ${min.value}–${max.value}`;
  if (min?.value === 0 && !min.inclusive) return `positive ${base}`;
  if (min?.value === 0) return `${base} ≥ 0`;
  if (min) return `${base} ≥ ${min.value}`;
  return base;
}

/** The type of a schema, in words. */
export function typeText(schema: AnySchema): string {
  const nullable = schema instanceof z.ZodNullable ||
    (schema instanceof z.ZodOptional && schema.unwrap() instanceof z.ZodNullable);
  const s = unwrapSchema(schema);
  let text: string;
  if (s instanceof z.ZodString) {
    const url = s._def.checks.some((c) => c.kind === "url");
    text = url ? "URL" : "string";
  } else if (s instanceof z.ZodNumber) text = numberText(s);
  else if (s instanceof z.ZodBoolean) text = "boolean";
  else if (s instanceof z.ZodEnum) text = (s.options as string[]).join(" | ");
  else if (s instanceof z.ZodLiteral) text = String(s.value);
  else if (s instanceof z.ZodArray) {
    const element = unwrapSchema(s.element);
    text = element instanceof z.ZodObject ? "list of maps" : `list of ${typeText(element)}`;
  } else if (s instanceof z.ZodRecord) text = "map of name → settings";
  else if (s instanceof z.ZodObject) text = "map";
  else if (s instanceof z.ZodUnion) {
    text = (s.options as AnySchema[]).map(typeText).join(", or ");
  } else text = "value";
  return nullable ? `${text} or null` : text;
}

function descriptionOf(schema: AnySchema): string {
  let s: AnySchema | undefined = schema;
  while (s !== undefined) {
    if (s.description) return s.description;
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
    else if (s instanceof z.ZodEffects) s = s.innerType();
    else s = undefined;
  }
  return "";
}

/** The map-like schema a key's children come from: an object, a record's value, a list's item. */
function childrenOf(
  s: AnySchema,
): { shape: Record<string, AnySchema> } | { element: AnySchema } | undefined {
  const u = unwrapSchema(s);
  if (u instanceof z.ZodObject) return { shape: u.shape as Record<string, AnySchema> };
  if (u instanceof z.ZodRecord) return { element: u.valueSchema };
  if (u instanceof z.ZodArray && unwrapSchema(u.element) instanceof z.ZodObject) {
    return { element: u.element };
  }
  if (u instanceof z.ZodUnion) {
    // `cells: 3 | [...]`, `desktop: true | {events}`: the keys come from the structured form.
    for (const o of u.options as AnySchema[]) {
      const children = childrenOf(o);
      if (children !== undefined) return children;
    }
    return undefined;
  }
  return undefined;
}

function hasScalarForm(s: AnySchema): boolean {
  const u = unwrapSchema(s);
  if (u instanceof z.ZodUnion) {
    return (u.options as AnySchema[]).some((o) => childrenOf(o) === undefined);
  }
  return childrenOf(u) === undefined;
}

function isReloadable(key: string): boolean {
  return RELOADABLE_KEYS.some((r) => key === r || key.startsWith(r + "."));
}

function walk(schema: AnySchema, path: string[], out: ConfigKey[]): void {
  const key = path.join(".");
  if (path.length > 0) {
    const env = ENV_OVERRIDES.find((o) => o.path.join(".") === key)?.name;
    const fallback = path.includes("*") ? undefined : getPath(DEFAULT_CONFIG, path);
    out.push({
      key,
      type: typeText(schema),
      description: descriptionOf(schema),
      ...(fallback !== undefined && hasScalarForm(schema) ? { default: fallback } : {}),
      ...(env ? { env } : {}),
      ...(FLAG_KEYS[key] ? { flag: FLAG_KEYS[key] } : {}),
      plan: PLAN_DEFAULT_KEYS.includes(key),
      reloadable: isReloadable(key),
      ...(notImplementedEntry(key) ? { notImplemented: notImplementedEntry(key) } : {}),
      leaf: hasScalarForm(schema),
    });
  }
  const children = childrenOf(schema);
  if (children === undefined) return;
  if ("shape" in children) {
    for (const [name, child] of Object.entries(children.shape)) walk(child, [...path, name], out);
  } else {
    walk(children.element, [...path, "*"], out);
  }
}

/**
 * Every key of the schema, parents before children, in schema order.
 *
 * @example
 * ```ts
 * configKeys().find((k) => k.key === "max_agents")?.default; // 4
 * ```
 */
export function configKeys(): ConfigKey[] {
  const out: ConfigKey[] = [];
  walk(ConfigSchema, [], out);
  return out;
}
