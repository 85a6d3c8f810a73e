// `bernstein runs diff A B`: two runs' configuration identities compared from their records
// (each checked against the `fleet.run_config` event that bound it to the chain).
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg } from "./spec.ts";
import { fleetProject, printJson } from "./_fleet.ts";

async function diff(ctx: CommandContext): Promise<number> {
  const fleet = await import("../fleet/mod.ts");
  const { paths, auditKey } = await fleetProject(ctx, false);
  const a = await fleet.readRunConfig(paths.sdd, auditKey, stringArg(ctx, "a") ?? "");
  const b = await fleet.readRunConfig(paths.sdd, auditKey, stringArg(ctx, "b") ?? "");
  const d = fleet.diffRunConfigs(a, b);
  const head = (r: typeof a) => ({
    run_id: r.run_id,
    attempt: r.attempt,
    config_hash: r.config_hash,
    context: r.context,
  });
  if (ctx.json) {
    printJson(ctx, { a: head(a), b: head(b), ...d });
    return d.same ? 0 : 1;
  }
  const ctxText = (r: typeof a) =>
    r.context === null ? "no context" : `context ${r.context.name} ${r.context.settings_hash}`;
  ctx.out.line(`${a.run_id}: ${a.config_hash} (${ctxText(a)})`);
  ctx.out.line(`${b.run_id}: ${b.config_hash} (${ctxText(b)})`);
  if (d.same) {
    ctx.out.line("same configuration");
    return 0;
  }
  const show = (v: unknown) => JSON.stringify(v);
  for (const x of d.differences) {
    ctx.out.line(
      `${x.key}: ${show(x.a.value)} (${x.a.source}) → ${show(x.b.value)} (${x.b.source})`,
    );
  }
  if (d.context_differs) {
    ctx.out.line(`cause: the operating context differs (${ctxText(a)} → ${ctxText(b)})`);
  }
  return 1;
}

/** `runs diff`. */
export const RUNS_DIFF_COMMAND: CommandSpec = {
  path: ["runs", "diff"],
  summary: "Compare two runs' configurations: each differing key with its value and layer.",
  description:
    "Reads each run's configuration record (.sdd/runs/<run>/config-<attempt>.json, the latest " +
    "attempt), checked against the fleet.run_config event that bound it to the audit chain, " +
    "and names every key whose value differs with the layer that set it in each run " +
    "(default, .sdd/config.yaml, context:NAME, bernstein.yaml, overlay, env, flags) and whether " +
    "the operating context differs. Exit 0 when the configuration hashes are equal, 1 when they " +
    "differ. With --json, one JSON document: {a: {run_id, attempt, config_hash, context}, b: " +
    "{…}, same, context_differs, differences: [{key, a: {value, source}, b: {value, source}}]}.",
  args: [
    { name: "a", required: true, help: "The first run." },
    { name: "b", required: true, help: "The second run." },
  ],
  json: true,
  run: diff,
};
