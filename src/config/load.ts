// Loads a project's configuration from its layers, lowest first (defaults, `.sdd/config.yaml`,
// the active context, plan defaults, bernstein.yaml, the overlay, `BERNSTEIN_CONFIG_OVERRIDE`,
// `BERNSTEIN_*` variables, flags), naming each key's source.

import { join, relative, resolve } from "node:path";
import type { EnvReader } from "../io/mod.ts";
import { activeContextLayer } from "./context_layer.ts";
import { ConfigError, type ConfigProblem } from "./errors.ts";
import { findProject, isWithin, type ProjectPaths } from "./project.ts";
import { resolveConfig, type ResolvedConfig } from "./resolve.ts";
import type { Config } from "./schema.ts";
import { decodeConfigBytes, readConfigFile } from "./read_text.ts";
import { PROJECT_CONFIG_FILES } from "./run_config_paths.ts";
import { objectLayer, parseYamlLayer, type YamlLayer } from "./yaml_layer.ts";
import { sddFile } from "../io/mod.ts";

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
  /** A plan file's defaults (`cli`, `max_agents`): above .sdd/config.yaml, below bernstein.yaml. */
  planDefaults?: { file: string; values: Record<string, unknown> };
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
  /** The active operating context, or null (docs/FLEET.md). */
  context: { name: string; settings_hash: string } | null;
}

async function fileLayer(
  path: string,
  label: string,
  shown: string,
  sources: ConfigSourceFile[],
  problems: ConfigProblem[],
): Promise<YamlLayer | undefined> {
  const read = await readConfigFile(path, shown);
  sources.push({ label, path, present: read !== undefined });
  if (read === undefined) return undefined;
  if ("problem" in read) {
    problems.push(read.problem);
    return undefined;
  }
  const parsed = parseYamlLayer(read.text, label, shown);
  problems.push(...parsed.problems);
  return parsed.layer;
}

/**
 * The project configuration file of a project (absolute), if any: exactly one of
 * {@linkcode PROJECT_CONFIG_FILES} may exist; two are refused by name, so nobody edits a
 * file that is not the one being read.
 */
export async function projectConfigFile(root: string): Promise<string | undefined> {
  const present: string[] = [];
  for (const rel of PROJECT_CONFIG_FILES) {
    const exists = await Deno.lstat(join(root, rel)).then(() => true, () => false);
    if (exists) present.push(rel);
  }
  if (present.length > 1) {
    throw new ConfigError(
      "config.ambiguous_project_file",
      `${present.join(" and ")} are both present; bernstein reads exactly one project ` +
        "configuration file",
      { location: join(root, present[1]), hint: `merge them into ${present[0]}` },
    );
  }
  return present.length === 1 ? join(root, present[0]) : undefined;
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
 * the active operating context (`context:<name>`), a plan file's defaults, the project file (`bernstein.yaml`, see
 * {@linkcode PROJECT_CONFIG_FILES}), the overlay file, `BERNSTEIN_CONFIG_OVERRIDE`, individual
 * `BERNSTEIN_*` variables, flags.
 *
 * @example
 * ```ts ignore
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

  const workspacePath = sddFile(project.sdd, "config");
  add(
    await fileLayer(workspacePath, ".sdd/config.yaml", shown(workspacePath), sourceFiles, problems),
  );
  // The active operating context (`bernstein ctx use`): between the workspace file and the rest.
  const context = await activeContextLayer(project.sdd);
  if (context !== undefined) {
    sourceFiles.push({
      label: context.layer.label,
      path: context.layer.locate([]),
      present: true,
    });
    add(context.layer);
  }
  if (options.planDefaults !== undefined) {
    const plan = options.planDefaults;
    sourceFiles.push({ label: "plan", path: plan.file, present: true });
    add({ ...objectLayer("plan", plan.values), locate: () => plan.file });
  }
  const chosen = await projectConfigFile(project.root) ??
    join(project.root, PROJECT_CONFIG_FILES[0]);
  const projectLabel = relative(project.root, chosen);
  add(await fileLayer(chosen, projectLabel, shown(chosen), sourceFiles, problems));

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
    const bytes = new TextEncoder().encode(inline);
    const checked = decodeConfigBytes(bytes, "BERNSTEIN_CONFIG_OVERRIDE");
    if ("problem" in checked) problems.push(checked.problem);
    else {
      const parsed = parseYamlLayer(inline, "BERNSTEIN_CONFIG_OVERRIDE");
      problems.push(...parsed.problems);
      layers.push(parsed.layer);
    }
  }
  const resolved = resolveConfig({
    layers,
    env: options.env,
    flags: options.flags,
    readProblems: problems,
  });
  return {
    ...resolved,
    project,
    sourceFiles,
    context: context === undefined
      ? null
      : { name: context.context.name, settings_hash: context.context.settings_hash },
  };
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
