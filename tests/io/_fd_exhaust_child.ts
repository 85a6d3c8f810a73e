// Child of tests/io/signals_test.ts: run with a small descriptor limit, it opens /dev/null until
// none is left, then registers a signal listener (what a run's stop handler does once its task
// server is up), frees the descriptors and prints "alive". With "prime" as its argument it calls
// primeSignalDelivery first, as main.ts does. Its first line says whether signal delivery was
// already set up before the descriptors ran out (the kernel's caught-signal mask shows SIGTERM:
// set up by the priming, or by Deno itself once its event loop has run for 500 ms, which a slow
// machine can reach while loading this module).
import { primeSignalDelivery } from "../../src/io/mod.ts";

if (Deno.args[0] === "prime") primeSignalDelivery();
const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(Deno.readTextFileSync("/proc/self/status"));
const SIGTERM_BIT = 1n << 14n;
console.log(`set up before: ${caught !== null && (BigInt(`0x${caught[1]}`) & SIGTERM_BIT) !== 0n}`);
const held: Deno.FsFile[] = [];
try {
  for (;;) held.push(Deno.openSync("/dev/null"));
} catch (error) {
  if (!(error instanceof Error) || !/Too many open files/.test(error.message)) throw error;
}
const onTerm = () => {};
Deno.addSignalListener("SIGTERM", onTerm);
Deno.removeSignalListener("SIGTERM", onTerm);
for (const f of held) f.close();
console.log(`alive after holding ${held.length} descriptors`);
