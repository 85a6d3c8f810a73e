// `bernstein doctor`: is this machine and project ready for a run?
import type { CommandContext, CommandSpec } from "./spec.ts";

async function doctor(ctx: CommandContext): Promise<number> {
  const { runDoctor } = await import("../orchestrator/mod.ts");
  const { alignColumns } = await import("./output.ts");
  const checks = await runDoctor({ cwd: ctx.cwd, env: ctx.env });
  const failed = checks.filter((c) => c.status === "FAIL").length;
  const warned = checks.filter((c) => c.status === "WARN").length;
  if (ctx.json) {
    ctx.out.json({
      ok: failed === 0,
      checks: checks.map((c) => ({
        name: c.name,
        status: c.status,
        detail: c.detail,
        hint: c.hint ?? null,
      })),
    });
    return failed === 0 ? 0 : 1;
  }
  const color = { OK: "green", WARN: "yellow", FAIL: "red" } as const;
  const rows = alignColumns(checks.map((c) => [c.status, c.name, c.detail]));
  rows.forEach((row, i) => {
    const c = checks[i];
    ctx.out.line(ctx.out.style(color[c.status], c.status) + row.slice(c.status.length));
    if (c.hint && c.status !== "OK") ctx.out.line(ctx.out.style("dim", `      fix: ${c.hint}`));
  });
  ctx.out.line(
    `\n${failed} failed, ${warned} warning${warned === 1 ? "" : "s"}, ${
      checks.length - failed - warned
    } ok`,
  );
  return failed === 0 ? 0 : 1;
}

/** `bernstein doctor`. */
export const DOCTOR_COMMANDS: CommandSpec[] = [
  {
    path: ["doctor"],
    summary: "Check git, disk, configuration, keys, adapters, storage and the task server port.",
    description: "Each line is OK, WARN or FAIL with a fix hint; exit 1 when any check FAILs.\n" +
      "JSON: {ok, checks: [{name, status, detail, hint}]}.",
    json: true,
    run: doctor,
  },
];
