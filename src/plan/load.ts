import { basename, extname } from "node:path";
import { parseYamlLayer, readConfigFile, TOP_LEVEL_KEYS } from "../config/mod.ts";
import { closestMatch } from "../errors/mod.ts";
import { PlanLoadError, type PlanProblem } from "./errors.ts";
import { type FieldPath, FieldReader, type Locator, sortByLocation } from "./_reader.ts";
import { readStepFields, STEP_KEY_ALIASES, STEP_KEYS } from "./_step_fields.ts";
import type { PlanGraph, PlanStage, PlanStep } from "./types.ts";

/** Keys of a plan file. */
export const PLAN_KEYS: readonly string[] = ["name", "description", "cli", "max_agents", "stages"];
const PLAN_KEY_ALIASES: Readonly<Record<string, string>> = {
  steps: "stages",
  tasks: "stages",
  phases: "stages",
  title: "name",
  adapter: "cli",
  agents: "max_agents",
  parallelism: "max_agents",
};
/** Keys of a stage. */
export const STAGE_KEYS: readonly string[] = ["name", "depends_on", "steps"];
const STAGE_KEY_ALIASES: Readonly<Record<string, string>> = {
  depends: "depends_on",
  deps: "depends_on",
  needs: "depends_on",
  after: "depends_on",
  tasks: "steps",
  title: "name",
};

/** Options of {@linkcode checkPlan} and {@linkcode parsePlan}. */
export interface PlanLoadOptions {
  /** File name shown in locations (default `plan.yaml`); also the default plan name. */
  file?: string;
  /** Adapter names the run knows; when given, an unknown `cli` is an error. */
  knownClis?: readonly string[];
}

/** Every problem of a plan, and the graph when there is no error. */
export interface PlanCheck {
  /** The graph, present only when no problem is an error. */
  graph?: PlanGraph;
  /** Errors and warnings in document order. */
  problems: PlanProblem[];
}

/** Lowercase ASCII slug of a title, for step ids (`Add the API!` → `add-the-api`). */
export function slugify(title: string, maxLength = 40): string {
  const ascii = title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  const slug = ascii.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  const cut = slug.slice(0, maxLength).replace(/-+$/g, "");
  return cut === "" ? "step" : cut;
}

/** The id of the `stepIndex`-th step of the `stageIndex`-th stage (both 0-based). */
export function stepId(stageIndex: number, stepIndex: number, title: string): string {
  return `${stageIndex + 1}.${stepIndex + 1}-${slugify(title)}`;
}

// Top-level keys only a bernstein.yaml has: a plan carrying them was mixed up with the config.
const CONFIG_ONLY_KEYS = TOP_LEVEL_KEYS.filter((k) => !PLAN_KEYS.includes(k));

function looksLikeConfig(raw: Record<string, unknown>): string[] {
  if ("stages" in raw) return [];
  return Object.keys(raw).filter((k) => CONFIG_ONLY_KEYS.includes(k));
}

function checkCli(
  reader: FieldReader,
  cli: string | undefined,
  path: FieldPath,
  known: readonly string[] | undefined,
): void {
  if (cli === undefined || known === undefined || known.includes(cli)) return;
  const near = closestMatch(cli, known);
  reader.problem(path, "plan.unknown_cli", `unknown cli '${cli}'; known: ${known.join(", ")}`, {
    hint: near ? `did you mean '${near}'?` : undefined,
  });
}

/** Finds dependency cycles among stages; each is returned once, starting at its first stage. */
function findCycles(names: readonly string[], deps: readonly (readonly string[])[]): number[][] {
  const index = new Map(names.map((n, i) => [n, i]));
  const state = names.map(() => 0); // 0 new, 1 on stack, 2 done
  const stack: number[] = [];
  const cycles: number[][] = [];
  const seen = new Set<string>();
  function visit(i: number): void {
    state[i] = 1;
    stack.push(i);
    for (const d of deps[i]) {
      const j = index.get(d);
      if (j === undefined) continue;
      if (state[j] === 1) {
        const cycle = stack.slice(stack.indexOf(j));
        const start = cycle.indexOf(Math.min(...cycle));
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        const key = rotated.join(",");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(rotated);
        }
      } else if (state[j] === 0) {
        visit(j);
      }
    }
    stack.pop();
    state[i] = 2;
  }
  names.forEach((_, i) => state[i] === 0 && visit(i));
  return cycles;
}

interface RawStage {
  index: number;
  name?: string;
  depends: string[];
  steps: { index: number; fields: ReturnType<typeof readStepFields>; path: FieldPath }[];
}

function readStages(
  reader: FieldReader,
  raw: Record<string, unknown>,
  options: PlanLoadOptions,
): RawStage[] {
  const value = raw.stages;
  if (value === undefined || value === null) {
    reader.problem(["stages"], "plan.missing_field", "'stages' is required", {
      hint: "a plan is 'stages:' — a list of {name, depends_on, steps}",
    });
    return [];
  }
  if (!Array.isArray(value)) {
    reader.problem(
      ["stages"],
      "plan.invalid_type",
      `must be a list of stages, got a ${typeof value === "object" ? "mapping" : typeof value}`,
    );
    return [];
  }
  if (value.length === 0) {
    reader.problem(["stages"], "plan.invalid_value", "a plan needs at least one stage");
    return [];
  }
  const stages: RawStage[] = [];
  value.forEach((item, i) => {
    const path: FieldPath = ["stages", i];
    const obj = reader.mapping(
      item,
      path,
      STAGE_KEYS,
      STAGE_KEY_ALIASES,
      "a stage {name, depends_on, steps}",
    );
    if (obj === undefined) return;
    const name = reader.string(obj, "name", path, { required: true });
    const depends = reader.stringList(obj, "depends_on", path, { what: "stage names" });
    const stage: RawStage = { index: i, name, depends, steps: [] };
    stages.push(stage);
    const steps = obj.steps;
    if (steps === undefined || steps === null) {
      reader.problem(
        [...path, "steps"],
        "plan.missing_field",
        "'steps' is required (a stage needs at least one step)",
      );
      return;
    }
    if (!Array.isArray(steps)) {
      reader.problem([...path, "steps"], "plan.invalid_type", "must be a list of steps");
      return;
    }
    if (steps.length === 0) {
      reader.problem([...path, "steps"], "plan.invalid_value", "a stage needs at least one step");
      return;
    }
    steps.forEach((s, j) => {
      const stepPath: FieldPath = [...path, "steps", j];
      const stepObj = reader.mapping(s, stepPath, STEP_KEYS, STEP_KEY_ALIASES, "a step {title, …}");
      if (stepObj === undefined) return;
      const fields = readStepFields(reader, stepObj, stepPath);
      checkCli(reader, fields?.cli, [...stepPath, "cli"], options.knownClis);
      stage.steps.push({ index: j, fields, path: stepPath });
    });
  });
  return stages;
}

function checkStageGraph(reader: FieldReader, stages: readonly RawStage[]): void {
  const firstByName = new Map<string, number>();
  for (const s of stages) {
    if (s.name === undefined) continue;
    const first = firstByName.get(s.name);
    if (first !== undefined) {
      reader.problem(
        ["stages", s.index, "name"],
        "plan.duplicate_stage",
        `duplicate stage name '${s.name}' (first at stages[${first}])`,
      );
    } else firstByName.set(s.name, s.index);
  }
  const known = [...firstByName.keys()];
  for (const s of stages) {
    s.depends.forEach((d, j) => {
      if (firstByName.has(d)) return;
      const near = closestMatch(d, known);
      reader.problem(
        ["stages", s.index, "depends_on", j],
        "plan.unknown_stage",
        `unknown stage '${d}'${known.length ? `; stages: ${known.join(", ")}` : ""}`,
        {
          hint: near ? `did you mean '${near}'?` : undefined,
        },
      );
    });
  }
  const named = stages.filter((s) => s.name !== undefined && firstByName.get(s.name) === s.index);
  const cycles = findCycles(named.map((s) => s.name as string), named.map((s) => s.depends));
  for (const cycle of cycles) {
    const members = cycle.map((k) => named[k]);
    const loop = [...members, members[0]].map((s) => s.name).join(" → ");
    reader.problem(
      ["stages", members[0].index, "depends_on"],
      "plan.dependency_cycle",
      `stages form a cycle: ${loop}`,
    );
  }
}

function buildGraph(
  stages: readonly RawStage[],
  meta: { name: string; description: string; cli?: string; max_agents?: number; source: string },
  locate: Locator,
): PlanGraph {
  const idsByStage = new Map<string, string[]>();
  const steps: PlanStep[] = [];
  const outStages: PlanStage[] = [];
  for (const s of stages) {
    const ids = s.steps.map((st) => stepId(s.index, st.index, st.fields?.title ?? ""));
    idsByStage.set(s.name as string, ids);
    outStages.push({ name: s.name as string, depends_on: [...s.depends], step_ids: ids });
  }
  for (const s of stages) {
    const deps: string[] = [];
    const stageDeps = new Set(s.depends);
    // Dependencies listed in plan order, whatever order depends_on names them in.
    for (const other of stages) {
      if (stageDeps.has(other.name as string)) {
        deps.push(...(idsByStage.get(other.name as string) ?? []));
      }
    }
    s.steps.forEach((st, k) => {
      const fields = st.fields as NonNullable<typeof st.fields>;
      steps.push({
        id: (idsByStage.get(s.name as string) as string[])[k],
        stage: s.name as string,
        ...fields,
        depends_on: [...deps],
        field: `stages[${s.index}].steps[${st.index}]`,
        location: locate(st.path) ?? meta.source,
      });
    });
  }
  return {
    name: meta.name,
    description: meta.description,
    source: meta.source,
    ...(meta.cli !== undefined ? { cli: meta.cli } : {}),
    ...(meta.max_agents !== undefined ? { max_agents: meta.max_agents } : {}),
    stages: outStages,
    steps,
  };
}

/**
 * Checks plan YAML text and builds its graph: every problem is collected (syntax, types,
 * unknown keys with suggestions, enums with their accepted values, unknown stages, cycles,
 * unsafe paths), each naming `file:line:col` and the field path. Pure: no I/O.
 *
 * @example
 * ```ts
 * const { graph, problems } = checkPlan(text, { file: "plan.yaml" });
 * ```
 */
export function checkPlan(text: string, options: PlanLoadOptions = {}): PlanCheck {
  const file = options.file ?? "plan.yaml";
  const parsed = parseYamlLayer(text, file, file);
  // The YAML helper is shared with the configuration; its codes name that family.
  const syntax: PlanProblem[] = parsed.problems.map((p) => ({
    ...p,
    code: p.code.replace(/^config\./, "plan."),
    message: p.code === "config.not_a_mapping"
      ? "a plan must be a mapping with 'stages:' (and optionally name, description, cli, max_agents)"
      : p.message,
  }));
  if (syntax.length > 0) return { problems: syntax };
  const { raw, locate } = parsed.layer;
  const reader = new FieldReader(locate, file);
  const configKeys = looksLikeConfig(raw);
  if (configKeys.length > 0) {
    reader.problem(
      [configKeys[0]],
      "plan.looks_like_config",
      `this looks like a bernstein.yaml (project configuration: ${
        configKeys.join(", ")
      }), not a plan file`,
      {
        key: true,
        shown: [],
        hint:
          "a plan lists 'stages:' with 'steps:' (see fixtures/plans/example.yaml); pass the plan file to 'bernstein run PLAN.yaml' and keep settings in bernstein.yaml",
      },
    );
    return { problems: reader.problems };
  }
  reader.mapping(raw, [], PLAN_KEYS, PLAN_KEY_ALIASES);
  const name = reader.string(raw, "name", []) ?? basename(file, extname(file));
  let description = "";
  if (typeof raw.description === "string") description = raw.description;
  else if (raw.description !== undefined && raw.description !== null) {
    reader.problem(["description"], "plan.invalid_type", "expected a string");
  }
  const cli = reader.string(raw, "cli", []);
  checkCli(reader, cli, ["cli"], options.knownClis);
  const max_agents = reader.positiveInt(raw, "max_agents", []);
  const stages = readStages(reader, raw, options);
  checkStageGraph(reader, stages);
  const problems = sortByLocation(reader.problems);
  if (problems.some((p) => p.severity === "error")) return { problems };
  const graph = buildGraph(stages, { name, description, cli, max_agents, source: file }, locate);
  return { graph, problems };
}

/** Like {@linkcode checkPlan}, but throws a {@linkcode PlanLoadError} carrying every problem. */
export function parsePlan(text: string, options: PlanLoadOptions = {}): PlanGraph {
  const result = checkPlan(text, options);
  if (result.graph === undefined) throw new PlanLoadError(result.problems);
  return result.graph;
}

/**
 * Reads and loads a plan file. `shownAs` is the name used in locations (default: the path
 * as given). A missing or unreadable file is a {@linkcode PlanLoadError} too.
 */
export async function readPlanFile(
  path: string,
  options: PlanLoadOptions & { shownAs?: string } = {},
): Promise<PlanCheck> {
  const file = options.shownAs ?? options.file ?? path;
  const unreadable = (reason: string) =>
    new PlanLoadError([{
      severity: "error",
      code: "plan.unreadable",
      message: `cannot read the plan: ${reason}`,
      location: file,
    }]);
  let read;
  try {
    read = await readConfigFile(path, file);
  } catch (error) {
    throw unreadable((error as Error).message);
  }
  if (read === undefined) throw unreadable("no such file");
  if ("problem" in read) {
    // Size cap and strict UTF-8 are shared with configuration files; the code names plans.
    throw new PlanLoadError([{
      ...read.problem,
      code: read.problem.code.replace(/^config\./, "plan."),
    }]);
  }
  return checkPlan(read.text, { ...options, file });
}

/** Reads a plan file and returns its graph, or throws a {@linkcode PlanLoadError}. */
export async function loadPlanFile(
  path: string,
  options: PlanLoadOptions & { shownAs?: string } = {},
): Promise<PlanGraph> {
  const result = await readPlanFile(path, options);
  if (result.graph === undefined) throw new PlanLoadError(result.problems);
  return result.graph;
}
