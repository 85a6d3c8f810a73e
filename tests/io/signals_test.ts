// primeSignalDelivery: a process that ran out of descriptors can still register a signal
// listener. No timing involved: the child exhausts its descriptors before it registers, and
// reports whether signal delivery was set up before that (src/io/signals.ts says why it matters).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./_fd_exhaust_child.ts", import.meta.url));
const LINUX = Deno.build.os === "linux";

async function runChild(mode: "prime" | "late") {
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      `ulimit -n 64 && exec "$0" run -q --frozen -P=dev "$1" "$2"`,
      Deno.execPath(),
      CHILD,
      mode,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(out.stdout).split("\n");
  return {
    code: out.code,
    setUpBefore: lines[0] === "set up before: true",
    alive: /^alive after holding \d+ descriptors$/.test(lines[1] ?? ""),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test({
  name: "a process primed at start registers a signal listener with no descriptor free",
  ignore: !LINUX,
  fn: async () => {
    const child = await runChild("prime");
    assert.equal(child.code, 0, child.stderr);
    assert.ok(child.setUpBefore, "primeSignalDelivery set up signal delivery");
    assert.ok(child.alive);
  },
});

Deno.test({
  name: "without priming, Deno 2.9 dies registering the first listener with no descriptor free " +
    "(when a Deno release no longer does, primeSignalDelivery can go)",
  ignore: !LINUX,
  fn: async () => {
    const child = await runChild("late");
    if (child.setUpBefore) {
      // Deno's own set-up (its SIGUSR1 inspector listener, 500 ms into the event loop) came
      // before the descriptors ran out: nothing was left to fail.
      assert.equal(child.code, 0, child.stderr);
      assert.ok(child.alive);
      return;
    }
    assert.notEqual(child.code, 0, "the child survived without priming");
    assert.match(child.stderr, /Too many open files/);
    assert.ok(!child.alive);
  },
});
