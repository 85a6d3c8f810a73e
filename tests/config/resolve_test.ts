import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  DEFAULT_TUNING,
  objectLayer,
  parseYamlLayer,
  resolveConfig,
  type YamlLayer,
} from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";

function yaml(label: string, text: string, file = label): YamlLayer {
  const parsed = parseYamlLayer(text, label, file);
  strictEqual(parsed.problems.length, 0, JSON.stringify(parsed.problems));
  return parsed.layer;
}

Deno.test("with no layers the effective config is the defaults, each sourced 'default'", () => {
  const r = resolveConfig({ layers: [], env: mapEnv({}) });
  ok(r.config);
  strictEqual(r.config.max_agents, 4);
  strictEqual(r.config.cli, "auto");
  deepStrictEqual(r.config.tuning, DEFAULT_TUNING);
  strictEqual(r.sources.get("tuning.agent.max_turns"), "default");
  strictEqual(r.problems.length, 0);
});

Deno.test("precedence: defaults < .sdd/config.yaml < bernstein.yaml < overlay < override < env < flags", () => {
  const layers = [
    yaml(
      ".sdd/config.yaml",
      "max_agents: 2\ncli: codex\ngoal: from-sdd\ninternal_llm_model: m-sdd\nbudget: {usd: 1}\n",
    ),
    yaml(
      "bernstein.yaml",
      "max_agents: 3\ncli: claude\ninternal_llm_model: m-project\nbudget: {usd: 2}\n",
    ),
    yaml("overlay", "max_agents: 5\ninternal_llm_model: m-overlay\n"),
    yaml("BERNSTEIN_CONFIG_OVERRIDE", "{max_agents: 8}"),
  ];
  const env = mapEnv({ BERNSTEIN_MAX_AGENTS: "9" });
  const table: [string, unknown, string][] = [];
  const r = resolveConfig({ layers, env, flags: { cli: "gemini" } });
  ok(r.config);
  table.push(["goal", r.config.goal, r.sources.get("goal") ?? ""]);
  table.push(["budget.usd", r.config.budget?.usd, r.sources.get("budget.usd") ?? ""]);
  table.push([
    "internal_llm_model",
    r.config.internal_llm_model,
    r.sources.get("internal_llm_model") ?? "",
  ]);
  table.push(["max_agents", r.config.max_agents, r.sources.get("max_agents") ?? ""]);
  table.push(["cli", r.config.cli, r.sources.get("cli") ?? ""]);
  table.push([
    "tuning.agent.max_turns",
    r.config.tuning.agent.max_turns,
    r.sources.get("tuning.agent.max_turns") ?? "",
  ]);
  deepStrictEqual(table, [
    ["goal", "from-sdd", ".sdd/config.yaml"],
    ["budget.usd", 2, "bernstein.yaml"],
    ["internal_llm_model", "m-overlay", "overlay"],
    ["max_agents", 9, "env:BERNSTEIN_MAX_AGENTS"],
    ["cli", "gemini", "flags"],
    ["tuning.agent.max_turns", 30, "default"],
  ]);
  // Without the env variable the inline override wins over the overlay.
  const r2 = resolveConfig({ layers, env: mapEnv({}) });
  strictEqual(r2.config?.max_agents, 8);
  strictEqual(r2.sources.get("max_agents"), "BERNSTEIN_CONFIG_OVERRIDE");
});

Deno.test("nested maps merge key by key; scalars and lists replace", () => {
  const r = resolveConfig({
    layers: [
      yaml(
        "bernstein.yaml",
        "tuning:\n  agent:\n    max_turns: 40\nnetwork:\n  allowed_ips: [10.0.0.1, 10.0.0.2]\n",
      ),
      yaml(
        "overlay",
        "tuning:\n  agent:\n    kill_grace_s: 1\nnetwork:\n  allowed_ips: [127.0.0.1]\n",
      ),
    ],
    env: mapEnv({}),
  });
  ok(r.config);
  strictEqual(r.config.tuning.agent.max_turns, 40);
  strictEqual(r.config.tuning.agent.kill_grace_s, 1);
  strictEqual(r.config.tuning.agent.idle_log_age_threshold_s, 180);
  deepStrictEqual(r.config.network.allowed_ips, ["127.0.0.1"]);
  strictEqual(r.sources.get("network.allowed_ips"), "overlay");
});

Deno.test("an empty overlay is the identity", () => {
  const base = [yaml("bernstein.yaml", "max_agents: 3\nlineage: {strict: true}\n")];
  const without = resolveConfig({ layers: base, env: mapEnv({}) });
  const withEmpty = resolveConfig({ layers: [...base, yaml("overlay", "")], env: mapEnv({}) });
  deepStrictEqual(withEmpty.config, without.config);
  deepStrictEqual([...withEmpty.sources], [...without.sources]);
});

Deno.test("unknown top-level keys warn with file, line and the closest known key, and are dropped", () => {
  const r = resolveConfig({
    layers: [yaml("bernstein.yaml", "max_agents: 2\n\nmax_agnets: 3\ntasks:\n  - a\nzzzzzz: 1\n")],
    env: mapEnv({}),
  });
  ok(r.config);
  strictEqual(r.config.max_agents, 2);
  const warnings = r.problems.map((p) => [p.severity, p.code, p.location, p.hint]);
  deepStrictEqual(warnings, [
    ["warning", "config.unknown_key", "bernstein.yaml:3:1", "did you mean 'max_agents'?"],
    ["warning", "config.unknown_key", "bernstein.yaml:4:1", "did you mean 'cells'?"],
    ["warning", "config.unknown_key", "bernstein.yaml:6:1", undefined],
  ]);
  ok(!("max_agnets" in (r.merged as Record<string, unknown>)));
});

Deno.test("nested unknown keys warn with their path", () => {
  const r = resolveConfig({
    layers: [yaml("bernstein.yaml", "lineage:\n  strict: true\n  strct: false\n")],
    env: mapEnv({}),
  });
  strictEqual(r.config?.lineage.strict, true);
  strictEqual(r.problems[0].message, "unknown key 'strct' in lineage; ignored");
  strictEqual(r.problems[0].location, "bernstein.yaml:3:3");
  strictEqual(r.problems[0].hint, "did you mean 'strict'?");
});

Deno.test("wrong types are errors at file:line:col with the expected type", () => {
  const r = resolveConfig({
    layers: [
      yaml(
        "bernstein.yaml",
        "max_agents: many\nstorage:\n  backend: mongo\ntuning:\n  agent:\n    max_turns: -1\n",
      ),
    ],
    env: mapEnv({}),
  });
  strictEqual(r.config, undefined);
  deepStrictEqual(r.problems.map((p) => [p.severity, p.location, p.message]), [
    ["error", "bernstein.yaml:1:13", "max_agents: expected number, got string"],
    [
      "error",
      "bernstein.yaml:3:12",
      "storage.backend: 'mongo' is not one of memory, postgres, redis",
    ],
    [
      "warning",
      "bernstein.yaml:6:16",
      "tuning.agent.max_turns: number must be greater than 0 (a watchdog needs a positive, " +
      "finite number); ignored, tuning.agent.max_turns comes from the next layer",
    ],
  ]);
});

Deno.test("YAML syntax errors and non-mapping documents are reported with a location", () => {
  const bad = parseYamlLayer("a: [1, 2\nb: 3\n", "bernstein.yaml", "bernstein.yaml");
  strictEqual(bad.problems[0].code, "config.yaml_syntax");
  ok(/^bernstein\.yaml:\d+:\d+$/.test(bad.problems[0].location ?? ""));
  const list = parseYamlLayer("- a\n- b\n", "bernstein.yaml", "bernstein.yaml");
  strictEqual(list.problems[0].code, "config.not_a_mapping");
});

for (
  const [name, path] of [
    ["BERNSTEIN_MAX_TURNS", ["agent", "max_turns"]],
    ["BERNSTEIN_STALL_THRESHOLD_S", ["orchestrator", "stalled_manager_threshold_s"]],
    ["BERNSTEIN_STALLED_RUN_GRACE_S", ["orchestrator", "stalled_run_grace_s"]],
    ["BERNSTEIN_STALLED_RUN_TICKS", ["orchestrator", "stalled_run_ticks"]],
  ] as const
) {
  Deno.test(`${name}: bad values warn and fall through to the next tier, good values win`, () => {
    const layer = yaml("bernstein.yaml", `tuning:\n  ${path[0]}:\n    ${path[1]}: 77\n`);
    for (const bad of ["0", "-5", "NaN", "inf", "Infinity", "abc", "", " ", "1e999", "0x10"]) {
      const r = resolveConfig({ layers: [layer], env: mapEnv({ [name]: bad }) });
      ok(r.config, `${name}=${bad}`);
      const tuning = r.config.tuning as unknown as Record<string, Record<string, number>>;
      strictEqual(tuning[path[0]][path[1]], 77, `${name}=${JSON.stringify(bad)} must not apply`);
      ok(
        r.problems.some((p) => p.code === "config.env_invalid" && p.message.startsWith(`${name}=`)),
        `${name}=${bad} warns`,
      );
    }
    const good = name === "BERNSTEIN_MAX_TURNS" ? "12" : "12.5";
    const r = resolveConfig({ layers: [layer], env: mapEnv({ [name]: good }) });
    const tuning = r.config?.tuning as unknown as Record<string, Record<string, number>>;
    strictEqual(tuning[path[0]][path[1]], Number(good));
    strictEqual(r.sources.get(`tuning.${path.join(".")}`), `env:${name}`);
  });
}

Deno.test("BERNSTEIN_MAX_TURNS refuses a fraction", () => {
  const r = resolveConfig({ layers: [], env: mapEnv({ BERNSTEIN_MAX_TURNS: "2.5" }) });
  strictEqual(r.config?.tuning.agent.max_turns, 30);
  ok(r.problems.some((p) => p.code === "config.env_invalid"));
});

Deno.test("a stalled-manager threshold the manager's deadline would beat warns, whichever tier set it", () => {
  const high = (r: ReturnType<typeof resolveConfig>) =>
    r.problems.find((p) => p.code === "config.stall_threshold_high");
  // The manager's deadline is 1800 s by default (max_agent_runtime_s over scope_runtime_s.small).
  const fromEnv = resolveConfig({
    layers: [],
    env: mapEnv({ BERNSTEIN_STALL_THRESHOLD_S: "1800" }),
  });
  const w = high(fromEnv);
  ok(w && w.message.includes("env:BERNSTEIN_STALL_THRESHOLD_S"), w?.message);
  ok(w.message.includes("manager's deadline (1800s"), w.message);
  const fromYaml = resolveConfig({
    layers: [
      yaml(
        "bernstein.yaml",
        "tuning:\n  orchestrator:\n    max_agent_runtime_s: 120\n" +
          "    scope_runtime_s: {small: 60}\n",
      ),
    ],
    env: mapEnv({}),
  });
  ok(high(fromYaml)?.message.includes("(170, set by default)"));
  // Above the idle-log threshold is no conflict (idleness is only reported): the design's own
  // values load without a warning.
  for (const value of ["300", "900"]) {
    const r = resolveConfig({ layers: [], env: mapEnv({ BERNSTEIN_STALL_THRESHOLD_S: value }) });
    strictEqual(high(r), undefined, value);
  }
  strictEqual(high(resolveConfig({ layers: [], env: mapEnv({}) })), undefined);
});

Deno.test("internal LLM provider and model come from the environment over yaml", () => {
  const r = resolveConfig({
    layers: [yaml("bernstein.yaml", "internal_llm_provider: a\ninternal_llm_model: b\n")],
    env: mapEnv({
      BERNSTEIN_INTERNAL_LLM_PROVIDER: "ollama",
      BERNSTEIN_INTERNAL_LLM_MODEL: "qwen3",
    }),
  });
  strictEqual(r.config?.internal_llm_provider, "ollama");
  strictEqual(r.config?.internal_llm_model, "qwen3");
});

Deno.test("a negative error budget clamps to 0 instead of failing", () => {
  const r = resolveConfig({
    layers: [objectLayer("flags", { tuning: { slo: { error_budget_min_failures: -4 } } })],
    env: mapEnv({}),
  });
  strictEqual(r.config?.tuning.slo.error_budget_min_failures, 0);
});

Deno.test("test_multimodal is no configuration key: an unknown key, ignored with a warning, for every adapter", () => {
  for (const adapter of ["scripted", "claude"]) {
    const r = resolveConfig({
      layers: [yaml("bernstein.yaml", `adapters:\n  ${adapter}:\n    test_multimodal: true\n`)],
      env: mapEnv({}),
    });
    ok(r.config, adapter);
    deepStrictEqual(r.config.adapters?.[adapter], {}, "nothing of it reaches the adapter");
    const problem = r.problems.find((p) => p.code === "config.unknown_key");
    strictEqual(problem?.severity, "warning");
    ok(/unknown key '.*test_multimodal'/.test(problem.message), problem.message);
  }
});

Deno.test("attachments.deny takes a list of globs", () => {
  const r = resolveConfig({
    layers: [yaml("bernstein.yaml", "attachments:\n  deny: ['secrets/**']\n")],
    env: mapEnv({}),
  });
  deepStrictEqual(r.config?.attachments, { deny: ["secrets/**"] });
  const bad = resolveConfig({
    layers: [
      parseYamlLayer("attachments:\n  deny: secrets\n", "bernstein.yaml", "bernstein.yaml").layer,
    ],
    env: mapEnv({}),
  });
  strictEqual(bad.config, undefined);
});

Deno.test("fallback_model still loads with a deprecation note pointing at the ladder; both at once is an error", () => {
  const sugar = resolveConfig({
    layers: [yaml("bernstein.yaml", "role_model_policy:\n  backend:\n    fallback_model: big\n")],
    env: mapEnv({}),
  });
  ok(sugar.config);
  deepStrictEqual(sugar.problems.map((p) => [p.severity, p.code, p.location]), [
    ["warning", "config.deprecated", "bernstein.yaml:3:5"],
  ]);
  ok(sugar.problems[0].message.includes("ladder: [{model: big}]"), sugar.problems[0].message);
  const both = resolveConfig({
    layers: [
      yaml(
        "bernstein.yaml",
        "role_model_policy:\n  backend:\n    fallback_model: big\n    ladder: [{model: huge}]\n",
      ),
    ],
    env: mapEnv({}),
  });
  deepStrictEqual(both.problems.map((p) => [p.severity, p.code]), [[
    "error",
    "config.invalid_value",
  ]]);
});
