// Shared by the fleet command groups (`var`, `conn`, `ctx`): the project's `.sdd/`, the audit
import type { ErrorCode } from "../errors/mod.ts";
import type { AuditKey } from "../audit/mod.ts";
import type { ProjectPaths } from "../config/mod.ts";
// key (created by writes, only read by reads), and the warnings a store collected.
import type { CommandContext } from "./spec.ts";
import { sddFolder } from "../io/mod.ts";

/** The project's `.sdd/` and the audit key: `create` for writes, read-only (exit 3) for reads. */
export async function fleetProject(
  ctx: CommandContext,
  create: boolean,
): Promise<{ paths: ProjectPaths; auditKey: AuditKey }> {
  const { findProject } = await import("../config/mod.ts");
  const audit = await import("../audit/mod.ts");
  const io = await import("../io/mod.ts");
  const paths = await findProject(ctx.cwd);
  const keyPath = audit.resolveAuditKeyPath(ctx.env).path;
  if (create) {
    await Deno.mkdir(sddFolder(paths.sdd, "audit"), { recursive: true, mode: 0o700 });
    return { paths, auditKey: await audit.ensureAuditKey(keyPath, io.systemRandom) };
  }
  return { paths, auditKey: await audit.readAuditKey(keyPath) };
}

/** Prints what a store noticed on the way (index out of step, damaged chain lines). */
export function printWarnings(
  ctx: CommandContext,
  warnings: readonly { code: ErrorCode; message: string }[],
): void {
  for (const w of warnings) ctx.out.warn(w);
}

/** Prints one JSON document built from typed records (interfaces of plain JSON fields). */
export function printJson(ctx: CommandContext, value: object): void {
  ctx.out.json(value);
}
