// Entry point of the `bernstein` binary: everything lives in src/cli.
import { main } from "./src/cli/mod.ts";

Deno.exit(await main(Deno.args));
