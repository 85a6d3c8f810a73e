// Shared set-up of the whole-run tests: a git repo on a feature branch, fast tuning, a plan,
// and `bernstein` run as a real subprocess under its real permission set.
import { join } from "node:path";
import { type CliRun, REPO_ROOT, runBernstein } from "../_helpers/cli.ts";
import { SOURCE_RUN_FLAGS } from "../../scripts/runtime_flags.ts";
import { git, makeRepo } from "../_helpers/temp.ts";
import { operatorTokenPath } from "../../src/server/mod.ts";

/** Tuning that makes runs take seconds: short ticks, no backoff, no retries unless asked. */
export const FAST_CONFIG: Record<string, unknown> = {
  tuning: {
    orchestrator: { tick_interval_s: 0.2, stalled_run_grace_s: 1, stalled_run_ticks: 2 },
    spawn: { spawn_backoff_base_s: 0 },
    tasks: { default_max_retries: 0 },
  },
};

function deepMerge(
  base: Record<string, unknown>,
  top: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(top)) {
    const b = out[k];
    out[k] = typeof v === "object" && v !== null && !Array.isArray(v) && typeof b === "object" &&
        b !== null && !Array.isArray(b)
      ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
      : v;
  }
  return out;
}

/**
 * A repo ready for `bernstein run`: feature branch, `.sdd/config.yaml` = fast tuning merged
 * with `config` (written as JSON, which is YAML), and the plan committed.
 */
export async function prepareRepo(
  dir: string,
  plan: string,
  config: Record<string, unknown> = {},
): Promise<string> {
  await makeRepo(dir);
  await Deno.mkdir(join(dir, ".sdd"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, ".sdd", "config.yaml"),
    JSON.stringify(deepMerge(FAST_CONFIG, config), null, 2) + "\n",
  );
  await Deno.writeTextFile(join(dir, "plan.yaml"), plan);
  await git(dir, "add", "plan.yaml");
  await git(dir, "commit", "-q", "-m", "plan");
  return dir;
}

/**
 * Environment of a test run: its own audit key, nothing from the developer's home. The key (and
 * the operator token bernstein keeps beside it, `projects/<id>/auth.token`) lies outside the
 * project in `<dir>.keys/`, which withTempDir removes with the dir.
 */
export function runEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    BERNSTEIN_AUDIT_KEY_PATH: join(dir, "..", `${dir.split("/").pop()}.keys`, "audit.key"),
    ...extra,
  };
}

/** The operator token of a run in `dir` (kept beside the run's audit key, outside the project). */
export async function operatorTokenOf(dir: string): Promise<string> {
  const path = operatorTokenPath(runEnv(dir).BERNSTEIN_AUDIT_KEY_PATH, await Deno.realPath(dir));
  return (await Deno.readTextFile(path)).trim();
}

/** Runs `bernstein ARGS` in the repo. */
export function bern(
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  return runBernstein(args, { cwd: dir, env: runEnv(dir, env) });
}

/** The run summary printed by `run --json` (last line). */
export function summaryOf(run: CliRun): Record<string, unknown> {
  const lines = run.stdout.trim().split("\n");
  const last = JSON.parse(lines[lines.length - 1]) as {
    type: string;
    summary: Record<string, unknown>;
  };
  if (last.type !== "run.summary") {
    throw new Error(`no summary in output:\n${run.stdout}\n${run.stderr}`);
  }
  return last.summary;
}

/** Every JSON event a `run --json` streamed. */
export function eventsOf(run: CliRun): { type: string; [key: string]: unknown }[] {
  return run.stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

/** A plan step in YAML with scripted-agent instructions. */
export function step(title: string, lines: string[], extra = ""): string {
  const body = lines.map((l) => `          ${l}`).join("\n");
  return `      - title: ${title}\n        description: |\n${body}\n${extra}`;
}

/** A plan of one stage (`s`) for the scripted agent, its steps made with {@linkcode step}. */
export function scriptedPlan(...steps: string[]): string {
  return `cli: scripted\nstages:\n  - name: s\n    steps:\n${steps.join("")}\n`;
}

/**
 * The command line and environment of `bernstein ARGS` run from source in the repo `dir`, as
 * its binary would run (for tests that start it and watch it, e.g. with `Watched`).
 */
export function bernsteinCommand(
  dir: string,
  args: string[],
): { argv: string[]; env: Record<string, string> } {
  return {
    argv: [
      Deno.execPath(),
      "run",
      "-q",
      "--frozen",
      `--config=${REPO_ROOT}deno.json`,
      "-P=bernstein",
      ...SOURCE_RUN_FLAGS,
      `${REPO_ROOT}main.ts`,
      ...args,
    ],
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? dir,
      NO_COLOR: "1",
      ...runEnv(dir),
    },
  };
}

/** Starts `bernstein ARGS` in the repo without waiting (for crash, stop and watch tests). */
export function startBernstein(dir: string, args: string[]): Deno.ChildProcess {
  const { argv, env } = bernsteinCommand(dir, args);
  return new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: dir,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}
