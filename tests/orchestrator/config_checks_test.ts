// What the schema cannot see is refused before anything starts, at the key's location.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseYamlLayer, resolveConfig } from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { checkConfig, resolveTaskCli } from "../../src/orchestrator/mod.ts";

function checked(text: string) {
  const r = resolveConfig({
    layers: [parseYamlLayer(text, "bernstein.yaml", "bernstein.yaml").layer],
    env: mapEnv({}),
  });
  ok(r.config, JSON.stringify(r.problems));
  return checkConfig({ config: r.config, locate: r.locate });
}

Deno.test("unknown adapter names are errors at their key, with the known ones and a suggestion", () => {
  const problems = checked(
    "cli: clade\ninternal_llm_provider: gemni\nrole_model_policy:\n  qa:\n    cli: codx\n" +
      "    ladder: [{cli: scripted}, {cli: nope}]\n",
  );
  deepStrictEqual(problems.map((p) => [p.code, p.location, p.message.split(";")[0], p.hint]), [
    [
      "config.unknown_adapter",
      "bernstein.yaml:1:6",
      "cli: unknown adapter 'clade'",
      "did you mean 'claude'?",
    ],
    [
      "config.unknown_adapter",
      "bernstein.yaml:2:24",
      "internal_llm_provider: unknown adapter 'gemni'",
      "did you mean 'gemini'?",
    ],
    [
      "config.unknown_adapter",
      "bernstein.yaml:5:10",
      "role_model_policy.qa.cli: unknown adapter 'codx'",
      "did you mean 'codex'?",
    ],
    [
      "config.unknown_adapter",
      "bernstein.yaml:6:37",
      "role_model_policy.qa.ladder.1.cli: unknown adapter 'nope'",
      undefined,
    ],
  ]);
  ok(problems[0].message.includes("known: "), "lists the known adapters");
});

Deno.test("an endpoint no local_endpoints entry defines and a bad allowed IP are errors at their key", () => {
  const problems = checked(
    "local_endpoints:\n  workhorse: {base_url: 'http://127.0.0.1:11434/v1'}\n" +
      "role_model_policy:\n  linter: {endpoint: workhors}\n" +
      "network:\n  allowed_ips: ['127.0.0.1', '10.0.0.0/33', 'localhost']\n",
  );
  deepStrictEqual(problems.map((p) => [p.code, p.location]), [
    ["config.unknown_endpoint", "bernstein.yaml:4:22"],
    ["config.bad_allowed_ip", "bernstein.yaml:6:30"],
    ["config.bad_allowed_ip", "bernstein.yaml:6:45"],
  ]);
  strictEqual(problems[0].hint, "did you mean 'workhorse'?");
  deepStrictEqual(checked("cli: auto\nnetwork:\n  allowed_ips: ['::1', '10.0.0.0/8']\n"), []);
});

Deno.test("a role's cli is exclusive for it: --cli sets the default only for other tasks", async () => {
  const r = resolveConfig({
    layers: [
      parseYamlLayer("role_model_policy:\n  qa: {cli: scripted}\n", "bernstein.yaml").layer,
    ],
    env: mapEnv({}),
  });
  ok(r.config);
  const lookup = { which: () => Promise.resolve(undefined) };
  const qa = await resolveTaskCli({ id: "t", role: "qa", cli: null }, {
    config: r.config,
    lookup,
    cliOverride: "goose",
  });
  strictEqual(qa.adapter.name, "scripted");
});

Deno.test("provider_availability chains: an unknown adapter or endpoint is an error at its element", () => {
  const problems = checked(
    "local_endpoints:\n  workhorse: {base_url: 'http://127.0.0.1:11434/v1'}\n" +
      "provider_availability:\n  roles:\n    backend:\n      conformance_floor: basic\n" +
      "      chain:\n        - {adapter: claude, conformance: basic}\n" +
      "        - {adapter: codx, conformance: basic, endpoint: workhors}\n",
  );
  deepStrictEqual(problems.map((p) => [p.code, p.message.split(":")[0], p.hint]), [
    [
      "config.unknown_adapter",
      "provider_availability.roles.backend.chain.1.adapter",
      "did you mean 'codex'?",
    ],
    [
      "config.unknown_endpoint",
      "provider_availability.roles.backend.chain.1.endpoint",
      "did you mean 'workhorse'?",
    ],
  ]);
  ok(problems.every((p) => p.location?.startsWith("bernstein.yaml:9:")), JSON.stringify(problems));
});
