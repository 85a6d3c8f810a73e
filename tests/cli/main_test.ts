import { ok, strictEqual } from "node:assert/strict";
import { BufferSink, COMMANDS, GROUPS, main, Output } from "../../src/cli/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { VERSION } from "../../src/meta/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

async function cli(argv: string[], cwd = Deno.cwd(), env: Record<string, string> = {}) {
  const stdout = new BufferSink();
  const stderr = new BufferSink();
  const code = await main(argv, { out: new Output(stdout, stderr), env: mapEnv(env), cwd });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

Deno.test("--version prints the version from deno.json", async () => {
  const r = await cli(["--version"]);
  strictEqual(r.code, 0);
  strictEqual(r.stdout, `bernstein ${VERSION}\n`);
});

Deno.test("--help lists every visible command and group; no arguments is a usage error", async () => {
  const help = await cli(["--help"]);
  strictEqual(help.code, 0);
  for (const g of GROUPS) ok(help.stdout.includes(`  ${g.name}`), g.name);
  for (const c of COMMANDS.filter((c) => c.path.length === 1 && !c.hidden)) {
    ok(help.stdout.includes(`  ${c.path[0]}`));
  }
  const none = await cli([]);
  strictEqual(none.code, 2);
});

Deno.test("an unknown command exits 2 and suggests the closest one", async () => {
  const r = await cli(["confg", "list"]);
  strictEqual(r.code, 2);
  strictEqual(
    r.stderr,
    "error[cli.unknown_command]: unknown command 'confg' (did you mean 'config'?)\n",
  );
  const verb = await cli(["config", "lst"]);
  strictEqual(verb.code, 2);
  ok(verb.stderr.includes("did you mean 'config list'?"));
});

Deno.test("an unknown flag exits 2 and suggests the closest flag", async () => {
  const r = await cli(["config", "list", "--jsn"]);
  strictEqual(r.code, 2);
  strictEqual(
    r.stderr,
    "error[cli.unknown_flag]: unknown flag '--jsn' for 'bernstein config list' (did you mean '--json'?)\n",
  );
});

Deno.test("a missing argument or an extra one is a usage error", async () => {
  const missing = await cli(["config", "get"]);
  strictEqual(missing.code, 2);
  ok(missing.stderr.startsWith("error[cli.missing_argument]: bernstein config get: missing <key>"));
  const extra = await cli(["config", "list", "surplus"]);
  strictEqual(extra.code, 2);
  ok(extra.stderr.includes("unexpected argument 'surplus'"));
});

Deno.test("help works on every level and for every command", async () => {
  for (const g of GROUPS) {
    const r = await cli([g.name, "--help"]);
    strictEqual(r.code, 0, g.name);
    const bare = await cli([g.name]);
    strictEqual(bare.code, 2, `bare group ${g.name} is a usage error`);
  }
  for (const c of COMMANDS) {
    const r = await cli([...c.path, "--help"]);
    strictEqual(r.code, 0, c.path.join(" "));
    ok(r.stdout.includes("Usage:"), c.path.join(" "));
    if (c.json) ok(r.stdout.includes("--json"), `${c.path.join(" ")} documents --json`);
  }
});

Deno.test("every command and flag has help text and every json command documents its shape", () => {
  for (const c of COMMANDS) {
    ok(c.summary.length > 0, c.path.join(" "));
    for (const f of c.flags ?? []) ok(f.help.length > 0, `${c.path.join(" ")} --${f.name}`);
    if (c.json && !c.hidden) {
      ok((c.description ?? "").includes("JSON"), `${c.path.join(" ")} describes its JSON`);
    }
  }
});

Deno.test("config validate exits 1 with one line per problem and JSON that says which layer", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agnets: 3\nmax_agents: x\n");
    const r = await cli(["config", "validate"], dir);
    strictEqual(r.code, 1);
    strictEqual(
      r.stderr,
      "warning[config.unknown_key]: bernstein.yaml:1:1: unknown key 'max_agnets'; ignored (did you mean 'max_agents'?)\n" +
        "error[config.invalid_value]: bernstein.yaml:2:13: max_agents: expected number, got string\n",
    );
    const j = await cli(["config", "validate", "--json"], dir);
    strictEqual(j.code, 1);
    const doc = JSON.parse(j.stdout);
    strictEqual(doc.ok, false);
    strictEqual(doc.problems.length, 2);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 3\n");
    strictEqual((await cli(["config", "validate"], dir)).code, 0);
  });
});

Deno.test("config get --json names the layer that set each value, env included", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 3\n");
    const r = await cli(["config", "get", "max_agents", "--json"], dir, {
      BERNSTEIN_MAX_AGENTS: "5",
    });
    strictEqual(r.code, 0);
    strictEqual(
      r.stdout,
      '{"key":"max_agents","set":true,"sources":{"max_agents":"env:BERNSTEIN_MAX_AGENTS"},"value":5}\n',
    );
    const plain = await cli(["config", "get", "tuning.agent.max_turns"], dir);
    strictEqual(plain.stdout, "30  (default)\n");
  });
});

Deno.test("config set warns when a higher layer still wins", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.writeTextFile(`${dir}/bernstein.yaml`, "max_agents: 3\n");
    const r = await cli(["config", "set", "max_agents", "8"], dir);
    strictEqual(r.code, 0);
    ok(r.stderr.includes("warning[config.shadowed]: max_agents is also set by bernstein.yaml"));
  });
});
