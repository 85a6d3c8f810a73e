import assert from "node:assert/strict";
import {
  ADAPTER_NAMES,
  AdapterError,
  ADAPTERS,
  AUTO_PREFERENCE,
  CAPABILITY_TABLE,
  checkAvailability,
  cliForRole,
  endpointForRole,
  getAdapter,
  mapPathLookup,
  resolveCli,
  type ScriptedRuntime,
  scriptedRuntime,
  systemPathLookup,
} from "../../src/adapters/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const noScripted = () =>
  Promise.resolve<ScriptedRuntime>({ ok: false, reason: "compiled binary (test)" });

Deno.test("every adapter the issue names is registered, once", () => {
  assert.deepEqual([...ADAPTER_NAMES].sort(), [
    "aider",
    "amp",
    "claude",
    "codex",
    "cursor",
    "gemini",
    "generic",
    "goose",
    "ollama",
    "opencode",
    "qwen",
    "scripted",
  ]);
  assert.equal(new Set(ADAPTER_NAMES).size, ADAPTER_NAMES.length);
});

Deno.test("the capability table has exactly one row per adapter and adapters use that row", () => {
  assert.deepEqual(Object.keys(CAPABILITY_TABLE).sort(), [...ADAPTER_NAMES].sort());
  for (const adapter of ADAPTERS) {
    assert.equal(adapter.capabilities, CAPABILITY_TABLE[adapter.name], adapter.name);
    const caps = adapter.capabilities;
    assert.equal(caps.multimodal, caps.max_attachment_bytes > 0, adapter.name);
    assert.equal(caps.multimodal, caps.image_types.length > 0, adapter.name);
    assert.equal(caps.max_turns, adapter.max_turns_flag !== null || adapter.name === "generic");
  }
});

Deno.test("auto preference lists only registered adapters, and not the test or server ones", () => {
  for (const name of AUTO_PREFERENCE) assert.ok(ADAPTER_NAMES.includes(name), name);
  for (const name of ["scripted", "generic", "ollama"]) assert.ok(!AUTO_PREFERENCE.includes(name));
});

Deno.test("cli: auto takes the first available adapter in preference order", async () => {
  const lookup = mapPathLookup({ qwen: "/bin/qwen", gemini: "/bin/gemini", aider: "/bin/aider" });
  const picked = await resolveCli("auto", { lookup, scripted: noScripted });
  assert.equal(picked.adapter.name, "gemini");
  assert.equal(picked.executable, "/bin/gemini");
  assert.equal(picked.auto, true);
});

Deno.test("cli: auto with nothing installed refuses with the names it looked for", async () => {
  await assert.rejects(
    resolveCli("auto", { lookup: mapPathLookup({}), scripted: noScripted, location: "cli" }),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.none_available" &&
      e.message.includes("claude, codex") && e.location === "cli",
  );
});

Deno.test("an unknown cli is refused with the adapters that would work and a suggestion", async () => {
  const lookup = mapPathLookup({ codex: "/bin/codex", claude: "/bin/claude" });
  await assert.rejects(
    resolveCli("cladue", { lookup, scripted: noScripted, location: "role_model_policy.qa.cli" }),
    (e: unknown) => {
      assert.ok(e instanceof AdapterError);
      assert.equal(e.code, "adapter.unknown");
      assert.equal(e.location, "role_model_policy.qa.cli");
      assert.match(e.message, /adapters that would work here: claude, codex$/);
      assert.equal(e.hint, "did you mean 'claude'?");
      return true;
    },
  );
});

Deno.test("a registered but missing cli is refused, never replaced by another", async () => {
  const lookup = mapPathLookup({ codex: "/bin/codex" });
  await assert.rejects(
    resolveCli("claude", { lookup, scripted: noScripted }),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.unavailable" &&
      /'claude' not found on PATH; adapters that would work here: codex/.test(e.message),
  );
});

Deno.test("adapters.<name>.binary overrides the executable looked up", async () => {
  const lookup = mapPathLookup({ "/opt/claude-2/bin/claude": "/opt/claude-2/bin/claude" });
  const settings = { claude: { binary: "/opt/claude-2/bin/claude" } };
  const found = await resolveCli("claude", { lookup, settings, scripted: noScripted });
  assert.equal(found.executable, "/opt/claude-2/bin/claude");
  assert.equal(found.adapter.binary, "/opt/claude-2/bin/claude");
});

Deno.test("generic is unavailable until adapters.generic.command is set", async () => {
  const lookup = mapPathLookup({ "my-agent": "/usr/local/bin/my-agent" });
  const bare = await checkAvailability("generic", { lookup });
  assert.deepEqual(bare, {
    name: "generic",
    available: false,
    reason: "adapters.generic.command is not set",
  });
  const settings = { generic: { command: ["my-agent", "--go"], flags: ["--go"] } };
  const configured = await checkAvailability("generic", { lookup, settings });
  assert.equal(configured.path, "/usr/local/bin/my-agent");
  const adapter = getAdapter("generic", settings);
  assert.deepEqual(adapter.flags, [{ flag: "--go", help: ["--help"] }]);
});

Deno.test("scripted resolves to this Deno from a source checkout, and says why not elsewhere", async () => {
  const here = await scriptedRuntime();
  assert.ok(here.ok, "the test runs from a checkout with deno");
  if (here.ok) {
    assert.equal(here.deno, Deno.execPath());
    assert.match(here.script, /fixtures\/agents\/scripted_agent\.ts$/);
  }
  const found = await checkAvailability("scripted", { lookup: mapPathLookup({}) });
  assert.equal(found.available, true);
  const compiled = await checkAvailability("scripted", {
    lookup: mapPathLookup({}),
    scripted: noScripted,
  });
  assert.deepEqual(compiled, {
    name: "scripted",
    available: false,
    reason: "compiled binary (test)",
  });
});

Deno.test("getAdapter refuses unknown names with the registered list", () => {
  assert.throws(
    () => getAdapter("codexx"),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.unknown" &&
      (e.hint ?? "").startsWith("did you mean 'codex'? registered: claude, codex"),
  );
});

Deno.test("systemPathLookup searches the given PATH, skips relative entries and non-executables", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/a`);
    await Deno.mkdir(`${dir}/b`);
    await Deno.writeTextFile(`${dir}/a/claude`, "not executable");
    await Deno.writeTextFile(`${dir}/b/claude`, "#!/bin/sh\n");
    await Deno.chmod(`${dir}/b/claude`, 0o755);
    const lookup = systemPathLookup(mapEnv({ PATH: `relative:${dir}/a:${dir}/b` }));
    assert.equal(await lookup.which("claude"), `${dir}/b/claude`);
    assert.equal(await lookup.which("codex"), undefined);
    assert.equal(await lookup.which(`${dir}/b/claude`), `${dir}/b/claude`);
    assert.equal(await lookup.which(`${dir}/a/claude`), undefined);
  });
});

Deno.test("cliForRole: the role's cli, else the top-level cli, else auto — with the location", () => {
  const config = { cli: "codex", role_model_policy: { backend: { cli: "claude" }, qa: {} } };
  assert.deepEqual(cliForRole(config, "backend"), {
    cli: "claude",
    location: "role_model_policy.backend.cli",
  });
  assert.deepEqual(cliForRole(config, "qa"), { cli: "codex", location: "cli" });
  assert.deepEqual(cliForRole({}, "qa"), { cli: "auto", location: "cli" });
});

Deno.test("endpointForRole resolves the local_endpoints profile or refuses an undefined one", () => {
  const config = {
    role_model_policy: { backend: { endpoint: "box" }, qa: { endpoint: "nope" } },
    local_endpoints: {
      box: { base_url: "http://127.0.0.1:11434/v1", api: "openai-chat" as const, model: "q" },
    },
  };
  assert.deepEqual(endpointForRole(config, "backend"), {
    name: "box",
    base_url: "http://127.0.0.1:11434/v1",
    api: "openai-chat",
    model: "q",
  });
  assert.equal(endpointForRole(config, "other"), undefined);
  assert.throws(
    () => endpointForRole(config, "qa"),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.unknown_endpoint" &&
      e.location === "role_model_policy.qa.endpoint" && e.hint === "defined: box",
  );
});
