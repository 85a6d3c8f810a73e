// Every variable an adapter passes through must be readable by the `bernstein` binary: under
// its env permission a variable outside the list reads as unset, so a missing name here would
// silently drop an API key from the agent's environment.
import assert from "node:assert/strict";
import { ADAPTERS, BASE_AGENT_ENV } from "../../src/adapters/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

async function allowed(): Promise<(name: string) => boolean> {
  const deno = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}deno.json`));
  const patterns: string[] = deno.permissions.bernstein.env.allow;
  return (name) =>
    patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
}

Deno.test("every env name an adapter passes through is in the bernstein env permission", async () => {
  const ok = await allowed();
  const missing: string[] = [];
  for (const name of BASE_AGENT_ENV) if (!ok(name)) missing.push(`base: ${name}`);
  for (const adapter of ADAPTERS) {
    for (const name of adapter.env) if (!ok(name)) missing.push(`${adapter.name}: ${name}`);
  }
  assert.deepEqual(missing, []);
});

Deno.test("the proxy variables an operator passes to agents through adapters.<name>.env are readable", async () => {
  const ok = await allowed();
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"]) {
    assert.ok(ok(name), `${name} reads as unset under the bernstein env permission`);
  }
});
