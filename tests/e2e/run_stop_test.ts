// Stopping a real run with signals (src/orchestrator/stop_signals.ts), its agent hostile: the
// command it runs ignores SIGTERM and would sleep for ten minutes. The first SIGTERM ends the
// run within its drain and kill grace, with its records whole; a second one ends it at once,
// and the next run resumes it. Every wait is for an event (a file the agent writes, a line the
// run prints, the process's exit), never a duration.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { guard, until } from "../_helpers/wait.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { Watched } from "./_netns.ts";
import {
  bern,
  bernsteinCommand,
  eventsOf,
  prepareRepo,
  scriptedPlan,
  step,
  summaryOf,
} from "./_run_helpers.ts";

/**
 * A step whose agent, the first time, ignores SIGTERM and SIGINT and never finishes (its pid
 * written to `marker`); on a later attempt (a resumed run) it writes a.txt instead.
 */
function hostileStep(marker: string): string {
  return step("Stubborn", [`@agent stubborn ${marker}`, "@agent write a.txt a"]);
}

/** The stat state letter of a process; undefined when it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Waits until the process is gone or a zombie (a SIGKILLed process still needs the CPU once). */
async function ended(pid: number): Promise<void> {
  await until(() => {
    const state = stateOf(pid);
    return state === undefined || state === "Z" ? true : undefined;
  }, `process ${pid} to end`);
}

/** Kills a process a failed test would otherwise leave sleeping. */
function endProcess(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * A repo whose plan is the hostile step (without the sandbox: the test sees its agent), run with
 * `drainS` to drain and a 1 s kill grace; returns once the agent ignores SIGTERM and hangs.
 */
async function startHanging(dir: string, drainS: number): Promise<{ run: Watched; pid: number }> {
  const marker = join(dir, ".hold", "stubborn");
  await Deno.mkdir(join(dir, ".hold"));
  await prepareRepo(dir, scriptedPlan(hostileStep(marker)), {
    isolation: "none",
    tuning: { orchestrator: { drain_timeout_s: drainS }, agent: { kill_grace_s: 1 } },
  });
  const { argv, env } = bernsteinCommand(dir, ["run", "plan.yaml", "--json"]);
  const run = new Watched(argv, { cwd: dir, env });
  let exited = false;
  run.done.then(() => (exited = true));
  const pid = await until(async () => {
    if (exited) throw new Error(`the run ended first:\n${run.lines.join("\n")}`);
    const text = await Deno.readTextFile(marker).catch(() => "");
    return text === "" ? undefined : Number(text);
  }, "the agent to ignore SIGTERM and hang");
  return { run, pid };
}

async function auditTypes(dir: string, type: string): Promise<Record<string, unknown>[]> {
  const shown = await bern(dir, ["audit", "show", "--type", type, "--json"]);
  strictEqual(shown.code, 0, shown.stderr);
  return (JSON.parse(shown.stdout).records as { record: { details: Record<string, unknown> } }[])
    .map((r) => r.record.details);
}

Deno.test({
  name:
    "SIGTERM stops a run whose agent ignores it: the group is killed after the grace, the stop and end are recorded, exit 1",
  ignore: Deno.build.os !== "linux", // reads /proc to tell a live process from a zombie
  fn: async () => {
    await withTempDir(async (dir) => {
      const { run, pid } = await startHanging(dir, 0);
      try {
        run.child.kill("SIGTERM");
        const status = await guard(run.done, "the run to end");
        strictEqual(status.code, 1, run.errLines.join("\n"));
        const summary = JSON.parse(run.lines.at(-1) ?? "{}").summary;
        strictEqual(summary.end, "stopped");
        strictEqual(summary.reason, "stopped: SIGTERM received");
        await ended(pid);
        // Running 1, or 0 when the agent's start was still being recorded (it is stopped then
        // all the same: the check on its process below).
        deepStrictEqual(
          (await auditTypes(dir, "run.stop_requested")).map((d) => [d.reason, d.force]),
          [["SIGTERM received", false]],
        );
        const [finished] = await auditTypes(dir, "run.finished");
        strictEqual(finished.end, "stopped");
        const verified = await bern(dir, ["audit", "verify"]);
        strictEqual(verified.code, 0, verified.stderr + verified.stdout);
        // The next run starts clean: nothing left running to end, its own work merges.
        const next = await bern(dir, ["run", "plan.yaml", "--json"]);
        strictEqual(next.code, 0, next.stderr + next.stdout);
        strictEqual(summaryOf(next).health, "HEALTHY");
        deepStrictEqual(
          eventsOf(next).filter((e) => String(e.message ?? "").includes("left running")),
          [],
        );
      } finally {
        endProcess(pid);
      }
    });
  },
});

Deno.test({
  name:
    "a second SIGTERM ends a draining run at once (exit 143); its records stay whole and the next run resumes it",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withTempDir(async (dir) => {
      // Ten minutes to drain: only the second signal can end it.
      const { run, pid } = await startHanging(dir, 600);
      try {
        run.child.kill("SIGTERM");
        await run.waitFor((l) => l.includes('"run.stopping"'));
        run.child.kill("SIGTERM");
        const status = await guard(run.done, "the run to end");
        strictEqual(status.code, 143, run.lines.join("\n") + run.errLines.join("\n"));
        ok(
          run.lines.some((l) => l.startsWith("run ended at once (a second signal (SIGTERM))")),
          run.lines.join("\n"),
        );
        await ended(pid);
        const verified = await bern(dir, ["audit", "verify"]);
        strictEqual(verified.code, 0, verified.stderr + verified.stdout);
        // Not --fresh: the run was ended as a crash would be, so this one resumes it.
        const next = await bern(dir, ["run", "plan.yaml", "--json"]);
        strictEqual(next.code, 0, next.stderr + next.stdout);
        ok(eventsOf(next).some((e) => e.type === "run.resumed"), next.stdout);
        strictEqual(summaryOf(next).health, "HEALTHY");
        strictEqual(await Deno.readTextFile(join(dir, "a.txt")), "a\n");
      } finally {
        endProcess(pid);
      }
    });
  },
});
