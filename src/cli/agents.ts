// `bernstein agents list`: the roles the configured agent catalogs define, merged by priority.
import type { CommandContext, CommandSpec } from "./spec.ts";

async function list(ctx: CommandContext): Promise<number> {
  const { requireConfig, findProject } = await import("../config/mod.ts");
  const { loadCatalogs } = await import("../orchestrator/mod.ts");
  const { alignColumns } = await import("./output.ts");
  const { config, warnings } = await requireConfig({ cwd: ctx.cwd, env: ctx.env });
  const project = await findProject(ctx.cwd);
  const set = await loadCatalogs(project.root, config.catalogs);
  const row = (a: (typeof set.agents)[number]) => ({
    role: a.role,
    name: a.name,
    catalog: a.catalog,
    priority: a.priority,
    cli: a.cli ?? null,
    model: a.model ?? null,
    path: a.path,
  });
  if (ctx.json) {
    ctx.out.json({
      agents: set.agents.map(row),
      shadowed: set.shadowed.map(row),
      problems: set.problems.map((p) => ({
        ...p,
        location: p.location ?? null,
        hint: p.hint ?? null,
      })),
    });
    return set.problems.some((p) => p.severity === "error") ? 1 : 0;
  }
  for (const w of warnings) ctx.out.warn(w);
  for (const p of set.problems) ctx.out.warn(p);
  if ((config.catalogs ?? []).length === 0) {
    ctx.out.line("no catalogs configured (catalogs: in bernstein.yaml)");
    return 0;
  }
  const lines = alignColumns([
    ["ROLE", "NAME", "CATALOG", "PRIORITY", "CLI", "MODEL", "FILE"],
    ...set.agents.map((a) => [
      a.role,
      a.name,
      a.catalog,
      String(a.priority),
      a.cli ?? "-",
      a.model ?? "-",
      a.path,
    ]),
  ]);
  for (const line of lines) ctx.out.line(line);
  for (const a of set.shadowed) {
    const winner = set.agents.find((w) => w.role === a.role);
    ctx.out.line(
      ctx.out.style(
        "dim",
        `  ${a.role} from ${a.catalog} (${a.path}) is shadowed by ${winner?.catalog}`,
      ),
    );
  }
  return set.problems.some((p) => p.severity === "error") ? 1 : 0;
}

/** The `agents` group. */
export const AGENTS_COMMANDS: CommandSpec[] = [
  {
    path: ["agents", "list"],
    summary: "List the roles the agent catalogs define and which catalog each came from.",
    description:
      "Catalogs (catalogs: in bernstein.yaml) merge by priority: higher wins a role, then the\n" +
      "order they are listed. A run uses a role's definition below role_model_policy (its cli\n" +
      "and model fill what the policy leaves unset) and its body as the prompt preamble.\n" +
      "Exit 1 when a definition names an unknown adapter.\n" +
      "JSON: {agents: [{role, name, catalog, priority, cli, model, path}], shadowed: [same],\n" +
      "problems: [{severity, code, message, location, hint}]}.",
    json: true,
    examples: ["bernstein agents list", "bernstein agents list --json"],
    run: list,
  },
];
