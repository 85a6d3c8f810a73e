// `bernstein storage …`: the shared task store's database (PostgreSQL schema versions).
import type { CommandContext, CommandSpec } from "./spec.ts";

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

async function migrate(ctx: CommandContext): Promise<number> {
  const { requireConfig } = await import("../config/mod.ts");
  const { migrateStorage } = await import("../storage/mod.ts");
  const { config, warnings, loaded } = await requireConfig({ cwd: ctx.cwd, env: ctx.env });
  for (const w of warnings) ctx.out.warn(w);
  const report = await migrateStorage({ config, sources: loaded.sources }, hostName());
  if (report === undefined) {
    if (ctx.json) ctx.out.json({ backend: config.storage.backend, migrated: false });
    else ctx.out.line("storage.backend is memory (embedded JSONL): it has no schema to migrate");
    return 0;
  }
  if (ctx.json) {
    ctx.out.json({
      backend: config.storage.backend,
      migrated: report.applied.length > 0,
      database: report.database,
      from: report.from,
      to: report.to,
      applied: report.applied,
    });
    return 0;
  }
  if (report.applied.length === 0) {
    ctx.out.line(`${report.database}: schema already at version ${report.to}`);
    return 0;
  }
  ctx.out.line(`${report.database}: schema version ${report.from} → ${report.to}`);
  for (const step of report.applied) ctx.out.line(`  applied ${step.version}: ${step.summary}`);
  return 0;
}

/** The `storage` group. */
export const STORAGE_COMMANDS: CommandSpec[] = [
  {
    path: ["storage", "migrate"],
    summary: "Create or upgrade the PostgreSQL schema of the shared task store.",
    description:
      "Applies every missing schema version in one transaction (an advisory lock keeps\n" +
      "concurrent migrations apart) and records it in bernstein.schema_version. A database\n" +
      "made by a newer bernstein is refused, naming both versions. The first run creates the\n" +
      "schema of an empty database by itself; upgrades always need this command.\n" +
      "JSON: {backend, migrated, database, from, to, applied: [{version, summary}]}.",
    json: true,
    examples: ["bernstein storage migrate", "bernstein storage migrate --json"],
    run: migrate,
  },
];
