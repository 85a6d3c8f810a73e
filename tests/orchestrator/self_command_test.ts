// How bernstein starts itself (the agents' `bernstein` shim, background runs, the demo's
// verifier): from source, the same permission set and V8 flags as the compiled binary.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { mapEnv } from "../../src/io/mod.ts";
import { SOURCE_RUN_FLAGS, v8FlagsArg } from "../../src/meta/mod.ts";
import { selfCommand, verifyCommand } from "../../src/orchestrator/mod.ts";

Deno.test("source runs of bernstein and bernstein-verify carry their permission set and V8 flags", () => {
  const env = mapEnv({ HOME: "/home/op" });
  const self = selfCommand(env);
  const verify = verifyCommand(env);
  strictEqual(self.argv[0], Deno.execPath());
  ok(self.argv.includes("-P=bernstein") && self.argv.includes(v8FlagsArg()), self.argv.join(" "));
  ok(self.argv[self.argv.length - 1].endsWith("main.ts"));
  ok(verify.argv.includes("-P=verify") && verify.argv.includes(v8FlagsArg()));
  ok(verify.argv[verify.argv.length - 1].endsWith("verify.ts"));
  // Source runs load a command's modules when it imports them (no walk of the whole graph).
  for (const flag of SOURCE_RUN_FLAGS) ok(self.argv.includes(flag) && verify.argv.includes(flag));
  deepStrictEqual(self.env, { DENO_DIR: "/home/op/.cache/deno", DENO_NO_UPDATE_CHECK: "1" });
  deepStrictEqual(verify.env, self.env);
});
