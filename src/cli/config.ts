// `bernstein config …`: read and change the effective configuration.
import type { JsonValue } from "../canonical/mod.ts";
import type { BernsteinError as BernsteinErrorType, ErrorCode } from "../errors/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, stringArg } from "./spec.ts";

async function configModule() {
  return await import("../config/mod.ts");
}

function printWarnings(
  ctx: CommandContext,
  problems: {
    severity: string;
    code: ErrorCode;
    message: string;
    location?: string;
    hint?: string;
  }[],
): void {
  for (const p of problems) if (p.severity === "warning") ctx.out.warn(p);
}

function flatten(value: unknown, prefix: string, out: [string, unknown][]): void {
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.keys(value).length > 0
  ) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
    return;
  }
  out.push([prefix, value]);
}

function showValue(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Loads every layer; a broken one stops read commands with validate's first error. */
async function loadValid(ctx: CommandContext) {
  const cfg = await configModule();
  const { loaded } = await cfg.requireConfig({ cwd: ctx.cwd, env: ctx.env });
  return loaded;
}

async function get(ctx: CommandContext): Promise<number> {
  const cfg = await configModule();
  const key = stringArg(ctx, "key") ?? "";
  const path = cfg.parseConfigKey(key);
  const loaded = await loadValid(ctx);
  printWarnings(ctx, loaded.problems);
  // Secret-bearing URLs are shown without their password, in text and JSON alike.
  const value = cfg.getPath(redactedTree(cfg, loaded.merged), path);
  const leaves: [string, unknown][] = [];
  flatten(value, key, leaves);
  const sources: Record<string, string> = {};
  for (const [k] of leaves) sources[k] = loaded.sources.get(k) ?? "unset";
  if (ctx.json) {
    ctx.out.json({ key, value: (value ?? null) as JsonValue, set: value !== undefined, sources });
    return 0;
  }
  if (value === undefined) {
    ctx.out.line(`${key} is not set`);
    return 0;
  }
  if (leaves.length === 1 && leaves[0][0] === key) {
    ctx.out.line(`${showValue(value)}  ${ctx.out.style("dim", `(${sources[key]})`)}`);
    return 0;
  }
  for (const [k, v] of leaves) {
    ctx.out.line(`${k} = ${showValue(v)}  ${ctx.out.style("dim", `(${sources[k]})`)}`);
  }
  return 0;
}

/** The merged tree with every secret-bearing URL shown without its password (or hook path). */
function redactedTree(
  cfg: Awaited<ReturnType<typeof configModule>>,
  tree: Record<string, unknown>,
): Record<string, unknown> {
  let out = tree;
  for (const key of cfg.SECRET_KEYS) {
    const path = key.split(".");
    const value = cfg.getPath(out, path);
    if (typeof value !== "string") continue;
    out = structuredClone(out);
    let node: Record<string, unknown> = out;
    for (const seg of path.slice(0, -1)) node = node[seg] as Record<string, unknown>;
    node[path[path.length - 1]] = cfg.shownConfigValue(key, value);
  }
  return out;
}

async function list(ctx: CommandContext): Promise<number> {
  const cfg = await configModule();
  const { alignColumns } = await import("./output.ts");
  const loaded = await loadValid(ctx);
  const leaves: [string, unknown][] = [];
  flatten(redactedTree(cfg, loaded.merged), "", leaves);
  leaves.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (ctx.json) {
    ctx.out.json({
      values: leaves.map(([key, value]) => ({
        key,
        value: value as JsonValue,
        source: loaded.sources.get(key) ?? "default",
      })),
      layers: loaded.sourceFiles.map((s) => ({
        label: s.label,
        path: s.path ?? null,
        present: s.present,
      })),
      problems: loaded.problems.map((p) => ({
        ...p,
        location: p.location ?? null,
        hint: p.hint ?? null,
      })),
    });
    return 0;
  }
  printWarnings(ctx, loaded.problems);
  for (
    const row of alignColumns(
      leaves.map(([k, v]) => [k, showValue(v), `(${loaded.sources.get(k) ?? "default"})`]),
    )
  ) {
    ctx.out.line(row);
  }
  return 0;
}

async function set(ctx: CommandContext): Promise<number> {
  const cfg = await configModule();
  const key = stringArg(ctx, "key") ?? "";
  const valueText = stringArg(ctx, "value") ?? "";
  const project = await cfg.findProject(ctx.cwd);
  const written = await cfg.setWorkspaceValue(project, key, valueText);
  const loaded = await cfg.loadConfig({ cwd: ctx.cwd, env: ctx.env });
  const winner = loaded.sources.get(key);
  const shown = cfg.shownConfigValue(key, written.value);
  if (ctx.json) {
    ctx.out.json({
      key,
      value: shown as JsonValue,
      file: written.path,
      effective_source: winner ?? null,
    });
  } else {
    ctx.out.line(`${key} = ${showValue(shown)} written to ${written.path}`);
  }
  if (winner !== undefined && winner !== ".sdd/config.yaml") {
    ctx.out.warn({
      code: "config.shadowed",
      message: `${key} is also set by ${winner}, which takes precedence over .sdd/config.yaml`,
    });
  }
  return 0;
}

/**
 * A valid configuration naming a shared store must reach it: a missing, malformed, forbidden
 * or silent engine URL is the refusal (exit 2) `run` would meet, found before anything starts.
 */
async function storageRefusal(
  loaded: Awaited<ReturnType<Awaited<ReturnType<typeof configModule>>["loadConfig"]>>,
): Promise<BernsteinErrorType | undefined> {
  if (loaded.config === undefined || loaded.config.storage.backend === "memory") return undefined;
  const { BernsteinError } = await import("../errors/mod.ts");
  const { checkStorageReachable } = await import("../storage/mod.ts");
  try {
    await checkStorageReachable({ config: loaded.config, sources: loaded.sources });
    return undefined;
  } catch (error) {
    if (error instanceof BernsteinError) return error;
    throw error;
  }
}

async function validate(ctx: CommandContext): Promise<number> {
  const cfg = await configModule();
  const { certificationProblems, checkConfig, worktreesDirProblems } = await import(
    "../orchestrator/mod.ts"
  );
  const loaded = await cfg.loadConfig({ cwd: ctx.cwd, env: ctx.env });
  // What the schema cannot see (adapter names, endpoints, addresses, endpoint certification
  // receipts) is checked here too.
  const problems = loaded.config === undefined ? loaded.problems : [
    ...loaded.problems,
    ...checkConfig({ config: loaded.config, locate: loaded.locate }),
    ...await certificationProblems(loaded.config, loaded.locate, loaded.project.sdd, Date.now()),
    ...await worktreesDirProblems(loaded.config, loaded.project, loaded.locate),
  ];
  const errors = problems.filter((p) => p.severity === "error");
  const refusal = errors.length === 0 ? await storageRefusal(loaded) : undefined;
  if (refusal !== undefined) {
    if (!ctx.json) {
      // Every other problem still shows: the refusal is one more line, not the only one.
      for (const p of problems) ctx.out.warn(p);
      ctx.out.error(refusal);
      return refusal.exitCode;
    }
    ctx.out.json({
      ok: false,
      problems: [
        ...problems.map((p) => ({
          ...p,
          location: p.location ?? null,
          hint: p.hint ?? null,
        })),
        {
          severity: "error",
          code: refusal.code,
          message: refusal.message,
          location: refusal.location ?? null,
          hint: refusal.hint ?? null,
        },
      ],
      layers: loaded.sourceFiles.map((s) => ({
        label: s.label,
        path: s.path ?? null,
        present: s.present,
      })),
    });
    return refusal.exitCode;
  }
  const strict = booleanFlag(ctx, "strict");
  const failed = errors.length > 0 || (strict && problems.length > 0);
  if (ctx.json) {
    ctx.out.json({
      ok: !failed,
      problems: problems.map((p) => ({
        ...p,
        location: p.location ?? null,
        hint: p.hint ?? null,
      })),
      layers: loaded.sourceFiles.map((s) => ({
        label: s.label,
        path: s.path ?? null,
        present: s.present,
      })),
    });
    return failed ? 1 : 0;
  }
  for (const p of problems) {
    if (p.severity === "error") {
      ctx.out.error(new (await import("../errors/mod.ts")).BernsteinError(p.code, p.message, p));
    } else ctx.out.warn(p);
  }
  const warnings = problems.length - errors.length;
  const present = loaded.sourceFiles.filter((s) => s.present).map((s) => s.label);
  const counted = `${warnings} warning${warnings === 1 ? "" : "s"}`;
  ctx.out.line(
    errors.length > 0
      ? `configuration INVALID: ${errors.length} error${errors.length === 1 ? "" : "s"}, ${counted}`
      : failed
      ? `configuration NOT STRICT-CLEAN: ${counted} (--strict fails on any warning)`
      : `configuration OK (${counted}; layers: default${
        present.length ? ", " + present.join(", ") : ""
      })`,
  );
  return failed ? 1 : 0;
}

/** The `config` group. */
export const CONFIG_COMMANDS: CommandSpec[] = [
  {
    path: ["config", "get"],
    summary: "Show the effective value of a key and which layer set it.",
    description: "Layers, lowest first: default, .sdd/config.yaml, a plan's defaults,\n" +
      "bernstein.yaml, overlay, BERNSTEIN_CONFIG_OVERRIDE, BERNSTEIN_* variables, flags.\n" +
      "Fails like 'config validate' (exit 2) when any layer is broken.\n" +
      "JSON: {key, value, set, sources: {dotted key: layer}}.",
    args: [{ name: "key", required: true, help: "Dotted key, e.g. tuning.agent.max_turns." }],
    json: true,
    examples: ["bernstein config get lineage.strict", "bernstein config get tuning --json"],
    run: get,
  },
  {
    path: ["config", "set"],
    summary: "Set a key in .sdd/config.yaml (never the tracked bernstein.yaml).",
    description:
      "The value is read as YAML (8, true, [a, b], text) and validated before writing.\n" +
      "Warns when a higher layer still overrides the key.\n" +
      "JSON: {key, value, file, effective_source}.",
    args: [
      { name: "key", required: true, help: "Dotted key." },
      { name: "value", required: true, help: "New value (YAML)." },
    ],
    json: true,
    examples: ["bernstein config set tuning.agent.max_turns 50"],
    run: set,
  },
  {
    path: ["config", "list"],
    summary: "List every effective value with the layer that set it.",
    description: "Fails like 'config validate' (exit 2) when any layer is broken.\n" +
      "JSON: {values: [{key, value, source}], layers: [{label, path, present}], problems}.",
    json: true,
    run: list,
  },
  {
    path: ["config", "validate"],
    summary:
      "Check every layer and the storage URLs; exit 1 on errors, 2 if storage is unreachable.",
    description:
      "Warnings include config.not_implemented: a key that validates but has no effect yet\n" +
      "(the documented list in README's configuration reference). --strict fails on any warning.\n" +
      "With storage.backend postgres or redis, also connects to each engine URL: one that is\n" +
      "missing, malformed, outside the network grant or not answering is one error line naming\n" +
      "the key, the layer that set it and host:port, with exit 2 (what 'run' would refuse).\n" +
      "JSON: {ok, problems: [{severity, code, message, location, hint}], layers}.",
    flags: [{
      name: "strict",
      type: "boolean",
      help: "Exit 1 on any warning too (unknown or not-implemented keys, ignored values).",
    }],
    json: true,
    examples: ["bernstein config validate", "bernstein config validate --strict --json"],
    run: validate,
  },
];
