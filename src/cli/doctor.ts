// `bernstein doctor`: is this machine and project ready for a run?
import { booleanFlag, type CommandContext, type CommandSpec, stringFlag } from "./spec.ts";

async function doctor(ctx: CommandContext): Promise<number> {
  if (stringFlag(ctx, "endpoint") !== undefined) {
    const { certify } = await import("./_endpoint_doctor.ts");
    return await certify(ctx);
  }
  if (booleanFlag(ctx, "failover-drill")) {
    const { failoverDrill } = await import("./_endpoint_doctor.ts");
    return await failoverDrill(ctx);
  }
  for (const flag of ["model", "api", "engine", "name"]) {
    if (stringFlag(ctx, flag) !== undefined) {
      const { UsageError } = await import("../errors/mod.ts");
      throw new UsageError("cli.flag_needs_endpoint", `--${flag} goes with --endpoint`);
    }
  }
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
      "JSON: {ok, checks: [{name, status, detail, hint}]}.\n" +
      "--endpoint NAME|URL certifies a model server (docs/PROVIDERS.md): the conformance subset\n" +
      "(completion, streaming, forced tool call, tool round trip, JSON-only answer, claimed\n" +
      "context, latency), a grade basic < advanced < expert, and a receipt signed with the\n" +
      "install identity in .sdd/endpoints/<name>.receipt.json; exit 1 when graded none.\n" +
      "JSON: {ok, name, endpoint, api, engine, model, grade, gated_roles, checks, latency_ms,\n" +
      "context_tokens, receipt}.\n" +
      "--failover-drill probes every provider_availability chain, simulates each role's primary\n" +
      "failing and says which element each role gets; exit 1 when a role has no healthy element.\n" +
      "JSON: {ok, roles: [{role, chain_name, floor, probes, chosen, on_primary_failure, hash}]}.",
    flags: [
      {
        name: "endpoint",
        type: "string",
        valueName: "PROFILE",
        help: "certify this local_endpoints profile (a name, or its base URL)",
      },
      {
        name: "model",
        type: "string",
        valueName: "M",
        help: "model to certify (default: the profile's)",
      },
      {
        name: "api",
        type: "string",
        valueName: "API",
        help: "openai-chat | openai-responses | anthropic | gemini (default: the profile's)",
      },
      {
        name: "engine",
        type: "string",
        valueName: "LABEL",
        help: "engine label recorded in the receipt",
      },
      {
        name: "name",
        type: "string",
        valueName: "NAME",
        help: "receipt name for a URL no profile uses",
      },
      {
        name: "failover-drill",
        type: "boolean",
        help: "probe every provider_availability chain and simulate each primary failing",
      },
    ],
    examples: [
      "bernstein doctor",
      "bernstein doctor --endpoint workhorse",
      "bernstein doctor --endpoint http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b --api openai-chat",
      "bernstein doctor --failover-drill --json",
    ],
    json: true,
    run: doctor,
  },
];
