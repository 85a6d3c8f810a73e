// `bernstein plan …`: check plan files and the backlog before a run.
import type { JsonObject } from "../canonical/mod.ts";
import type { PlanGraph, PlanProblem } from "../plan/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg } from "./spec.ts";

function problemJson(p: PlanProblem): JsonObject {
  return {
    severity: p.severity,
    code: p.code,
    message: p.message,
    location: p.location ?? null,
    hint: p.hint ?? null,
    field: p.field ?? null,
  };
}

async function printProblems(ctx: CommandContext, problems: readonly PlanProblem[]) {
  const { BernsteinError } = await import("../errors/mod.ts");
  for (const p of problems) {
    if (p.severity === "error") ctx.out.error(new BernsteinError(p.code, p.message, p));
    else ctx.out.warn(p);
  }
}

async function printGraph(ctx: CommandContext, graph: PlanGraph): Promise<void> {
  const { alignColumns } = await import("./output.ts");
  for (const stage of graph.stages) {
    const after = stage.depends_on.length ? `  (after ${stage.depends_on.join(", ")})` : "";
    ctx.out.line(`stage ${stage.name}${after}`);
    const steps = graph.steps.filter((s) => stage.step_ids.includes(s.id));
    for (
      const row of alignColumns(steps.map((s) => [
        `  ${s.id}`,
        s.role,
        `p${s.priority}`,
        s.scope,
        s.cli ?? graph.cli ?? "-",
        s.title,
      ]))
    ) ctx.out.line(row);
  }
}

async function validate(ctx: CommandContext): Promise<number> {
  const planMod = await import("../plan/mod.ts");
  const { resolve } = await import("node:path");
  const file = stringArg(ctx, "file") ?? "";
  let result: { graph?: PlanGraph; problems: PlanProblem[] };
  try {
    result = await planMod.readPlanFile(resolve(ctx.cwd, file), { shownAs: file });
  } catch (error) {
    if (!(error instanceof planMod.PlanLoadError)) throw error;
    result = { problems: [...error.problems] };
  }
  const errors = result.problems.filter((p) => p.severity === "error");
  if (ctx.json) {
    ctx.out.json({
      ok: result.graph !== undefined,
      file,
      plan: result.graph === undefined ? null : planMod.planGraphJson(result.graph),
      problems: result.problems.map(problemJson),
    });
    return result.graph === undefined ? 1 : 0;
  }
  await printProblems(ctx, result.problems);
  if (result.graph === undefined) {
    ctx.out.line(
      `plan INVALID: ${errors.length} error${errors.length === 1 ? "" : "s"} in ${file}`,
    );
    return 1;
  }
  const g = result.graph;
  ctx.out.line(
    `plan ${g.name} (${file}) OK: ${g.stages.length} stage${
      g.stages.length === 1 ? "" : "s"
    }, ${g.steps.length} step${g.steps.length === 1 ? "" : "s"}${
      g.max_agents ? `, max_agents ${g.max_agents}` : ""
    }`,
  );
  await printGraph(ctx, g);
  return 0;
}

async function backlog(ctx: CommandContext): Promise<number> {
  const planMod = await import("../plan/mod.ts");
  const { findProject } = await import("../config/mod.ts");
  const paths = await findProject(ctx.cwd);
  const filter = ctx.env.get("BERNSTEIN_TASK_FILTER");
  const result = await planMod.readBacklog(paths.sdd, { filter });
  const ok = result.graph !== undefined;
  if (ctx.json) {
    ctx.out.json({
      ok,
      filter: filter ?? null,
      items: result.items.map((i) => ({ id: i.id, file: i.file, selected: i.selected })),
      plan: result.graph === undefined ? null : planMod.planGraphJson(result.graph),
      problems: result.problems.map(problemJson),
    });
    return ok ? 0 : 1;
  }
  await printProblems(ctx, result.problems);
  if (!ok) {
    const n = result.problems.filter((p) => p.severity === "error").length;
    ctx.out.line(`backlog INVALID: ${n} error${n === 1 ? "" : "s"}`);
    return 1;
  }
  const selected = result.items.filter((i) => i.selected).length;
  if (result.items.length === 0) {
    ctx.out.line("backlog empty (.sdd/backlog/open/ has no .yaml, .yml or .md items)");
    return 0;
  }
  ctx.out.line(
    `backlog OK: ${result.items.length} item${
      result.items.length === 1 ? "" : "s"
    }, ${selected} selected${filter ? ` by BERNSTEIN_TASK_FILTER=${filter}` : ""}`,
  );
  const { alignColumns } = await import("./output.ts");
  const steps = new Map((result.graph?.steps ?? []).map((s) => [s.id, s]));
  for (
    const row of alignColumns(result.items.map((i) => {
      const s = steps.get(i.id);
      return [
        i.selected ? "  run " : "  skip",
        i.id,
        s ? `p${s.priority}` : "",
        s?.depends_on.length ? `after ${s.depends_on.join(", ")}` : "",
        s?.title ?? "",
      ];
    }))
  ) ctx.out.line(row);
  return 0;
}

/** The `plan` group. */
export const PLAN_COMMANDS: CommandSpec[] = [
  {
    path: ["plan", "validate"],
    summary: "Load a plan file and print its task graph, or every problem in it.",
    description:
      "Checks syntax, keys (with suggestions), values, stage dependencies and cycles, and the\n" +
      "paths in files/signals/attachments; each problem names file:line:col and the field.\n" +
      "Exit 0 when the plan is valid, 1 otherwise.\n" +
      "JSON: {ok, file, plan: {name, description, source, cli, max_agents, stages: [{name,\n" +
      "depends_on, step_ids}], steps: [{id, stage, title, …, depends_on}]} | null,\n" +
      "problems: [{severity, code, message, location, hint, field}]}.",
    args: [{ name: "file", required: true, help: "The plan file (YAML)." }],
    json: true,
    examples: ["bernstein plan validate plan.yaml", "bernstein plan validate plan.yaml --json"],
    run: validate,
  },
  {
    path: ["plan", "backlog"],
    summary: "Show the backlog items a run would pick up (honours BERNSTEIN_TASK_FILTER).",
    description:
      "Reads .sdd/backlog/open/ (*.yaml, *.yml, *.md with YAML front matter; the id is the file\n" +
      "name), in file-name order. BERNSTEIN_TASK_FILTER is a comma-separated list of ids or\n" +
      "globs (*, ?, [a-z]) selecting which items run; unset or blank selects all. Exit 1 when\n" +
      "an item is invalid.\n" +
      "JSON: {ok, filter, items: [{id, file, selected}], plan, problems}.",
    json: true,
    examples: ["BERNSTEIN_TASK_FILTER='fix-*,docs-login' bernstein plan backlog"],
    run: backlog,
  },
];
