// Entry point of the `bernstein` binary: everything lives in src/cli. `--version` is answered
// before the command table loads, so it costs no more than a hello-world.
if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-V")) {
  const { MAIN_BINARY, VERSION } = await import("./src/meta/mod.ts");
  console.log(`${MAIN_BINARY} ${VERSION}`);
  Deno.exit(0);
}
const { main } = await import("./src/cli/mod.ts");
Deno.exit(await main(Deno.args));
