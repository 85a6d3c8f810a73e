// `bernstein doctor --endpoint` (certify a model server, write its signed receipt) and
// `bernstein doctor --failover-drill` (walk every provider_availability chain). Both print a
// table for people and one JSON document with --json.
import { alignColumns } from "./output.ts";
import type { CommandContext } from "./spec.ts";
import { stringFlag } from "./spec.ts";

const APIS = ["openai-chat", "openai-responses", "anthropic", "gemini"] as const;

async function projectConfig(ctx: CommandContext) {
  const { requireConfig } = await import("../config/mod.ts");
  const { config, warnings, loaded } = await requireConfig({ cwd: ctx.cwd, env: ctx.env });
  if (!ctx.json) { for (const w of warnings) ctx.out.warn(w); }
  return { config, sdd: loaded.project.sdd };
}

function apiFlag(
  ctx: CommandContext,
  usage: (m: string) => Error,
): (typeof APIS)[number] | undefined {
  const api = stringFlag(ctx, "api");
  if (api === undefined) return undefined;
  const known = APIS.find((a) => a === api);
  if (known === undefined) throw usage(`--api ${api}: one of ${APIS.join(", ")}`);
  return known;
}

/** `doctor --endpoint`. */
export async function certify(ctx: CommandContext): Promise<number> {
  const { UsageError } = await import("../errors/mod.ts");
  const { systemClock, systemRandom } = await import("../io/mod.ts");
  const { certifyEndpoint } = await import("../orchestrator/mod.ts");
  const { atLeast, GATED_MIN_GRADE } = await import("../providers/mod.ts");
  const api = apiFlag(ctx, (m) => new UsageError("cli.bad_api", m));
  const { config, sdd } = await projectConfig(ctx);
  const { profile, receipt, path } = await certifyEndpoint({
    endpoint: stringFlag(ctx, "endpoint") as string,
    model: stringFlag(ctx, "model"),
    api,
    engine: stringFlag(ctx, "engine"),
    name: stringFlag(ctx, "name"),
  }, { sdd, config, env: ctx.env, clock: systemClock, random: systemRandom });
  const gated = receipt.grade !== "none" && atLeast(receipt.grade, GATED_MIN_GRADE);
  const ok = receipt.grade !== "none";
  const roles = gated ? "all roles" : ok ? "low-stakes roles only" : "no role";
  if (ctx.json) {
    ctx.out.json({
      ok,
      name: profile.name,
      endpoint: receipt.endpoint,
      api: receipt.api,
      engine: receipt.engine,
      model: receipt.model,
      grade: receipt.grade,
      gated_roles: gated,
      checks: receipt.checks.map((c) => ({ ...c })),
      latency_ms: receipt.latency_ms,
      context_tokens: receipt.context_tokens,
      receipt: path,
    });
    return ok ? 0 : 1;
  }
  ctx.out.line(
    `endpoint ${profile.name}: ${receipt.endpoint} (${receipt.api}, model ${receipt.model}` +
      `${receipt.engine ? `, engine ${receipt.engine}` : ""})`,
  );
  const rows = alignColumns(
    receipt.checks.map((c) => [c.ok ? "OK" : "FAIL", c.name, `${c.ms} ms`, c.detail]),
  );
  rows.forEach((row, i) => {
    const status = receipt.checks[i].ok ? "OK" : "FAIL";
    ctx.out.line(
      ctx.out.style(status === "OK" ? "green" : "red", status) + row.slice(status.length),
    );
  });
  ctx.out.line(
    `grade: ${receipt.grade} — good for ${roles}` +
      (gated ? "" : ` (merge-critical roles need ${GATED_MIN_GRADE})`),
  );
  ctx.out.line(`receipt: ${path} (signed with the install identity)`);
  return ok ? 0 : 1;
}

/** `doctor --failover-drill`. */
export async function failoverDrill(ctx: CommandContext): Promise<number> {
  const { systemPathLookup } = await import("../adapters/mod.ts");
  const { runFailoverDrill } = await import("../orchestrator/mod.ts");
  const { config } = await projectConfig(ctx);
  const drill = await runFailoverDrill(config, {
    env: ctx.env,
    lookup: systemPathLookup(ctx.env, ctx.cwd),
  });
  if (ctx.json) {
    ctx.out.json({
      ok: drill.ok,
      roles: drill.roles.map((r) => ({
        role: r.role,
        chain_name: r.chain_name,
        floor: r.floor,
        chain: r.chain.map((e) => ({
          adapter: e.adapter,
          model: e.model ?? null,
          conformance: e.conformance,
          endpoint: e.endpoint ?? null,
        })),
        probes: r.probes.map((p) => ({
          status: p.status,
          healthy: p.healthy,
          kind: p.kind,
          detail: p.detail,
          ms: p.ms,
        })),
        chosen: r.chosen,
        on_primary_failure: r.on_primary_failure,
        hash: r.hash,
        failover_hash: r.failover_hash,
      })),
    });
    return drill.ok ? 0 : 1;
  }
  if (drill.roles.length === 0) {
    ctx.out.line("no provider_availability chains are declared");
    return 0;
  }
  for (const r of drill.roles) {
    ctx.out.line(`${r.role} (chain ${r.chain_name}, floor ${r.floor}):`);
    const rows = alignColumns(r.chain.map((e, i) => [
      `  ${i}`,
      `${e.adapter}${e.model ? `/${e.model}` : ""}${e.endpoint ? ` @${e.endpoint}` : ""}`,
      e.conformance,
      r.probes[i].status,
      r.probes[i].detail,
    ]));
    for (const row of rows) ctx.out.line(row);
    const pick = (n: number | null) => n === null ? "NONE" : `${n} (${r.chain[n].adapter})`;
    ctx.out.line(`  gets: ${pick(r.chosen)}; if the primary fails: ${pick(r.on_primary_failure)}`);
  }
  ctx.out.line(drill.ok ? "every role has a healthy element" : "a role has no healthy element");
  return drill.ok ? 0 : 1;
}
