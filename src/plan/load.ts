// Loads and checks a plan file (YAML): stages, steps, dependencies and their conditions, owned
// files, attachments; every problem is reported with its FILE:LINE:COL.

import { basename, extname } from "node:path";
import { fileProblemAs, parseYamlLayer, readConfigFile, TOP_LEVEL_KEYS } from "../config/mod.ts";
import { closestMatch } from "../errors/mod.ts";
import { PlanLoadError, type PlanProblem } from "./errors.ts";
import { type FieldPath, FieldReader, type Locator, sortByLocation } from "./_reader.ts";
import { readStepFields, STEP_KEY_ALIASES, STEP_KEYS } from "./_step_fields.ts";
import { type RawDependency, readDependencies } from "./_dependencies.ts";
import type { PlanGraph, PlanStage, PlanStep, StepCondition } from "./types.ts";

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
/** Keys of a plan step: the shared step fields and its own `depends_on`. */
export const PLAN_STEP_KEYS: readonly string[] = [...STEP_KEYS, "depends_on"];
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

interface RawStep {
  index: number;
  fields: ReturnType<typeof readStepFields>;
  path: FieldPath;
  /** Its own `depends_on` entries. */
  deps: RawDependency[];
}

interface RawStage {
  index: number;
  name?: string;
  /** Plain stage dependencies (names). */
  depends: string[];
  /** Its conditional stage dependency, if any. */
  conditional?: RawDependency;
  /** Every `depends_on` entry, plain and conditional. */
  entries: RawDependency[];
  steps: RawStep[];
}

function readStages(
  reader: FieldReader,
  raw: Record<string, unknown>,
  options: PlanLoadOptions,
): RawStage[] {
  const stages: RawStage[] = [];
  stageList(reader, raw.stages).forEach((item, i) => {
    const stage = readStage(reader, item, i, options);
    if (stage !== undefined) stages.push(stage);
  });
  return stages;
}

/** The `stages:` list (empty, with a problem, when it is missing, not a list or empty). */
function stageList(reader: FieldReader, value: unknown): readonly unknown[] {
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
  }
  return value;
}

/** One stage: its name, dependencies and steps (undefined when it is not a mapping). */
function readStage(
  reader: FieldReader,
  item: unknown,
  i: number,
  options: PlanLoadOptions,
): RawStage | undefined {
  const path: FieldPath = ["stages", i];
  const obj = reader.mapping(
    item,
    path,
    STAGE_KEYS,
    STAGE_KEY_ALIASES,
    "a stage {name, depends_on, steps}",
  );
  if (obj === undefined) return undefined;
  const name = reader.string(obj, "name", path, { required: true });
  const entries = readDependencies(reader, obj, path, "stage");
  return {
    index: i,
    name,
    depends: entries.filter((d) => d.condition === undefined).map((d) => d.ref),
    conditional: entries.find((d) => d.condition !== undefined),
    entries,
    steps: readStageSteps(reader, obj.steps, path, options),
  };
}

/** A stage's steps (empty, with a problem, when they are missing, not a list or empty). */
function readStageSteps(
  reader: FieldReader,
  steps: unknown,
  path: FieldPath,
  options: PlanLoadOptions,
): RawStep[] {
  if (steps === undefined || steps === null) {
    reader.problem(
      [...path, "steps"],
      "plan.missing_field",
      "'steps' is required (a stage needs at least one step)",
    );
    return [];
  }
  if (!Array.isArray(steps)) {
    reader.problem([...path, "steps"], "plan.invalid_type", "must be a list of steps");
    return [];
  }
  if (steps.length === 0) {
    reader.problem([...path, "steps"], "plan.invalid_value", "a stage needs at least one step");
    return [];
  }
  const out: RawStep[] = [];
  steps.forEach((s, j) => {
    const stepPath: FieldPath = [...path, "steps", j];
    const stepObj = reader.mapping(
      s,
      stepPath,
      PLAN_STEP_KEYS,
      STEP_KEY_ALIASES,
      "a step {title, …}",
    );
    if (stepObj === undefined) return;
    const fields = readStepFields(reader, stepObj, stepPath);
    checkCli(reader, fields?.cli, [...stepPath, "cli"], options.knownClis);
    const deps = readDependencies(reader, stepObj, stepPath, "step");
    out.push({ index: j, fields, path: stepPath, deps });
  });
  return out;
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
    for (const d of s.entries) {
      if (firstByName.has(d.ref)) continue;
      const near = closestMatch(d.ref, known);
      reader.problem(
        d.condition === undefined ? d.path : [...d.path, "stage"],
        "plan.unknown_stage",
        `unknown stage '${d.ref}'${known.length ? `; stages: ${known.join(", ")}` : ""}`,
        {
          hint: near ? `did you mean '${near}'?` : undefined,
        },
      );
    }
  }
  const named = stages.filter((s) => s.name !== undefined && firstByName.get(s.name) === s.index);
  // A conditional dependency orders the stages too: it waits for its upstream to end.
  const cycles = findCycles(
    named.map((s) => s.name as string),
    named.map((s) => s.entries.map((d) => d.ref)),
  );
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

/** Step-level `depends_on` resolved to step ids, by step (`stageIndex.stepIndex`). */
type ResolvedStepDeps = Map<
  string,
  { plain: string[]; conditional?: { id: string; condition: string } }
>;

function stepKey(stage: RawStage, step: RawStep): string {
  return `${stage.index}.${step.index}`;
}

/**
 * Resolves each step's own `depends_on` (a step id, or the exact title of one step), and checks
 * that no step has two conditional dependencies (its own and its stage's) and that the steps
 * form no cycle.
 */
function checkStepGraph(reader: FieldReader, stages: readonly RawStage[]): ResolvedStepDeps {
  const resolved: ResolvedStepDeps = new Map();
  const all = stages.flatMap((stage) =>
    stage.steps.map((step) => ({
      stage,
      step,
      id: stepId(stage.index, step.index, step.fields?.title ?? ""),
      title: step.fields?.title,
    }))
  );
  const ids = new Set(all.map((a) => a.id));
  for (const { stage, step } of all) {
    const out: { plain: string[]; conditional?: { id: string; condition: string } } = {
      plain: [],
    };
    for (const d of step.deps) {
      const at = d.condition === undefined ? d.path : [...d.path, "step"];
      let id: string | undefined = ids.has(d.ref) ? d.ref : undefined;
      if (id === undefined) {
        const byTitle = all.filter((a) => a.title === d.ref);
        if (byTitle.length > 1) {
          reader.problem(
            at,
            "plan.ambiguous_step",
            `'${d.ref}' is the title of ${byTitle.length} steps (${
              byTitle.map((a) => a.id).join(", ")
            })`,
            { hint: "name the step by its id" },
          );
          continue;
        }
        id = byTitle[0]?.id;
      }
      if (id === undefined) {
        const titles = all.flatMap((a) => a.title === undefined ? [] : [a.title]);
        const near = closestMatch(d.ref, [...titles, ...ids]);
        reader.problem(at, "plan.unknown_step", `unknown step '${d.ref}'`, {
          hint: near ? `did you mean '${near}'?` : "name a step by its id (1.2-title) or its title",
        });
        continue;
      }
      if (d.condition === undefined) out.plain.push(id);
      else if (out.conditional === undefined) out.conditional = { id, condition: d.condition };
    }
    if (out.conditional !== undefined && stage.conditional !== undefined) {
      reader.problem(
        step.deps.find((d) => d.condition !== undefined)?.path ?? step.path,
        "plan.conditional_twice",
        `its stage already depends on '${stage.conditional.ref}' under a condition; a step has at most one conditional dependency`,
      );
    }
    resolved.set(stepKey(stage, step), out);
  }
  const stepLevel = [...resolved.values()].some((r) => r.plain.length > 0 || r.conditional);
  if (stepLevel && !reader.problems.some((p) => p.code === "plan.dependency_cycle")) {
    const byName = new Map(stages.map((st) => [st.name, st]));
    const edges = all.map(({ stage, step }) => {
      const own = resolved.get(stepKey(stage, step));
      const fromStages = stage.entries.flatMap((d) =>
        (byName.get(d.ref)?.steps ?? []).map((x) =>
          stepId((byName.get(d.ref) as RawStage).index, x.index, x.fields?.title ?? "")
        )
      );
      return [
        ...fromStages,
        ...(own?.plain ?? []),
        ...(own?.conditional ? [own.conditional.id] : []),
      ];
    });
    for (const cycle of findCycles(all.map((a) => a.id), edges)) {
      const members = cycle.map((k) => all[k]);
      reader.problem(
        [...members[0].step.path, "depends_on"],
        "plan.dependency_cycle",
        `steps form a cycle: ${[...members, members[0]].map((m) => m.id).join(" → ")}`,
      );
    }
  }
  return resolved;
}

function buildGraph(
  stages: readonly RawStage[],
  stepDeps: ResolvedStepDeps,
  meta: { name: string; description: string; cli?: string; max_agents?: number; source: string },
  locate: Locator,
): PlanGraph {
  const idsByStage = new Map<string, string[]>();
  const steps: PlanStep[] = [];
  const outStages: PlanStage[] = [];
  const order = new Map<string, number>();
  for (const s of stages) {
    const ids = s.steps.map((st) => stepId(s.index, st.index, st.fields?.title ?? ""));
    for (const id of ids) order.set(id, order.size);
    idsByStage.set(s.name as string, ids);
    outStages.push({
      name: s.name as string,
      depends_on: [...s.depends],
      ...(s.conditional === undefined ? {} : {
        condition: { stage: s.conditional.ref, condition: s.conditional.condition as string },
      }),
      step_ids: ids,
    });
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
    const stageCondition: StepCondition | undefined = s.conditional === undefined ? undefined : {
      on: [...(idsByStage.get(s.conditional.ref) ?? [])],
      stage: s.conditional.ref,
      condition: s.conditional.condition as string,
    };
    s.steps.forEach((st, k) => {
      const fields = st.fields as NonNullable<typeof st.fields>;
      const own = stepDeps.get(stepKey(s, st));
      const all = [...new Set([...deps, ...(own?.plain ?? [])])]
        .sort((a, b) => (order.get(a) as number) - (order.get(b) as number));
      const condition = stageCondition ?? (own?.conditional === undefined ? undefined : {
        on: [own.conditional.id],
        stage: null,
        condition: own.conditional.condition,
      });
      steps.push({
        id: (idsByStage.get(s.name as string) as string[])[k],
        stage: s.name as string,
        ...fields,
        depends_on: all,
        ...(condition === undefined ? {} : { condition }),
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
 * ```ts ignore
 * const { graph, problems } = checkPlan(text, { file: "plan.yaml" });
 * ```
 */
export function checkPlan(text: string, options: PlanLoadOptions = {}): PlanCheck {
  const file = options.file ?? "plan.yaml";
  const parsed = parseYamlLayer(text, file, file);
  // The YAML helper is shared with the configuration; its codes name that family.
  const syntax: PlanProblem[] = parsed.problems.map((p) => ({
    ...fileProblemAs(p, "plan"),
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
  const stepDeps = checkStepGraph(reader, stages);
  const problems = sortByLocation(reader.problems);
  if (problems.some((p) => p.severity === "error")) return { problems };
  const graph = buildGraph(
    stages,
    stepDeps,
    { name, description, cli, max_agents, source: file },
    locate,
  );
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
    throw new PlanLoadError([fileProblemAs(read.problem, "plan")]);
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
