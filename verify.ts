// Entry point of the `bernstein-verify` binary (read-only: no write, net, env or run).
import { VERIFY_BINARY, VERSION } from "./src/meta/mod.ts";

function run(argv: readonly string[]): number {
  if (argv[0] === "--version" || argv[0] === "-V") {
    console.log(`${VERIFY_BINARY} ${VERSION}`);
    return 0;
  }
  console.log(
    `${VERIFY_BINARY}: not implemented yet (pack, chain and forks land with the compliance issue)`,
  );
  console.error(
    JSON.stringify({ ok: false, kind: "none", stats: {}, errors: ["not implemented"] }),
  );
  return 1;
}

Deno.exit(run(Deno.args));
