// What SIGINT/SIGTERM do to a run (src/orchestrator/stop_signals.ts), on the fake clock: the
// first asks for a stop, a second ends the run at once, and so does the first one's grace
// running out; once the run ended by itself nothing happens any more.
import assert from "node:assert/strict";
import { type Config, requireConfig } from "../../src/config/mod.ts";
import { FakeClock, mapEnv } from "../../src/io/mod.ts";
import { signalExitCode, stopGraceMs, StopSignals } from "../../src/orchestrator/stop_signals.ts";
import { withTempDir } from "../_helpers/temp.ts";

function recorder() {
  const calls: string[] = [];
  return {
    calls,
    actions: {
      stop: (reason: string) => calls.push(`stop: ${reason}`),
      endNow: (reason: string, code: number) => calls.push(`end ${code}: ${reason}`),
    },
  };
}

/** Lets the fake clock's woken sleepers run their continuations. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("stop signals: the first asks for a stop, a second ends the run at once with 128 + its number", () => {
  const { calls, actions } = recorder();
  const signals = new StopSignals(new FakeClock(), 60_000, actions);
  signals.receive("SIGTERM");
  assert.deepEqual(calls, ["stop: SIGTERM received"]);
  signals.receive("SIGINT");
  assert.deepEqual(calls, ["stop: SIGTERM received", "end 130: a second signal (SIGINT)"]);
  signals.receive("SIGTERM");
  assert.equal(calls.length, 2, "ended once");
});

Deno.test("stop signals: a run still going when the first signal's grace runs out is ended then", async () => {
  const { calls, actions } = recorder();
  const clock = new FakeClock();
  const signals = new StopSignals(clock, 60_000, actions);
  signals.receive("SIGTERM");
  clock.advance(59_999);
  await settle();
  assert.deepEqual(calls, ["stop: SIGTERM received"]);
  clock.advance(1);
  await settle();
  assert.deepEqual(calls, [
    "stop: SIGTERM received",
    "end 143: the run did not end within 60s of SIGTERM",
  ]);
});

Deno.test("stop signals: a run that ended by itself ignores later signals and its deadline", async () => {
  const { calls, actions } = recorder();
  const clock = new FakeClock();
  const signals = new StopSignals(clock, 1_000, actions);
  signals.receive("SIGINT");
  signals.close();
  clock.advance(5_000);
  await settle();
  signals.receive("SIGINT");
  assert.deepEqual(calls, ["stop: SIGINT received"]);
});

Deno.test("stop signals: exit codes and the documented grace of the default configuration", async () => {
  assert.equal(signalExitCode("SIGINT"), 130);
  assert.equal(signalExitCode("SIGTERM"), 143);
  await withTempDir(async (dir) => {
    const env = mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir });
    const config = (await requireConfig({ cwd: dir, env })).config as Config;
    // tick 3 + drain 60 + 2 × kill grace 10 + 3 × (kill grace 10 + 10 to exit) +
    // notification drain 30 + 30 for the end records.
    assert.equal(stopGraceMs(config), 203_000);
  });
});
