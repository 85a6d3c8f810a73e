// `bernstein cas verify` and `cas repair`: the project's content-addressed store (FORMATS.md §3)
// checked blob by blob against its keys and the run records, and bad blobs restored from the
// files they were read from when those still hash to the key.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringsArg } from "./spec.ts";

async function projectPaths(ctx: CommandContext): Promise<{ root: string; sdd: string }> {
  const { findProject } = await import("../config/mod.ts");
  const paths = await findProject(ctx.cwd);
  return { root: paths.root, sdd: paths.sdd };
}

function runsText(runs: readonly string[]): string {
  return runs.length === 0 ? "no run record needs it" : `needed by run ${runs.join(", ")}`;
}

async function verify(ctx: CommandContext): Promise<number> {
  const { checkProjectCas } = await import("../attachments/mod.ts");
  const { BernsteinError } = await import("../errors/mod.ts");
  const { relative } = await import("node:path");
  const { root, sdd } = await projectPaths(ctx);
  const report = await checkProjectCas(sdd, root);
  const ok = report.check.problems.length === 0;
  if (ctx.json) {
    ctx.out.json({
      ok,
      ...report.check,
      needed_by: report.needed_by,
      unreadable_records: report.unreadable_records,
    });
    return ok ? 0 : 1;
  }
  for (const p of report.check.problems) {
    const needs = p.digest === null ? "" : `; ${runsText(report.needed_by[p.digest] ?? [])}`;
    ctx.out.error(
      new BernsteinError(p.code, `${p.message}${needs}`, { location: relative(ctx.cwd, p.path) }),
    );
  }
  for (const r of report.unreadable_records) {
    ctx.out.warn({
      code: "attach.record_invalid",
      message: `run ${r.run_id}: ${r.message} (the blobs it needs are not checked)`,
    });
  }
  const { blobs, bytes, good } = report.check;
  const where = relative(ctx.cwd, report.check.root) || ".";
  if (ok) {
    ctx.out.line(`PASS ${where}: ${blobs} blob(s), ${bytes} bytes, every one hashes to its key`);
    return 0;
  }
  const n = report.check.problems.length;
  ctx.out.line(
    `FAIL (${n} problem${n === 1 ? "" : "s"}) ${where}: ${good} of ${blobs} blob(s) good`,
  );
  ctx.out.note("'bernstein cas repair' restores bad blobs whose source still hashes to the key");
  return 1;
}

async function repair(ctx: CommandContext): Promise<number> {
  const { repairProjectCas } = await import("../attachments/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const digests = stringsArg(ctx, "digest");
  for (const d of digests) {
    if (!/^[0-9a-f]{64}$/.test(d)) {
      throw new UsageError(
        "cas.invalid_key",
        `${JSON.stringify(d.slice(0, 80))} is not a CAS key (64 lowercase hex characters)`,
      );
    }
  }
  const { root, sdd } = await projectPaths(ctx);
  const results = await repairProjectCas(sdd, root, digests.length > 0 ? digests : undefined);
  const unrecoverable = results.filter((r) => r.status === "unrecoverable");
  if (ctx.json) {
    ctx.out.json({ ok: unrecoverable.length === 0, blobs: results });
    return unrecoverable.length === 0 ? 0 : 1;
  }
  for (const r of results) {
    if (r.status === "ok") ctx.out.line(`ok         ${r.digest}: nothing to repair`);
    if (r.status === "restored") {
      ctx.out.line(`restored   ${r.digest} from ${r.from}`);
      for (const m of r.moved_aside) ctx.out.note(`  the damaged file is kept at ${m}`);
    }
    if (r.status !== "unrecoverable") continue;
    ctx.out.line(`unrecoverable ${r.digest}: ${runsText(r.needed_by)}`);
    for (const t of r.tried) ctx.out.note(`  tried ${t.from}: ${t.why}`);
    if (r.tried.length === 0) ctx.out.note("  no run record names a source for it");
  }
  const lost = new Set(unrecoverable.flatMap((r) => r.needed_by));
  for (const run of [...lost].sort()) {
    ctx.out.warn({
      code: "cas.unrecoverable",
      message: `run ${run} cannot resume byte-identically: a blob it needs is gone and no source ` +
        "still hashes to its key. Start fresh with 'bernstein run --fresh' (the interrupted " +
        "run's records stay under .sdd/runs for the audit)",
    });
  }
  if (results.length === 0) ctx.out.line("nothing to repair: every blob hashes to its key");
  return unrecoverable.length === 0 ? 0 : 1;
}

/** The `cas` group. */
export const CAS_COMMANDS: CommandSpec[] = [
  {
    path: ["cas", "verify"],
    summary: "Re-hash every CAS blob; list bad, missing and stray entries and the runs they stop.",
    description:
      "Reads .sdd/cas (FORMATS.md §3): every blob is re-hashed against its key, its sidecar\n" +
      "read and compared, and digests a run record (.sdd/runs/<run>/attachments.json) needs\n" +
      "but the store lacks are listed as missing. Read-only. Exit 0 when all is well, 1 when\n" +
      "anything is wrong. Codes: cas.integrity, cas.not_regular, cas.meta_invalid,\n" +
      "cas.meta_missing, cas.missing, cas.stray.\n" +
      "JSON: {ok, root, blobs, bytes, good, problems: [{digest, path, code, message}],\n" +
      "needed_by: {digest: [run]}, unreadable_records: [{run_id, message}]}.",
    json: true,
    examples: ["bernstein cas verify", "bernstein cas verify --json"],
    run: verify,
  },
  {
    path: ["cas", "repair"],
    summary:
      "Restore bad or missing CAS blobs from their sources when those still hash to the key.",
    description:
      "For each bad or missing blob (or only the DIGESTs given), reads the files the run records\n" +
      "name as its source the way the run read them (whole, or the declared line range), then\n" +
      "the worktree copies of media, and puts back the first bytes that hash to the key; the\n" +
      "damaged file is moved to .sdd/cas/.damaged/. A blob whose sidecar alone is wrong gets a\n" +
      "new sidecar. When no source gives the bytes, says which runs cannot resume\n" +
      "byte-identically and how to start fresh. Exit 0 when nothing is left broken, else 1.\n" +
      "JSON: {ok, blobs: [{digest, status: restored|unrecoverable|ok, from, tried: [{from,\n" +
      "why}], needed_by, moved_aside}]}.",
    args: [{ name: "digest", variadic: true, help: "Only these keys (default: every bad one)." }],
    json: true,
    examples: ["bernstein cas repair", "bernstein cas repair 3fa9…c2 --json"],
    run: repair,
  },
];
