// Entry point of the `bernstein` binary: everything lives in src/cli. `--version` is answered
// before the command table loads, so it costs no more than a hello-world.
import { primeSignalDelivery } from "./src/io/signals.ts";

if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-V")) {
  const { MAIN_BINARY, VERSION } = await import("./src/meta/mod.ts");
  console.log(`${MAIN_BINARY} ${VERSION}`);
  Deno.exit(0);
}
// Signal delivery is set up before anything opens a descriptor: Deno panics when it sets it up
// later with none free (a server flooded with connections; src/io/signals.ts).
primeSignalDelivery();
// Inside an agent's sandbox: the network init that starts the agent. It runs once per agent,
// so it loads its own small module alone (not the sandbox folder's mod.ts: ~13 ms of CPU less
// per agent start). A computed specifier, as below: `--version` never loads it.
if (Deno.args[0] === "__sandbox-init") {
  const SANDBOX_INIT_MODULE = "./src/sandbox/net_init.ts";
  const { runSandboxInit } = await import(
    SANDBOX_INIT_MODULE
  ) as typeof import("./src/sandbox/net_init.ts");
  Deno.exit(await runSandboxInit(Deno.args.slice(1)));
}
// A computed specifier: `deno run` loads every literal import, dynamic ones included, before
// the first line runs (~12 ms for the command table's graph, which `--version` never needs).
// `deno compile` is told to include it (scripts/runtime_flags.ts).
const CLI_MODULE = "./src/cli/mod.ts";
const { main } = await import(CLI_MODULE) as typeof import("./src/cli/mod.ts");
Deno.exit(await main(Deno.args));
