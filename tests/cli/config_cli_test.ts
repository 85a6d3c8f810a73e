// `bernstein config …` and doctor on the configuration: broken layers stop the read commands,
// keys that do nothing yet say so with their location, --strict fails on any warning.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { BufferSink, main, Output } from "../../src/cli/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

async function cli(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const stdout = new BufferSink();
  const stderr = new BufferSink();
  const code = await main(argv, { out: new Output(stdout, stderr), env: mapEnv(env), cwd });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const BROKEN = "max_agents: 3\ntuning:\n  agent:\n    kill_grace_s: soon\n";

Deno.test("config get and config list fail with validate's FILE:LINE:COL error on a broken layer", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, BROKEN);
    const line = "error[config.invalid_value]: bernstein.yaml:4:19: " +
      "tuning.agent.kill_grace_s: expected number, got string\n";
    const validate = await cli(["config", "validate"], dir);
    strictEqual(validate.code, 1);
    ok(validate.stderr.includes(line), validate.stderr);
    for (
      const argv of [["config", "get", "max_agents"], ["config", "list"], [
        "config",
        "list",
        "--json",
      ]]
    ) {
      const r = await cli(argv, dir);
      strictEqual(r.code, 2, argv.join(" "));
      strictEqual(r.stdout, "", `${argv.join(" ")} prints no values`);
      strictEqual(r.stderr, line, argv.join(" "));
    }
    // The overlay is a layer like any other.
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 3\n");
    await Deno.writeTextFile(`${dir}/.git/bernstein-overlay.yaml`, "max_agents: [\n");
    const overlay = await cli(["config", "get", "max_agents"], dir);
    strictEqual(overlay.code, 2);
    ok(overlay.stderr.startsWith("error[config.yaml_syntax]: "), overlay.stderr);
    ok(overlay.stderr.includes("bernstein-overlay.yaml:"), overlay.stderr);
  });
});

Deno.test("config get names the layer that set a value in its human output", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 3\n");
    strictEqual((await cli(["config", "get", "max_agents"], dir)).stdout, "3  (bernstein.yaml)\n");
    const env = await cli(["config", "get", "max_agents"], dir, { BERNSTEIN_MAX_AGENTS: "6" });
    strictEqual(env.stdout, "6  (env:BERNSTEIN_MAX_AGENTS)\n");
    strictEqual((await cli(["config", "get", "cli"], dir)).stdout, "auto  (default)\n");
  });
});

Deno.test("a key that does nothing yet warns config.not_implemented at its location; --strict fails", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(
      `${dir}/bernstein.yaml`,
      "max_agents: 2\nbridges:\n  openclaw:\n    enabled: true\n",
    );
    const r = await cli(["config", "validate"], dir);
    strictEqual(r.code, 0);
    strictEqual(
      r.stderr,
      "warning[config.not_implemented]: bernstein.yaml:4:5: bridges.openclaw.enabled is accepted but has no " +
        "effect yet (no issue builds it yet)\n",
    );
    const strict = await cli(["config", "validate", "--strict"], dir);
    strictEqual(strict.code, 1);
    ok(strict.stdout.includes("NOT STRICT-CLEAN"), strict.stdout);
    const json = JSON.parse((await cli(["config", "validate", "--strict", "--json"], dir)).stdout);
    strictEqual(json.ok, false);
    deepStrictEqual(json.problems.map((p: { code: string }) => p.code), ["config.not_implemented"]);
    // Nothing set: nothing to warn about, and --strict passes.
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 2\n");
    strictEqual((await cli(["config", "validate", "--strict"], dir)).code, 0);
  });
});

Deno.test("doctor prints the not-implemented warning too", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(
      `${dir}/bernstein.yaml`,
      "budget:\n  usd: 5\n",
    );
    const r = await cli(["doctor", "--json"], dir);
    const doc = JSON.parse(r.stdout);
    const config = doc.checks.filter((c: { name: string }) => c.name === "config");
    deepStrictEqual(
      config.map((
        c: { status: string; detail: string; hint: string },
      ) => [c.status, c.detail, c.hint]),
      [[
        "WARN",
        "bernstein.yaml:2:3: budget.usd is accepted but has no effect yet",
        "no issue builds it yet",
      ]],
    );
  });
});

Deno.test("an unreachable storage URL does not hide the other problems of config validate", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(
      `${dir}/bernstein.yaml`,
      "storage:\n  backend: postgres\n  database_url: postgres://u@127.0.0.1:1/db\n" +
        "bridges:\n  openclaw:\n    enabled: true\n",
    );
    const r = await cli(["config", "validate"], dir);
    strictEqual(r.code, 2);
    const lines = r.stderr.trim().split("\n");
    ok(lines[0].startsWith("warning[config.not_implemented]: bernstein.yaml:6:5"), r.stderr);
    ok(lines[1].startsWith("error[storage.unreachable]"), r.stderr);
  });
});
