// Steps every scenario takes: a real `bernstein run` of a plan (its summary written to the
// transcript in a stable order), a compliance pack of the day's work, and the auditor's
// offline check of that pack with the operator fingerprint pinned.
import { exampleOperatorFingerprint } from "./_example_keys.ts";
import { type CommandResult, expectExit, type Project } from "./_project.ts";

/** What a run's `--json` summary says, in the parts the scenarios use. */
export interface RunOutcome {
  /** The run id (random per run; normalised in the transcript). */
  runId: string;
  /** HEALTHY or UNHEALTHY. */
  health: string;
  /** Merged task ids, sorted. */
  merged: string[];
  /** Task ids whose failure a recovery step recovered. */
  recovered: string[];
  /** The whole summary. */
  summary: Record<string, unknown>;
  /** The progress events the run printed (one JSON object a line before the summary). */
  events: Record<string, unknown>[];
}

/**
 * `bernstein run PLAN --json` in the project. The transcript gets the command and a summary
 * in a fixed order (the live event stream interleaves parallel agents by timing).
 */
export async function runPlan(p: Project, plan: string): Promise<RunOutcome> {
  const r = await p.bernstein(["run", plan, "--json"], "none");
  const last = r.stdout.trim().split("\n").at(-1) ?? "";
  let doc: { type?: string; summary?: Record<string, unknown> };
  try {
    doc = JSON.parse(last);
  } catch {
    throw new Error(`bernstein run ${plan}: no JSON summary (exit ${r.code})\n${r.stderr}`);
  }
  if (doc.type !== "run.summary" || doc.summary === undefined) {
    throw new Error(`bernstein run ${plan}: unexpected last line ${last.slice(0, 200)}`);
  }
  const s = doc.summary;
  const merges = (s.merges as { task_id: string; files?: string[] }[] | undefined) ?? [];
  const merged = merges.map((m) => m.task_id).sort();
  const recovered = [...((s.recovered as string[] | undefined) ?? [])].sort();
  const outcome: RunOutcome = {
    runId: String(s.run_id),
    health: String(s.health),
    merged,
    recovered,
    summary: s,
    events: r.stdout.trim().split("\n").slice(0, -1).flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    }),
  };
  p.transcript.push(`$ bernstein run ${plan}`);
  p.transcript.push(`run ${outcome.runId}: ${outcome.health}, ${merged.length} merged`);
  for (const m of [...merges].sort((a, b) => a.task_id.localeCompare(b.task_id))) {
    p.transcript.push(`  merged ${m.task_id}: ${[...(m.files ?? [])].sort().join(", ")}`);
  }
  for (const id of recovered) p.transcript.push(`  recovered ${id}`);
  const checkpoints = (s.checkpoints as { log: string }[] | undefined) ?? [];
  p.transcript.push(
    `  signed checkpoints: ${checkpoints.map((c) => c.log).sort().join(", ") || "none"}`,
  );
  p.transcript.push(`(exit ${r.code})`);
  return outcome;
}

/** Today's UTC day (the packs' window: the runs happen now). */
export function utcDay(ms = Date.now()): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `bernstein compliance pack` of [since, until] into the scenario folder. */
export async function pack(
  p: Project,
  file: string,
  org: string,
  since: string,
  until: string,
  expectCode = 0,
): Promise<CommandResult> {
  const r = await p.bernstein([
    "compliance",
    "pack",
    "--since",
    since,
    "--until",
    until,
    "--org",
    org,
    "--output",
    `../${file}`,
  ]);
  expectExit(r, expectCode, `bernstein compliance pack ${file}`);
  return r;
}

/** `bernstein-verify pack FILE --operator-fingerprint F` (the example key's fingerprint). */
export async function verifyPack(
  p: Project,
  scenario: string,
  file: string,
  expectCode: number,
): Promise<CommandResult> {
  const r = await p.verify([
    "pack",
    file,
    "--operator-fingerprint",
    exampleOperatorFingerprint(scenario),
  ], "stdout");
  expectExit(r, expectCode, `bernstein-verify pack ${file}`);
  return r;
}
