// `bernstein runs …`: past runs and their scorecards (FORMATS.md §6).
import type { ErrorCode } from "../errors/mod.ts";
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { RUNS_DIFF_COMMAND } from "./_runs_diff.ts";
import { booleanFlag, stringArg, stringFlag } from "./spec.ts";

async function project(ctx: CommandContext) {
  const { findProject } = await import("../config/mod.ts");
  const { relative } = await import("node:path");
  const paths = await findProject(ctx.cwd);
  return { paths, rel: (p: string) => relative(paths.root, p) || "." };
}

/** A float from the ledger (a number, or an integral float wrapped as `{value}`). */
function epochSeconds(value: JsonValue | undefined): number | undefined {
  if (typeof value === "number") return value;
  if (value !== null && typeof value === "object" && "value" in value) {
    return typeof value.value === "number" ? value.value : undefined;
  }
  return undefined;
}

function isoSeconds(value: JsonValue | undefined): string {
  const n = epochSeconds(value);
  return n === undefined ? "-" : new Date(n * 1000).toISOString().replace(/\.\d+Z$/, "Z");
}

const VERIFY_CODES: Record<string, ErrorCode> = {
  mismatch: "runs.scorecard_mismatch",
  artefact_missing: "runs.scorecard_missing",
  artefact_invalid: "runs.scorecard_invalid",
  ledger_missing: "runs.ledger_missing",
  ledger_broken: "ledger.chain_broken",
};

async function verify(ctx: CommandContext, runId: string): Promise<number> {
  const ledger = await import("../ledger/mod.ts");
  const { BernsteinError } = await import("../errors/mod.ts");
  const { paths, rel } = await project(ctx);
  const v = await ledger.verifyScorecard(paths.sdd, runId);
  const artifactPath = v.artifact_path === null ? null : rel(v.artifact_path);
  if (ctx.json) {
    ctx.out.json({
      ok: v.ok,
      artifact_sha256: v.artifact_sha256,
      recomputed_sha256: v.recomputed_sha256,
      description: v.description,
      artifact_path: artifactPath,
    });
  } else if (v.ok) {
    ctx.out.line(`scorecard OK: ${artifactPath} — ${v.description}`);
    ctx.out.line(`sha256 ${v.artifact_sha256}`);
  }
  if (v.ok) return 0;
  ctx.out.error(
    new BernsteinError(VERIFY_CODES[v.status] ?? "runs.scorecard_mismatch", v.description, {
      location: artifactPath ?? undefined,
    }),
  );
  return 1;
}

/**
 * Writes the scorecard of a run that has none, from its ledger; true when written. A missing
 * ledger is `runs.scorecard_missing`, a ledger that does not verify `ledger.chain_broken`.
 */
async function buildScorecard(ctx: CommandContext, runId: string): Promise<boolean> {
  const ledger = await import("../ledger/mod.ts");
  const { paths } = await project(ctx);
  let read;
  try {
    read = await ledger.readLedger(paths.sdd, runId);
  } catch {
    read = undefined;
  }
  if (read === undefined || read.rows.length === 0) {
    throw new ledger.LedgerError(
      "runs.scorecard_missing",
      `run '${runId}' has no scorecard under .sdd/runs/${runId}/scorecard/ and no ledger to ` +
        "build one from",
      { hint: "check the id with 'bernstein runs list'" },
    );
  }
  await ledger.writeScorecard(paths.sdd, runId);
  return true;
}

async function scorecard(ctx: CommandContext): Promise<number> {
  const ledger = await import("../ledger/mod.ts");
  const io = await import("../io/mod.ts");
  const runId = io.checkRunId(stringArg(ctx, "run-id") ?? "");
  if (booleanFlag(ctx, "verify")) return await verify(ctx, runId);
  const { paths, rel } = await project(ctx);
  let stored = await ledger.findScorecard(paths.sdd, runId);
  // The design's idempotent mode: a run that wrote none (interrupted, or killed before its
  // end) gets its scorecard built now from its ledger, which must verify.
  const built = stored === undefined ? await buildScorecard(ctx, runId) : false;
  if (built) stored = await ledger.findScorecard(paths.sdd, runId);
  if (stored === undefined) throw new Error("unreachable: a built scorecard is on disk");
  if (stored.problem !== undefined || stored.content === null) {
    throw new ledger.LedgerError("runs.scorecard_invalid", stored.problem ?? "unreadable", {
      location: rel(stored.path),
    });
  }
  const c = stored.content;
  // No run.closed after the last start: the run was interrupted (outcome wedged).
  const evidence = c.evidence;
  const interrupted = typeof evidence === "object" && evidence !== null &&
    !Array.isArray(evidence) && "closed_reason" in evidence && evidence.closed_reason === null;
  if (ctx.json) {
    // The shape of a stored scorecard is unchanged; one built now says so.
    ctx.out.json({
      artifact: rel(stored.path),
      sha256: stored.recordedSha256,
      ...(built ? { built, interrupted } : {}),
      content: c,
    });
    return 0;
  }
  if (built) {
    ctx.out.line(
      `built now: run '${runId}' had no scorecard${
        interrupted ? "; it was interrupted (its ledger has no run.closed)" : ""
      }`,
    );
  }
  const { alignColumns } = await import("./output.ts");
  const show = (v: JsonValue | undefined) =>
    v === undefined || v === null
      ? "-"
      : String(epochSeconds(v) ?? (typeof v === "object" ? "-" : v));
  const rows: string[][] = [
    ["run", show(c.run_id)],
    ["outcome", show(c.outcome)],
    ["branch", show(c.branch)],
    ["host", show(c.host)],
    [
      "tasks",
      `${show(c.tasks_total)} total, ${show(c.tasks_completed)} completed, ${
        show(c.tasks_failed)
      } failed, ${show(c.tasks_started)} started`,
    ],
    ["attempts", show(c.attempt_count)],
    ["started", isoSeconds(c.started_at)],
    ["ended", isoSeconds(c.ended_at)],
    ["elapsed", `${show(c.elapsed_seconds)} s`],
    ["cost", `$${show(c.cost_usd)}`],
    ["artefact", rel(stored.path)],
    ["sha256", show(stored.recordedSha256)],
  ];
  for (const line of alignColumns(rows)) ctx.out.line(line);
  return 0;
}

async function report(ctx: CommandContext): Promise<number> {
  const { join, resolve } = await import("node:path");
  const orchestrator = await import("../orchestrator/mod.ts");
  const view = await import("../report/mod.ts");
  const io = await import("../io/mod.ts");
  const { paths, rel } = await project(ctx);
  const given = stringArg(ctx, "run-id");
  let runId: string;
  if (given !== undefined) runId = io.checkRunId(given);
  else {
    const run = await orchestrator.readCurrentRun(paths.sdd);
    if (run === undefined) {
      const { BernsteinError } = await import("../errors/mod.ts");
      throw new BernsteinError("runs.not_found", "no run in this project yet", {
        hint: "'bernstein runs list' lists runs; 'bernstein run' starts one",
      });
    }
    runId = run.run_id;
  }
  // No agent output goes into the report: it is a file to hand on, and logs may hold anything.
  const records = await orchestrator.loadRunRecords(paths.sdd, runId, {
    env: ctx.env,
    verify: true,
  });
  const model = view.buildRunModel(records, { nowMs: io.systemClock.nowMs() });
  const htmlFlag = stringFlag(ctx, "html");
  const open = booleanFlag(ctx, "open");
  // --json alone prints the model; an HTML file is written unless only JSON was asked for.
  const writeHtml = !ctx.json || htmlFlag !== undefined || open;
  const htmlPath = htmlFlag === undefined
    ? io.runFile(paths.sdd, runId, "report")
    : resolve(ctx.cwd, htmlFlag);
  if (writeHtml) {
    await Deno.mkdir(join(htmlPath, ".."), { recursive: true });
    await io.writeFileAtomic(htmlPath, view.renderReportHtml(model));
  }
  if (ctx.json) {
    ctx.out.json({ ...model, html: writeHtml ? rel(htmlPath) : null });
  } else {
    const r = model.run;
    const c = model.counts;
    ctx.out.line(
      `run ${r.run_id}: ${r.state}, ${r.health} — ${c.tasks} task(s), ${c.merged} merged, ${c.refused} refused, ${c.failed} failed, ${c.attempts} attempt(s)`,
    );
    const v = model.verification;
    ctx.out.line(
      `  verified: audit ${v.audit.status}, lineage ${v.lineage.status}, scorecard ${v.scorecard.status}`,
    );
    ctx.out.line(`  report   ${rel(htmlPath)}`);
  }
  if (open) {
    const { openExternal } = await import("./opener.ts");
    const problem = await openExternal(htmlPath, ctx.env);
    if (problem !== undefined) {
      ctx.out.warn({
        code: "runs.open_failed",
        message: `could not open the report (${problem}); open ${htmlPath} yourself`,
      });
    }
  }
  return 0;
}

interface RunRow {
  run_id: string;
  /** Start in epoch seconds, for sorting (-Infinity when unknown). */
  sortKey: number;
  json: JsonObject;
  outcome: string | null;
  started_at: JsonValue;
  ledgerState: string;
}

async function list(ctx: CommandContext): Promise<number> {
  const ledger = await import("../ledger/mod.ts");
  const io = await import("../io/mod.ts");
  const { compareCodePoints } = await import("../canonical/mod.ts");
  const { paths, rel } = await project(ctx);
  const ids = new Set<string>();
  for (const root of [io.runsRoot(paths.sdd), ledger.ledgerRoot(paths.sdd)]) {
    try {
      for await (const e of Deno.readDir(root)) {
        if (e.isDirectory && io.RUN_ID_PATTERN.test(e.name)) ids.add(e.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  const runs: RunRow[] = [];
  for (const runId of ids) {
    let led: Awaited<ReturnType<typeof ledger.readLedger>> | undefined;
    try {
      led = await ledger.readLedger(paths.sdd, runId);
    } catch (error) {
      if (!(error instanceof ledger.LedgerError)) throw error;
    }
    const card = await ledger.findScorecard(paths.sdd, runId);
    const first = led?.rows[0];
    const last = led?.rows.at(-1);
    const started: JsonValue = first?.ts ?? card?.content?.started_at ?? null;
    const ended: JsonValue = last?.ts ?? card?.content?.ended_at ?? null;
    const outcome = typeof card?.content?.outcome === "string" ? card.content.outcome : null;
    const ledgerJson: JsonValue = led === undefined ? null : {
      path: rel(led.path),
      rows: led.rows.length,
      ok: led.ok,
      broken_line: led.broken?.line ?? null,
    };
    runs.push({
      run_id: runId,
      sortKey: epochSeconds(started) ?? -Infinity,
      outcome,
      started_at: started,
      ledgerState: led === undefined
        ? "missing"
        : led.ok
        ? `${led.rows.length} rows`
        : `BROKEN at line ${led.broken?.line}`,
      json: {
        run_id: runId,
        started_at: started,
        ended_at: ended,
        outcome,
        ledger: ledgerJson,
        scorecard: card === undefined
          ? null
          : { path: rel(card.path), sha256: card.recordedSha256, ok: card.problem === undefined },
      },
    });
  }
  runs.sort((a, b) => b.sortKey - a.sortKey || compareCodePoints(a.run_id, b.run_id));
  if (ctx.json) {
    ctx.out.json({ runs: runs.map((r) => r.json) });
    return 0;
  }
  if (runs.length === 0) {
    ctx.out.line("no runs yet (nothing under .sdd/runs/ or .sdd/runtime/ledger/)");
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const table = [["RUN", "STARTED", "OUTCOME", "LEDGER"]];
  for (const r of runs) {
    table.push([r.run_id, isoSeconds(r.started_at), r.outcome ?? "-", r.ledgerState]);
  }
  for (const line of alignColumns(table)) ctx.out.line(line);
  return 0;
}

/** The `runs` group. */
export const RUNS_COMMANDS: CommandSpec[] = [
  {
    path: ["runs", "list"],
    summary: "List runs found under .sdd/runs and the ledger folder, newest first.",
    description:
      "Shows each run's start time (from its ledger), its outcome when a scorecard exists, and\n" +
      "whether its ledger verifies.\n" +
      "JSON: {runs: [{run_id, started_at, ended_at, outcome, ledger: {path, rows, ok,\n" +
      "broken_line} | null, scorecard: {path, sha256, ok} | null}]} (times: epoch seconds).",
    json: true,
    run: list,
  },
  {
    path: ["runs", "scorecard"],
    summary: "Show a run's scorecard, or --verify it against the run's ledger.",
    description:
      "The scorecard lives at .sdd/runs/<run-id>/scorecard/<sha256>.json and is derived only\n" +
      "from the work ledger .sdd/runtime/ledger/<run-id>/000000.jsonl (FORMATS.md §6).\n" +
      "A run that wrote none (interrupted, killed) gets it built now from its ledger, which\n" +
      "must verify; the output says so and whether the run was interrupted.\n" +
      "--verify recomputes it from the ledger: exit 0 on a match, 1 naming the diverging\n" +
      "fields (or the missing/broken ledger or artefact); it never writes.\n" +
      "JSON: {artifact, sha256, content} (+ built: true, interrupted when built now);\n" +
      "with --verify: {ok, artifact_sha256, recomputed_sha256, description, artifact_path}.",
    args: [{ name: "run-id", required: true, help: "Run id, e.g. brave-otter-3fa9c2." }],
    flags: [{
      name: "verify",
      type: "boolean",
      help: "Recompute the scorecard from the ledger and compare.",
    }],
    json: true,
    examples: [
      "bernstein runs scorecard brave-otter-3fa9c2",
      "bernstein runs scorecard brave-otter-3fa9c2 --verify --json",
    ],
    run: scorecard,
  },
  {
    path: ["runs", "report"],
    summary: "Write a run's report: one self-contained HTML file with its timeline.",
    description:
      "The report shows the run's summary, a Gantt timeline of every attempt (a lane per agent\n" +
      "slot; spawn, work, checks and gates, merge; retries and escalations marked), cost and\n" +
      "tokens per task and per adapter, gate results, refused merges with their reasons,\n" +
      "attachments with their digests, and the verification of the audit chain, the lineage\n" +
      "log and the scorecard, done now. Finished, failed, interrupted and running runs.\n" +
      "One file, no external request (inline CSS, SVG and script under a strict CSP).\n" +
      "Default file: .sdd/runs/<run-id>/report.html; default run: the current or last one.\n" +
      "JSON (--json; no file unless --html or --open): {schema: bernstein-run-report, version,\n" +
      "generated_at, run: {run_id, state, health, end, reason, branch, goal, source, host,\n" +
      "started_at, ended_at, elapsed_s, starts, max_agents}, counts, cost: {total_usd, reported,\n" +
      "by_adapter}, tasks, attempts: [{session, task_id, attempt, adapter, model, lane, retry,\n" +
      "escalated, outcome, reason, claimed_at, spawned_at, exited_at, ended_at, turns,\n" +
      "tokens_in, tokens_out, cost_usd, phases: [{phase, start_ms, end_ms}]}], lanes, span_ms,\n" +
      "gates, merges, refused_merges, attachments, notices, verification: {audit, lineage,\n" +
      "scorecard: {status: pass|fail|unchecked, detail}}, html}.",
    args: [{ name: "run-id", help: "Run id (default: the current or last run)." }],
    flags: [
      {
        name: "html",
        type: "string",
        valueName: "FILE",
        help: "Where to write the report (default .sdd/runs/<run-id>/report.html).",
      },
      { name: "open", type: "boolean", help: "Open the report in the default browser." },
    ],
    json: true,
    examples: [
      "bernstein runs report",
      "bernstein runs report brave-otter-3fa9c2 --html run.html --open",
      "bernstein runs report brave-otter-3fa9c2 --json",
    ],
    run: report,
  },
  RUNS_DIFF_COMMAND,
];
