import { join, relative, resolve } from "node:path";
import type { EnvReader } from "../io/mod.ts";
import { ConfigError, type ConfigProblem } from "./errors.ts";
import { findProject, isWithin, type ProjectPaths } from "./project.ts";
import { resolveConfig, type ResolvedConfig } from "./resolve.ts";
import type { Config } from "./schema.ts";
import { parseYamlLayer, type YamlLayer } from "./yaml_layer.ts";

/** Name of the default overlay file inside the git directory (git never tracks it). */
export const DEFAULT_OVERLAY_NAME = "bernstein-overlay.yaml";

/** Options for {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /** Directory to start the project search from. */
  cwd: string;
  /** Environment (overlay variables and individual overrides). */
  env: EnvReader;
  /** CLI flag values, the highest layer. */
  flags?: Record<string, unknown>;
}

/** One configuration source considered during loading. */
export interface ConfigSourceFile {
  /** Provenance label. */
  label: string;
  /** File path, for file layers. */
  path?: string;
  /** Whether the source existed. */
  present: boolean;
}

/** The effective configuration of a project. */
export interface LoadedConfig extends ResolvedConfig {
  /** Project paths. */
  project: ProjectPaths;
  /** Every source, present or not, lowest precedence first. */
  sourceFiles: ConfigSourceFile[];
}

async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new ConfigError("config.unreadable", `cannot read ${path}: ${(error as Error).message}`);
  }
}

async function fileLayer(
  path: string,
  label: string,
  shown: string,
  sources: ConfigSourceFile[],
  problems: ConfigProblem[],
): Promise<YamlLayer | undefined> {
  const text = await readTextIfExists(path);
  sources.push({ label, path, present: text !== undefined });
  if (text === undefined) return undefined;
  const parsed = parseYamlLayer(text, label, shown);
  problems.push(...parsed.problems);
  return parsed.layer;
}

/** The overlay file to use: `$BERNSTEIN_CONFIG_OVERLAY`, else the default inside `.git/`. */
export function overlayPath(
  project: ProjectPaths,
  env: EnvReader,
  cwd: string,
): { path?: string; explicit: boolean } {
  const fromEnv = env.get("BERNSTEIN_CONFIG_OVERLAY");
  if (fromEnv !== undefined && fromEnv !== "") {
    const path = resolve(cwd, fromEnv);
    const inGit = project.gitDir !== undefined && isWithin(project.gitDir, path);
    if (isWithin(project.root, path) && !inGit) {
      throw new ConfigError(
        "config.overlay_in_worktree",
        `BERNSTEIN_CONFIG_OVERLAY=${fromEnv} is inside the work tree, where git would see it`,
        {
          hint:
            `put it outside ${project.root}, or inside .git/ (default: .git/${DEFAULT_OVERLAY_NAME})`,
        },
      );
    }
    return { path, explicit: true };
  }
  return {
    path: project.gitDir ? join(project.gitDir, DEFAULT_OVERLAY_NAME) : undefined,
    explicit: false,
  };
}

/**
 * Loads every layer of a project's configuration, lowest first: defaults, `.sdd/config.yaml`,
 * `bernstein.yaml`, the overlay file, `BERNSTEIN_CONFIG_OVERRIDE`, individual `BERNSTEIN_*`
 * variables, flags.
 *
 * @example
 * ```ts
 * const loaded = await loadConfig({ cwd: Deno.cwd(), env: processEnv });
 * loaded.config?.max_agents;
 * ```
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const project = await findProject(options.cwd);
  const shown = (p: string) => relative(options.cwd, p) || p;
  const sourceFiles: ConfigSourceFile[] = [];
  const problems: ConfigProblem[] = [];
  const layers: YamlLayer[] = [];
  const add = (layer: YamlLayer | undefined) => layer && layers.push(layer);

  const workspacePath = join(project.sdd, "config.yaml");
  add(
    await fileLayer(workspacePath, ".sdd/config.yaml", shown(workspacePath), sourceFiles, problems),
  );
  const projectPath = join(project.root, "bernstein.yaml");
  const ymlPath = join(project.root, "bernstein.yml");
  const chosen = (await readTextIfExists(projectPath)) !== undefined ? projectPath : ymlPath;
  add(await fileLayer(chosen, "bernstein.yaml", shown(chosen), sourceFiles, problems));

  const overlay = overlayPath(project, options.env, options.cwd);
  if (overlay.path !== undefined) {
    const layer = await fileLayer(overlay.path, "overlay", overlay.path, sourceFiles, problems);
    if (layer === undefined && overlay.explicit) {
      throw new ConfigError(
        "config.overlay_missing",
        `BERNSTEIN_CONFIG_OVERLAY=${overlay.path} does not exist`,
      );
    }
    add(layer);
  }
  const inline = options.env.get("BERNSTEIN_CONFIG_OVERRIDE");
  sourceFiles.push({
    label: "BERNSTEIN_CONFIG_OVERRIDE",
    present: inline !== undefined && inline !== "",
  });
  if (inline !== undefined && inline !== "") {
    const parsed = parseYamlLayer(inline, "BERNSTEIN_CONFIG_OVERRIDE");
    problems.push(...parsed.problems);
    layers.push(parsed.layer);
  }
  const resolved = resolveConfig({ layers, env: options.env, flags: options.flags });
  return { ...resolved, problems: [...problems, ...resolved.problems], project, sourceFiles };
}

/**
 * Loads the configuration for a command that needs a valid one: throws the first error
 * (with a count of the others) and returns the warnings for the caller to print.
 */
export async function requireConfig(
  options: LoadConfigOptions,
): Promise<{ config: Config; warnings: ConfigProblem[]; loaded: LoadedConfig }> {
  const loaded = await loadConfig(options);
  const errors = loaded.problems.filter((p) => p.severity === "error");
  if (errors.length > 0 || loaded.config === undefined) {
    const first = errors[0];
    const more = errors.length > 1
      ? ` (and ${errors.length - 1} more; run 'bernstein config validate')`
      : "";
    throw new ConfigError(
      first?.code ?? "config.invalid",
      (first?.message ?? "invalid configuration") + more,
      {
        location: first?.location,
      },
    );
  }
  return {
    config: loaded.config,
    warnings: loaded.problems.filter((p) => p.severity === "warning"),
    loaded,
  };
}
