// How `bernstein run` handles real agent CLIs whose model misbehaves: the model server down
// (fails fast with the reason, retried per policy), a 429 (rate-limit cooldown before the
// retry, or the CLI's own retry), a hung model (deadline → the agent's process group killed,
// the claim released and the task retried) and the turn limit. Each is a real run of one
// step against the model server of tests/e2e/model_servers with a scripted failure.
import assert from "node:assert/strict";
import { join } from "node:path";
import { liveGroupMembers } from "../../_helpers/processes.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import {
  auditEvents,
  ledgerRows,
  type RealCli,
  type RealRun,
  type RealRunOptions,
  runReal,
  runTag,
  skipReason,
  type StepSpec,
  taskRecords,
} from "../_real_run.ts";
import {
  type EgressSentinel,
  type ModelServer,
  startEgressSentinel,
  startModelServer,
} from "../model_servers/mod.ts";

/** How each CLI meets the failures, as observed on the pinned versions. */
interface FailureProfile {
  /** With its model server down it fails at once (else it retries until its deadline). */
  downFast: boolean;
  /** A 429 ends the CLI's run (else the CLI retries it itself and succeeds). */
  stopsOn429: boolean;
  /**
   * The hang test's least deadline. The deadline it uses is derived from a healthy run of the
   * same CLI measured just before (see {@linkcode measuredDeadline}), never less than this.
   */
  startS: number;
}

const PROFILES: Readonly<Record<string, FailureProfile>> = {
  claude: { downFast: true, stopsOn429: true, startS: 12 },
  // codex waits for ever on a refused connection; its parser flags that as fatal.
  codex: { downFast: true, stopsOn429: true, startS: 12 },
  gemini: { downFast: true, stopsOn429: true, startS: 20 },
  // opencode retries refused connections and 429s itself (5 times, backoff from 2 s).
  opencode: { downFast: false, stopsOn429: false, startS: 30 },
  // qwen retries a 429 itself (7 attempts, backoff from 1.5 s; no setting turns it off).
  qwen: { downFast: true, stopsOn429: false, startS: 20 },
};

/** Payload of ledger rows of one kind for one task. */
async function rowsOf(
  run: RealRun,
  kind: string,
  taskId: string,
): Promise<Record<string, unknown>[]> {
  return (await ledgerRows(run))
    .filter((r) => r.kind === kind && r.task_id === taskId)
    .map((r) => r.payload as Record<string, unknown>);
}

function context(run: RealRun): string {
  return `exit ${run.cli.code}\n${run.cli.stderr}\n${run.cli.stdout.slice(-4000)}`;
}

async function withRun(
  options: Omit<RealRunOptions, "server" | "sentinel">,
  check: (run: RealRun, server: ModelServer, sentinel: EgressSentinel) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const server = startModelServer();
    const sentinel = startEgressSentinel();
    try {
      const run = await runReal(dir, { ...options, server, sentinel });
      console.log(`${options.steps[0].cli} ${options.steps[0].title}: run took ${run.seconds}s`);
      assert.deepEqual(sentinel.foreign, [], "no agent tried to reach another host");
      assert.deepEqual(server.problems, [], context(run));
      await check(run, server, sentinel);
    } finally {
      await sentinel.close();
      await server.close();
    }
  });
}

function oneStep(cli: string, title: string, script: string[]): StepSpec[] {
  return [{
    title,
    cli,
    role: "backend",
    files: ["out.txt"],
    expect: ["out.txt"],
    description: [`${title}.`, ...script].join("\n"),
  }];
}

/** The hung attempt waits out this many healthy attempts' time before it is killed. */
const DEADLINE_MARGIN = 2;

/** What the endpoint-timeout run left for its test, and the healthy attempt the hang test times. */
interface TimeoutRun {
  context: string;
  health: unknown;
  /** Turns the model answered with a hang. */
  hangs: number;
  failed: Record<string, unknown>[];
  escalations: number;
  merged: unknown;
  /** The attempt that merged: spawn to exit, as the agent's audit records time it (seconds). */
  mergedAttemptSeconds: number;
}

/**
 * The endpoint-timeout case: a hung first request given up at the endpoint timeout, then a
 * healthy retry of the same two turns the hang test's retry runs. The deadline is far away: only
 * the endpoint timeout can end the hung attempt early.
 */
async function timeoutRun(cli: RealCli, profile: FailureProfile): Promise<TimeoutRun> {
  let recorded: TimeoutRun | undefined;
  await withRun({
    steps: oneStep(cli.name, "Write after a timeout", [
      "@model hang times=1",
      "@model write out.txt after the timeout",
      "@model say wrote out.txt",
    ]),
    tuning: {
      max_retries: 2,
      deadline_s: 600,
      // Long enough for the CLI to start in its sandbox and answer on a loaded machine (it is
      // silent until then), far below the deadline.
      endpoint_timeout_s: Math.max(30, 2 * profile.startS),
    },
  }, async (run, server) => {
    const taskId = "1.1-write-after-a-timeout";
    const session = String((await taskRecords(run)).get(taskId)?.assigned_agent);
    const audit = await auditEvents(run);
    const at = (type: string) =>
      Date.parse(
        String(audit.find((e) => e.event_type === type && e.resource_id === session)?.timestamp),
      );
    recorded = {
      context: context(run),
      health: run.summary?.health,
      hangs: server.turns().filter((t) => t.answer === "hang").length,
      failed: await rowsOf(run, "task.failed", taskId),
      escalations: run.events.filter((e) => e.type === "model.escalated").length,
      merged: (await rowsOf(run, "task.completed", taskId))[0]?.merged,
      mergedAttemptSeconds: (at("agent.exited") - at("agent.spawned")) / 1000,
    };
  });
  if (recorded === undefined) throw new Error("the endpoint-timeout run recorded nothing");
  return recorded;
}

/**
 * The hang test's deadline, derived from a measured baseline on the same machine at the same
 * load: the healthy attempt of `cli` that merged in the endpoint-timeout run (run just before,
 * the same two turns the hang test's retry runs; spawn to exit), times
 * {@linkcode DEADLINE_MARGIN}, never under `floorS`. A fixed deadline fails on a busy machine
 * whenever the healthy retry needs longer than the hang; this one grows with the load.
 */
function measuredDeadline(cli: string, healthy: TimeoutRun, floorS: number): number {
  assert.equal(healthy.merged, true, `the baseline attempt merged: ${healthy.context}`);
  const seconds = healthy.mergedAttemptSeconds;
  assert.ok(seconds > 0, `the baseline attempt's spawn and exit are audited: ${seconds}`);
  const deadline = Math.max(floorS, Math.ceil(seconds * DEADLINE_MARGIN));
  console.log(
    `${cli}: a healthy attempt took ${seconds}s; the hang test's deadline is ${deadline}s`,
  );
  return deadline;
}

/** A port nothing listens on (a server that was started and stopped). */
async function deadOrigin(): Promise<string> {
  const s = startModelServer();
  const origin = s.origin;
  await s.close();
  return origin;
}

/** Defines the failure tests of one CLI (ignored with the reason when it is not installed). */
export function defineFailureTests(cli: RealCli): void {
  const profile = PROFILES[cli.name];
  const ignore = cli.exe === undefined;
  const why = skipReason(cli);
  const name = `${cli.name} ${cli.pin.version}`;

  Deno.test({
    name: `real ${name}: model server down → the task fails ${
      profile.downFast ? "at once with the reason" : "at the deadline"
    }, retried per policy${why}`,
    ignore,
    async fn() {
      const origin = await deadOrigin();
      // A CLI that only stops at its deadline gets no retry, to keep the test short.
      const retries = profile.downFast ? 1 : 0;
      await withRun({
        steps: oneStep(cli.name, "Write through a dead server", ["@model write out.txt x"]),
        tuning: { max_retries: retries, deadline_s: profile.downFast ? 120 : 15 },
        endpointOrigin: origin,
      }, async (run) => {
        assert.equal(run.summary?.health, "UNHEALTHY", context(run));
        const taskId = "1.1-write-through-a-dead-server";
        assert.equal((await taskRecords(run)).get(taskId)?.status, "failed");
        // Every attempt (1 + max_retries) failed with the same kind of reason.
        const failed = await rowsOf(run, "task.failed", taskId);
        assert.equal(failed.length, retries + 1, context(run));
        assert.equal((await rowsOf(run, "task.started", taskId)).length, retries + 1);
        for (const f of failed) {
          if (profile.downFast) {
            assert.equal(f.reason, "agent-failed");
            assert.match(
              String(f.detail),
              /connect|refused|fetch failed|network|ECONNREFUSED/i,
              "the reason names the unreachable server",
            );
          } else {
            assert.equal(f.reason, "deadline");
          }
        }
        assert.equal(run.events.filter((e) => e.type === "task.retry").length, retries);
      });
    },
  });

  Deno.test({
    name: `real ${name}: a 429 ${
      profile.stopsOn429
        ? "fails the attempt as rate-limited; the retry waits the cooldown and merges"
        : "is retried by the CLI itself and the run merges"
    }${why}`,
    ignore,
    async fn() {
      await withRun({
        steps: oneStep(cli.name, "Write after a rate limit", [
          "@model fail 429 times=1",
          "@model write out.txt after the rate limit",
          "@model say wrote out.txt",
        ]),
        tuning: { max_retries: 1, cooldown_s: 2 },
      }, async (run, server) => {
        assert.equal(run.summary?.health, "HEALTHY", context(run));
        const taskId = "1.1-write-after-a-rate-limit";
        assert.deepEqual(server.turns().map((t) => t.answer.replace(/ via .*/, "")), [
          "fail 429",
          "write out.txt",
          "say wrote out.txt",
        ]);
        const failed = await rowsOf(run, "task.failed", taskId);
        const retries = run.events.filter((e) => e.type === "task.retry");
        if (profile.stopsOn429) {
          assert.equal(failed.length, 1, context(run));
          assert.equal(failed[0].reason, "rate-limited");
          assert.equal(retries.length, 1);
          assert.equal(retries[0].cooldown, "rate-limit");
          assert.equal(retries[0].delay_s, 2, "the cooldown, not the 0.2 s backoff");
          assert.equal((await rowsOf(run, "task.started", taskId)).length, 2);
        } else {
          assert.deepEqual(failed, []);
          assert.deepEqual(retries, []);
        }
        const done = await rowsOf(run, "task.completed", taskId);
        assert.equal(done[0]?.merged, true);
      });
    },
  });

  // One run serves two tests (a real CLI start costs seconds of CPU): the endpoint-timeout
  // case, whose healthy retry is also the hang test's measured baseline. The first to ask
  // starts it.
  let timeoutCase: Promise<TimeoutRun> | undefined;
  const timeoutCaseRun = () => timeoutCase ??= timeoutRun(cli, profile);

  Deno.test({
    name: `real ${name}: a hung model with a local_endpoints timeout → the request is given up ` +
      `at the timeout (a provider failure, not the deadline), never escalated; the retry ` +
      `merges${why}`,
    ignore,
    async fn() {
      const run = await timeoutCaseRun();
      assert.equal(run.health, "HEALTHY", run.context);
      assert.equal(run.hangs, 1);
      assert.ok(run.failed.length >= 1, run.context);
      for (const f of run.failed) {
        assert.notEqual(f.reason, "deadline", `the deadline did not end it: ${f.detail}`);
        assert.match(String(f.detail), /timeout|timed out/i, String(f.detail));
      }
      // A timed-out request is not evidence for a bigger model.
      assert.equal(run.escalations, 0);
      assert.equal(run.merged, true);
    },
  });

  Deno.test({
    name: `real ${name}: a hung model → killed at the deadline (process group gone), claim ` +
      `released, the retry merges${why}`,
    ignore,
    async fn() {
      // The hung attempt waits out the deadline, so it is kept short: a small multiple of a
      // healthy attempt measured just before (the endpoint-timeout run's merged retry), at the
      // machine's current load. Should the load rise meanwhile and a healthy attempt overrun it,
      // retries absorb that. What must hold is what happened: the one hung attempt was killed
      // at the deadline with its process group, every failure was the deadline, and a later
      // attempt of the same task claimed it and merged.
      const deadline = measuredDeadline(cli.name, await timeoutCaseRun(), profile.startS);
      const retries = 3;
      await withRun({
        steps: oneStep(cli.name, "Write after a hang", [
          "@model hang times=1",
          "@model write out.txt after the hang",
          "@model say wrote out.txt",
        ]),
        tuning: { max_retries: retries, deadline_s: deadline },
      }, async (run, server) => {
        const taskId = "1.1-write-after-a-hang";
        const session = (n: number) => `${taskId}-a${n}-${runTag(run)}`;
        const worktree = (n: number) => join(run.root, ".sdd", "worktrees", session(n));
        assert.equal(run.summary?.health, "HEALTHY", context(run));
        const started = await rowsOf(run, "task.started", taskId);
        const attempts = started.length;
        assert.deepEqual(
          started.map((s) => s.session),
          Array.from({ length: attempts }, (_, i) => session(i + 1)),
        );
        const hung = server.turns().filter((t) => t.answer === "hang");
        assert.equal(hung.length, 1, "the model hung exactly once");
        const hungAttempt = Array.from({ length: attempts }, (_, i) => i + 1)
          .find((n) => hung[0].cwd === worktree(n));
        assert.ok(hungAttempt !== undefined && hungAttempt < attempts, "a later attempt followed");
        assert.deepEqual(server.turns(worktree(hungAttempt)).map((t) => t.answer), ["hang"]);
        const failed = await rowsOf(run, "task.failed", taskId);
        assert.equal(failed.length, attempts - 1, context(run));
        for (const f of failed) {
          assert.equal(f.reason, "deadline");
          assert.match(String(f.detail), new RegExp(`killed after ${deadline}s`));
        }
        // The deadline killed the hung agent's whole process group.
        const audit = await auditEvents(run);
        const exited = audit.filter((e) =>
          e.event_type === "agent.exited" && e.resource_id === session(hungAttempt)
        );
        assert.equal((exited[0].details as Record<string, unknown>).timed_out, true);
        const spawned = audit.find((e) =>
          e.event_type === "agent.spawned" && e.resource_id === session(hungAttempt)
        );
        const pid = Number((spawned?.details as Record<string, unknown>).pid);
        assert.ok(pid > 0);
        assert.deepEqual(liveGroupMembers(pid), [], `process group ${pid} is gone`);
        // The claim was released: the last attempt claimed the same task and merged it.
        const task = (await taskRecords(run)).get(taskId);
        assert.equal(task?.status, "closed");
        assert.equal(task?.assigned_agent, session(attempts));
        assert.equal((await rowsOf(run, "task.completed", taskId))[0]?.merged, true);
      });
    },
  });

  Deno.test({
    name: cli.turnLimit
      ? `real ${name}: a model that keeps calling tools past the turn limit fails the task ` +
        `(max-turns)${why}`
      : `real ${name}: turn limit${
        ignore ? why : ` [skipped: ${cli.name} has no turn limit of its own; its deadline ` +
          "applies, see the hung-model test]"
      }`,
    ignore: ignore || !cli.turnLimit,
    async fn() {
      await withRun({
        steps: oneStep(cli.name, "Write too much", [
          "@model write out.txt one",
          "@model write more.txt two",
          "@model write most.txt three",
          "@model say wrote them all",
        ]),
        tuning: { max_turns: 2 },
      }, async (run, server) => {
        const taskId = "1.1-write-too-much";
        assert.equal((await taskRecords(run)).get(taskId)?.status, "failed", context(run));
        const failed = await rowsOf(run, "task.failed", taskId);
        assert.equal(failed.length, 1);
        assert.equal(failed[0].reason, "max-turns");
        const exited = (await auditEvents(run)).find((e) => e.event_type === "agent.exited");
        assert.equal((exited?.details as Record<string, unknown>).subtype, "error_max_turns");
        // The limit stopped the CLI: it never asked for the third turn.
        assert.ok(server.turns().length <= 2, server.turns().map((t) => t.answer).join(", "));
        assert.equal((await rowsOf(run, "task.completed", taskId)).length, 0);
      });
    },
  });
}
