// Test entry point: `bernstein` with the scripted test agent registered as multimodal, for the
// e2e tests that send it images (runBernstein's `scriptedMultimodal` option runs this instead of
// main.ts). The first argument is the channel (prompt-text or file-reference), the rest are
// bernstein's. No configuration key, flag or environment variable can do this: only this file.
import { registerScriptedAsMultimodal } from "../../src/adapters/capabilities.ts";
import { primeSignalDelivery } from "../../src/io/signals.ts";

const [channel, ...args] = Deno.args;
if (channel !== "prompt-text" && channel !== "file-reference") {
  console.error(`multimodal_main.ts: first argument must be prompt-text or file-reference`);
  Deno.exit(2);
}
primeSignalDelivery();
registerScriptedAsMultimodal(channel);
const { main } = await import("../../src/cli/mod.ts");
Deno.exit(await main(args));
