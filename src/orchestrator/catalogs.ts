/**
 * Agent catalogs (`catalogs:`): folders of agent definitions, each a role with an optional
 * adapter, model and prompt preamble. A definition is a Markdown file with YAML front matter
 * (`name`, `description`, optional `role`, `cli`, `model`, `tools`; the body is the preamble)
 * or, in a `generic` catalog, a YAML file (`role` or `name`, `cli`, `model`, `prompt`).
 * Catalogs merge by `priority` (higher wins a role; equal: the one listed first); a run uses a
 * role's winning definition below `role_model_policy` (which always wins) and its preamble in
 * place of the built-in role template. `bernstein agents list` shows the merge. Malformed files
 * are reported with their path, never skipped silently.
 */
import { extname, isAbsolute, join, relative } from "node:path";
import { ADAPTER_NAMES } from "../adapters/mod.ts";
import { type Config, type ConfigProblem, parseYamlLayer, readConfigFile } from "../config/mod.ts";

/** One agent definition of a catalog. */
export interface CatalogAgent {
  /** Role it serves. */
  role: string;
  /** Display name. */
  name: string;
  /** What it is for. */
  description: string;
  /** Adapter, when the definition names one. */
  cli?: string;
  /** Model, when the definition names one. */
  model?: string;
  /** Preferred tools, appended to the preamble as a hint. */
  tools: string[];
  /** Prompt preamble (replaces the built-in role template). */
  prompt: string;
  /** Catalog it came from. */
  catalog: string;
  /** That catalog's priority. */
  priority: number;
  /** File, relative to the project root when inside it. */
  path: string;
}

/** The merged catalogs of a project. */
export interface CatalogSet {
  /** One definition per role: the winner. */
  agents: CatalogAgent[];
  /** Definitions that lost their role to a higher (or earlier) catalog. */
  shadowed: CatalogAgent[];
  /** Malformed files, unknown adapters, missing folders, sources not supported. */
  problems: ConfigProblem[];
}

type CatalogEntry = NonNullable<Config["catalogs"]>[number];

const DEFAULT_PRIORITY = 50;
const MAX_FILES = 2000;

/** A role name from a display name: `Security Reviewer` → `security-reviewer`. */
function roleOf(name: string): string {
  return name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "agent";
}

function optionalString(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

function problem(path: string, message: string, severity: "error" | "warning" = "warning") {
  return { severity, code: "catalog.invalid", message, location: path } as ConfigProblem;
}

/** The definition in a file's text, or the problem with it. Pure. */
export function parseAgentDefinition(
  text: string,
  path: string,
  catalog: { name: string; priority: number },
): { agent?: CatalogAgent; problem?: ConfigProblem } {
  let fields: Record<string, unknown>;
  let body = "";
  const markdown = extname(path).toLowerCase() === ".md";
  if (markdown) {
    const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
    if (m === null) return { problem: problem(path, "no front matter (--- … ---) at the top") };
    const parsed = parseYamlLayer(m[1], "catalog", path);
    if (parsed.problems.length > 0) return { problem: parsed.problems[0] };
    fields = parsed.layer.raw;
    body = m[2].trim();
  } else {
    const parsed = parseYamlLayer(text, "catalog", path);
    if (parsed.problems.length > 0) return { problem: parsed.problems[0] };
    fields = parsed.layer.raw;
    body = optionalString(fields.prompt) ?? "";
  }
  const name = optionalString(fields.name) ?? optionalString(fields.role);
  if (name === undefined) return { problem: problem(path, "needs a 'name' (or 'role')") };
  const tools = fields.tools ?? [];
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== "string")) {
    return { problem: problem(path, "'tools' must be a list of strings") };
  }
  if (markdown && body === "") return { problem: problem(path, "the body (the prompt) is empty") };
  const cli = optionalString(fields.cli);
  if (cli !== undefined && !ADAPTER_NAMES.includes(cli)) {
    return {
      problem: problem(
        path,
        `cli: unknown adapter '${cli}'; known: ${ADAPTER_NAMES.join(", ")}`,
        "error",
      ),
    };
  }
  return {
    agent: {
      role: optionalString(fields.role) ?? roleOf(name),
      name,
      description: optionalString(fields.description) ?? "",
      ...(cli ? { cli } : {}),
      ...(optionalString(fields.model) ? { model: optionalString(fields.model) } : {}),
      tools: tools as string[],
      prompt: body,
      catalog: catalog.name,
      priority: catalog.priority,
      path,
    },
  };
}

async function walk(dir: string, out: string[], depth = 0): Promise<void> {
  if (depth > 8 || out.length >= MAX_FILES) return;
  let entries: Deno.DirEntry[];
  try {
    entries = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory) await walk(path, out, depth + 1);
    else if (e.isFile) out.push(path);
  }
}

/** The definition files of one catalog, in a stable order. */
async function filesOf(entry: CatalogEntry, base: string): Promise<string[]> {
  if (entry.source_kind === "file") return [base];
  const all: string[] = [];
  await walk(base, all);
  const rel = (p: string) => relative(base, p).split("\\").join("/");
  switch (entry.type) {
    case "plugin":
      return all.filter((p) =>
        /^(\.claude\/agents\/[^/]+|plugins\/[^/]+\/agents\/[^/]+)\.md$/.test(rel(p))
      );
    case "agency":
      return all.filter((p) => p.endsWith(".md") && !/(^|\/)README\.md$/i.test(rel(p)));
    case "generic":
      return all.filter((p) => /\.(md|ya?ml)$/i.test(p) && !/(^|\/)README\.md$/i.test(rel(p)));
  }
}

/** Loads one catalog's definitions (and its problems). */
async function loadCatalog(
  root: string,
  entry: CatalogEntry,
): Promise<{ agents: CatalogAgent[]; problems: ConfigProblem[] }> {
  const problems: ConfigProblem[] = [];
  const catalog = { name: entry.name, priority: entry.priority ?? DEFAULT_PRIORITY };
  if (entry.source_kind !== undefined && !["file", "directory"].includes(entry.source_kind)) {
    problems.push(problem(
      `catalogs.${entry.name}`,
      `source_kind '${entry.source_kind}' is not supported yet (only file and directory); ` +
        "this catalog contributes no agent",
    ));
    return { agents: [], problems };
  }
  const base = isAbsolute(entry.path) ? entry.path : join(root, entry.path);
  const exists = await Deno.stat(base).then(() => true, () => false);
  if (!exists) {
    problems.push(problem(`catalogs.${entry.name}`, `path ${entry.path} does not exist`));
    return { agents: [], problems };
  }
  const agents: CatalogAgent[] = [];
  for (const file of await filesOf(entry, base)) {
    const shown = relative(root, file).startsWith("..") ? file : relative(root, file);
    const read = await readConfigFile(file, shown);
    if (read === undefined) continue;
    if ("problem" in read) {
      problems.push({ ...read.problem, severity: "warning" });
      continue;
    }
    const parsed = parseAgentDefinition(read.text, shown, catalog);
    if (parsed.problem) problems.push(parsed.problem);
    if (parsed.agent) agents.push(parsed.agent);
  }
  if (agents.length === 0 && problems.length === 0) {
    problems.push(
      problem(`catalogs.${entry.name}`, `no agent definition found under ${entry.path}`),
    );
  }
  return { agents, problems };
}

/**
 * Loads and merges the project's enabled catalogs: higher `priority` first (default 50), then
 * the order they are listed; within a catalog, file-name order.
 */
export async function loadCatalogs(
  root: string,
  catalogs: Config["catalogs"],
): Promise<CatalogSet> {
  const enabled = (catalogs ?? []).map((c, i) => ({ c, i })).filter(({ c }) => c.enabled !== false)
    .sort((a, b) =>
      (b.c.priority ?? DEFAULT_PRIORITY) - (a.c.priority ?? DEFAULT_PRIORITY) || a.i - b.i
    );
  const set: CatalogSet = { agents: [], shadowed: [], problems: [] };
  const taken = new Set<string>();
  for (const { c } of enabled) {
    const loaded = await loadCatalog(root, c);
    set.problems.push(...loaded.problems);
    for (const agent of loaded.agents) {
      if (taken.has(agent.role)) set.shadowed.push(agent);
      else {
        taken.add(agent.role);
        set.agents.push(agent);
      }
    }
  }
  return set;
}

/**
 * The configuration with catalog roles filled in below `role_model_policy`: a role's own
 * policy `cli` / `model` win; a catalog fills what the policy leaves unset.
 */
export function withCatalogRoles(config: Config, set: CatalogSet): Config {
  const policy = { ...(config.role_model_policy ?? {}) };
  for (const agent of set.agents) {
    const own = policy[agent.role] ?? {};
    const cli = own.cli ?? agent.cli;
    const model = own.model ?? agent.model;
    policy[agent.role] = { ...own, ...(cli ? { cli } : {}), ...(model ? { model } : {}) };
  }
  return { ...config, role_model_policy: policy };
}

/** The prompt preamble of a catalog agent: its body, then its preferred tools. */
export function catalogPreamble(agent: CatalogAgent): string {
  const tools = agent.tools.length > 0 ? `\n\nPreferred tools: ${agent.tools.join(", ")}.` : "";
  return agent.prompt + tools;
}
