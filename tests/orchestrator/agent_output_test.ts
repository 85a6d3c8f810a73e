// An agent's output when its session log cannot be written (the disk filled up): nothing throws
// into the process's stream reader, the output is still read and parsed, and the failure is kept
// for the agent's result, as a storage failure.
import assert from "node:assert/strict";
import { getAdapter } from "../../src/adapters/mod.ts";
import { isStorageFailure } from "../../src/errors/mod.ts";
import type { ProgressEvent } from "../../src/adapters/mod.ts";
import { AgentOutput, type SessionLog } from "../../src/orchestrator/_agent_output.ts";

/** A log that takes `room` bytes, then fails like a full disk. */
function fillingLog(room: number): SessionLog & { written: number; closed: boolean } {
  return {
    written: 0,
    closed: false,
    writeSync(p: Uint8Array): number {
      if (this.written >= room) throw new Error("No space left on device (os error 28)");
      const n = Math.min(p.length, room - this.written);
      this.written += n;
      return n;
    },
    close() {
      this.closed = true;
    },
  };
}

const line = (text: string) =>
  JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text }] } }) + "\n";
const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("agent output: a full disk stops the log, not the reading; the failure is kept", () => {
  const log = fillingLog(40);
  const events: ProgressEvent[] = [];
  const output = new AgentOutput(log, getAdapter("scripted").parser(), undefined, (e) => {
    events.push(e);
  });
  for (let i = 0; i < 20; i++) output.stdout(bytes(line(`step ${i}`)));
  output.stderr(bytes("a warning\n"));
  output.finish();
  assert.equal(log.written, 40, "the log took what fit (a short write is continued, not lost)");
  assert.ok(log.closed);
  const failure = output.logFailure;
  assert.ok(failure !== undefined, "the failure is kept for the agent's result");
  assert.ok(isStorageFailure(failure), failure.message);
  assert.equal(events.length, 20, "every line was still parsed after the log failed");
});

Deno.test("agent output: a log with room keeps everything and reports no failure", () => {
  const log = fillingLog(1 << 20);
  const output = new AgentOutput(log, getAdapter("scripted").parser(), undefined, () => {});
  const text = line("a") + line("b");
  output.stdout(bytes(text));
  output.finish();
  assert.equal(log.written, bytes(text).length);
  assert.equal(output.logFailure, undefined);
});
