import assert from "node:assert/strict";
import {
  AdapterError,
  ADAPTERS,
  CODEX_ENDPOINT_KEY_ENV,
  getAdapter,
  type Invocation,
  type InvocationInput,
  OPENCODE_ENDPOINT_KEY_ENV,
  writeInvocationFiles,
} from "../../src/adapters/mod.ts";
import { mapEnv, PathEscapeError } from "../../src/io/mod.ts";
import { v8FlagsArg } from "../../src/meta/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const ENV = mapEnv({
  PATH: "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ANTHROPIC_API_KEY: "sk-ant-real",
  OPENAI_API_KEY: "sk-openai-real",
  GEMINI_API_KEY: "gem-real",
  CURSOR_API_KEY: "cur-real",
  AWS_SECRET_ACCESS_KEY: "never-passed",
  GITHUB_TOKEN: "never-passed-either",
  LOCAL_KEY: "local-secret",
});

function input(overrides: Partial<InvocationInput> = {}): InvocationInput {
  return {
    prompt: "Write hello.txt",
    cwd: "/work/wt/session-1",
    home: "/tmp/homes/session-1",
    env: ENV,
    ...overrides,
  };
}

const decode = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

function build(name: string, overrides: Partial<InvocationInput> = {}): Invocation {
  return getAdapter(name, overrides.settings ? { [name]: overrides.settings } : {}).build(
    input(overrides),
  );
}

Deno.test("claude: prompt on stdin, stream-json flags, model tier, turns, effort, protocol text", () => {
  const inv = build("claude", {
    model: "opus",
    max_turns: 12,
    effort: "high",
    system_prompt: "Report with bernstein task complete",
    executable: "/opt/bin/claude",
  });
  assert.deepEqual(inv.argv, [
    "/opt/bin/claude",
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "bypassPermissions",
    "--no-session-persistence",
    "--model",
    "opus",
    "--effort",
    "high",
    "--max-turns",
    "12",
    "--append-system-prompt",
    "Report with bernstein task complete",
  ]);
  assert.equal(decode(inv.stdin), "Write hello.txt");
  assert.equal(inv.prompt_channel, "stdin");
  assert.equal(inv.cwd, "/work/wt/session-1");
  assert.equal(inv.env.HOME, "/tmp/homes/session-1");
  assert.equal(inv.env.CLAUDE_CONFIG_DIR, "/tmp/homes/session-1/.claude");
  assert.equal(inv.env.ANTHROPIC_API_KEY, "sk-ant-real");
  assert.equal(inv.env.OPENAI_API_KEY, undefined);
  assert.deepEqual(inv.files, []);
});

Deno.test("claude as root defaults to acceptEdits and says so", () => {
  const inv = build("claude", { is_root: true });
  const at = inv.argv.indexOf("--permission-mode");
  assert.equal(inv.argv[at + 1], "acceptEdits");
  assert.equal(inv.env.IS_SANDBOX, undefined);
  assert.match(inv.notes.join("\n"), /running as root: --permission-mode acceptEdits/);
});

Deno.test("claude as root with root_permission is_sandbox keeps bypassPermissions + IS_SANDBOX=1", () => {
  const inv = build("claude", { is_root: true, settings: { root_permission: "is_sandbox" } });
  const at = inv.argv.indexOf("--permission-mode");
  assert.equal(inv.argv[at + 1], "bypassPermissions");
  assert.equal(inv.env.IS_SANDBOX, "1");
  assert.match(inv.notes.join("\n"), /IS_SANDBOX=1/);
});

Deno.test("claude endpoint: base URL + key from api_key_env, real provider keys withheld", () => {
  const inv = build("claude", {
    model: "sonnet",
    endpoint: {
      name: "local",
      base_url: "http://127.0.0.1:8080",
      api: "anthropic",
      api_key_env: "LOCAL_KEY",
      model: "local-model",
    },
  });
  assert.equal(inv.env.ANTHROPIC_BASE_URL, "http://127.0.0.1:8080");
  assert.equal(inv.env.ANTHROPIC_API_KEY, "local-secret");
  assert.equal(inv.env.CLAUDE_CODE_MAX_RETRIES, "0");
  // The tier means nothing on a local server: the profile's model wins.
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "local-model");
  assert.ok(!Object.values(inv.env).includes("sk-ant-real"));
});

Deno.test("an endpoint speaking the wrong API is refused with its location", () => {
  assert.throws(
    () =>
      build("claude", {
        endpoint: { name: "ollama", base_url: "http://127.0.0.1:11434/v1", api: "openai-chat" },
      }),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.endpoint_unsupported" &&
      e.location === "local_endpoints.ollama.api",
  );
});

Deno.test("an endpoint whose api_key_env is unset is refused, not sent a placeholder", () => {
  assert.throws(
    () =>
      build("qwen", {
        endpoint: { name: "p", base_url: "http://127.0.0.1:1/v1", api_key_env: "MISSING_KEY" },
      }),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.endpoint_key_missing" &&
      /MISSING_KEY/.test(e.message),
  );
});

Deno.test("codex: exec --json with prompt on stdin, config.toml under CODEX_HOME, effort max → xhigh", () => {
  const inv = build("codex", { model: "sonnet", effort: "max", system_prompt: "PROTO" });
  assert.deepEqual(inv.argv.slice(0, 7), [
    "codex",
    "exec",
    "--json",
    "--dangerously-bypass-approvals-and-sandbox",
    "--skip-git-repo-check",
    "--output-last-message",
    "/tmp/homes/session-1/codex-last-message.txt",
  ]);
  assert.equal(inv.argv.at(-1), "-");
  assert.ok(inv.argv.includes('model_reasoning_effort="xhigh"'));
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "gpt-5.1-codex");
  assert.equal(decode(inv.stdin), "PROTO\n\nWrite hello.txt");
  assert.equal(inv.env.CODEX_HOME, "/tmp/homes/session-1/.codex");
  assert.equal(inv.last_message_file, "/tmp/homes/session-1/codex-last-message.txt");
  assert.equal(inv.files.length, 1);
  assert.equal(inv.files[0].path, ".codex/config.toml");
  assert.equal(inv.files[0].mode, 0o600);
  const toml = inv.files[0].content;
  assert.match(toml, /^\[analytics\]\nenabled = false$/m);
  assert.match(toml, /^model = "gpt-5.1-codex"$/m);
  assert.doesNotMatch(toml, /model_provider/);
  assert.match(inv.notes.join("\n"), /protocol text is prepended/);
});

Deno.test("codex endpoint: a custom provider in config.toml, key through its env_key", () => {
  const inv = build("codex", {
    endpoint: {
      name: "fake",
      base_url: "http://127.0.0.1:9999/v1",
      api: "openai-responses",
      model: 'm"1',
    },
  });
  const toml = inv.files[0].content;
  assert.match(toml, /^model_provider = "bernstein"$/m);
  assert.match(toml, /^model = "m\\"1"$/m);
  assert.match(toml, /^\[model_providers\.bernstein\]$/m);
  assert.match(toml, /^base_url = "http:\/\/127\.0\.0\.1:9999\/v1"$/m);
  assert.match(toml, new RegExp(`^env_key = "${CODEX_ENDPOINT_KEY_ENV}"$`, "m"));
  assert.match(toml, /^wire_api = "responses"$/m);
  assert.match(toml, /^request_max_retries = 0$/m);
  assert.equal(inv.env[CODEX_ENDPOINT_KEY_ENV], "bernstein-local");
  assert.equal(inv.env.OPENAI_API_KEY, undefined);
});

Deno.test("gemini: --prompt in argv, settings.json with auth type, telemetry off, turn limit", () => {
  const inv = build("gemini", { max_turns: 7, model: "haiku" });
  assert.deepEqual(inv.argv.slice(-2), ["--prompt", "Write hello.txt"]);
  assert.equal(inv.stdin, undefined);
  assert.equal(inv.prompt_channel, "argv");
  assert.ok(inv.argv.includes("--skip-trust") && inv.argv.includes("--yolo"));
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "gemini-2.5-flash-lite");
  const settings = JSON.parse(inv.files[0].content);
  assert.equal(inv.files[0].path, ".gemini/settings.json");
  assert.equal(settings.security.auth.selectedType, "gemini-api-key");
  assert.equal(settings.privacy.usageStatisticsEnabled, false);
  assert.equal(settings.model.maxSessionTurns, 7);
  assert.equal(settings.general.maxAttempts, undefined, "a real provider keeps gemini's retries");
  assert.equal(inv.env.GEMINI_API_KEY, "gem-real");
});

Deno.test("with an endpoint gemini and qwen make one attempt per request (no retry loops)", () => {
  const endpoint = { name: "loc", base_url: "http://127.0.0.1:1/v1", model: "m" };
  const gem = build("gemini", { endpoint: { ...endpoint, api: "gemini" } });
  assert.equal(JSON.parse(gem.files[0].content).general.maxAttempts, 1);
  const qw = build("qwen", { endpoint });
  assert.equal(JSON.parse(qw.files[0].content).model.generationConfig.maxRetries, 0);
  assert.equal(JSON.parse(build("qwen", {}).files[0].content).model, undefined);
});

Deno.test("argv-prompt CLIs move a prompt too long for argv, or starting with '-', to stdin", () => {
  const long = "x".repeat(200 * 1024);
  for (const name of ["gemini", "qwen", "opencode"]) {
    const inv = build(name, { prompt: long });
    assert.equal(inv.prompt_channel, "stdin", name);
    assert.equal(decode(inv.stdin), long, name);
    assert.ok(inv.argv.every((a) => a.length < 1000), `${name}: no huge argv element`);
    const dashed = build(name, { prompt: "--help me" });
    assert.equal(dashed.prompt_channel, "stdin", name);
    assert.ok(!dashed.argv.includes("--help me"), name);
  }
});

Deno.test("qwen: openai auth, positional prompt, max-session-turns, settings with telemetry off", () => {
  const inv = build("qwen", {
    max_turns: 5,
    endpoint: { name: "loc", base_url: "http://127.0.0.1:1234/v1", model: "qwen-local" },
  });
  assert.deepEqual(inv.argv.slice(0, 6), [
    "qwen",
    "--auth-type",
    "openai",
    "--output-format",
    "stream-json",
    "--yolo",
  ]);
  assert.equal(inv.argv.at(-1), "Write hello.txt");
  assert.equal(inv.argv[inv.argv.indexOf("--max-session-turns") + 1], "5");
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "qwen-local");
  assert.equal(inv.env.OPENAI_BASE_URL, "http://127.0.0.1:1234/v1");
  assert.equal(inv.env.OPENAI_API_KEY, "bernstein-local");
  assert.equal(JSON.parse(inv.files[0].content).telemetry.enabled, false);
});

Deno.test("opencode: config in OPENCODE_CONFIG_CONTENT, nothing written to the worktree", () => {
  const inv = build("opencode", {
    effort: "high",
    endpoint: { name: "loc", base_url: "http://127.0.0.1:1/v1", model: "coder" },
  });
  // Only the files under HOME that stop opencode's start-up npm install.
  assert.deepEqual(inv.files.map((f) => f.path), [
    ".config/opencode/node_modules/.bernstein-no-install",
    ".config/opencode/package-lock.json",
  ]);
  const lock = JSON.parse(inv.files[1].content);
  assert.ok("@opencode-ai/plugin" in lock.packages[""].dependencies);
  assert.deepEqual(inv.argv.slice(0, 5), ["opencode", "run", "--format", "json", "--auto"]);
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "bernstein/coder");
  assert.equal(inv.argv[inv.argv.indexOf("--variant") + 1], "high");
  const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT);
  assert.deepEqual(config.permission, { edit: "allow", bash: "allow", webfetch: "allow" });
  assert.equal(config.snapshot, false, "no shadow git repository of the worktree");
  assert.equal(config.provider.bernstein.npm, "@ai-sdk/openai-compatible");
  assert.equal(config.provider.bernstein.options.baseURL, "http://127.0.0.1:1/v1");
  assert.equal(config.provider.bernstein.options.apiKey, `{env:${OPENCODE_ENDPOINT_KEY_ENV}}`);
  assert.equal(inv.env[OPENCODE_ENDPOINT_KEY_ENV], "bernstein-local");
  assert.equal(inv.env.OPENCODE_DISABLE_MODELS_FETCH, "1");
  assert.equal(inv.env.ANTHROPIC_API_KEY, undefined);
});

Deno.test("opencode with an endpoint but no model is refused naming the profile", () => {
  assert.throws(
    () => build("opencode", { endpoint: { name: "loc", base_url: "http://127.0.0.1:1/v1" } }),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.model_required" &&
      e.location === "local_endpoints.loc.model",
  );
});

Deno.test("ollama: opencode against the default Ollama address or $OLLAMA_HOST", () => {
  const inv = build("ollama", { model: "sonnet", effort: "low" });
  assert.equal(inv.argv[0], "opencode");
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "bernstein/qwen2.5-coder:14b");
  assert.ok(!inv.argv.includes("--variant"));
  assert.match(inv.notes.join("\n"), /effort 'low' ignored/);
  const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT);
  assert.equal(config.provider.bernstein.options.baseURL, "http://127.0.0.1:11434/v1");
  const remote = getAdapter("ollama").build(
    input({ env: mapEnv({ OLLAMA_HOST: "10.0.0.5:11434" }), model: "haiku" }),
  );
  const remoteConfig = JSON.parse(remote.env.OPENCODE_CONFIG_CONTENT);
  assert.equal(remoteConfig.provider.bernstein.options.baseURL, "http://10.0.0.5:11434/v1");
});

Deno.test("aider: prompt in a file under HOME, no auto-commits, endpoint via openai/ model", () => {
  const inv = build("aider", {
    model: "coder",
    system_prompt: "PROTO",
    endpoint: { name: "loc", base_url: "http://127.0.0.1:2/v1" },
  });
  assert.equal(inv.prompt_channel, "file");
  assert.equal(
    inv.argv[inv.argv.indexOf("--message-file") + 1],
    "/tmp/homes/session-1/aider-prompt.md",
  );
  assert.deepEqual(inv.files, [{
    path: "aider-prompt.md",
    content: "PROTO\n\nWrite hello.txt",
    mode: 0o600,
  }]);
  assert.ok(inv.argv.includes("--no-auto-commits") && inv.argv.includes("--yes-always"));
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "openai/coder");
  assert.equal(inv.env.OPENAI_API_BASE, "http://127.0.0.1:2/v1");
});

Deno.test("cursor and amp refuse endpoints; amp ignores tiers with a note", () => {
  for (const name of ["cursor", "amp"]) {
    assert.throws(
      () => build(name, { endpoint: { name: "x", base_url: "http://127.0.0.1:1" } }),
      (e: unknown) => e instanceof AdapterError && e.code === "adapter.endpoint_unsupported",
    );
  }
  const cursor = build("cursor", { model: "sonnet" });
  assert.equal(decode(cursor.stdin), "Write hello.txt");
  assert.deepEqual(cursor.argv.slice(1, 5), [
    "--print",
    "--output-format",
    "stream-json",
    "--force",
  ]);
  assert.equal(cursor.env.CURSOR_API_KEY, "cur-real");
  const amp = build("amp", { model: "opus", max_turns: 3 });
  assert.deepEqual(amp.argv, ["amp", "--execute", "--stream-json", "--dangerously-allow-all"]);
  assert.match(amp.notes.join("\n"), /tier 'opus' ignored/);
  assert.match(amp.notes.join("\n"), /max_turns 3 not enforced/);
});

Deno.test("goose: instructions file, auto mode, endpoint as OPENAI_HOST + base path", () => {
  const inv = build("goose", {
    max_turns: 4,
    endpoint: { name: "loc", base_url: "http://127.0.0.1:11434/v1", model: "m" },
  });
  assert.deepEqual(inv.argv, [
    "goose",
    "run",
    "--no-session",
    "--instructions",
    "/tmp/homes/session-1/goose-instructions.md",
    "--max-turns",
    "4",
  ]);
  assert.equal(inv.env.GOOSE_MODE, "auto");
  assert.equal(inv.env.GOOSE_PROVIDER, "openai");
  assert.equal(inv.env.GOOSE_MODEL, "m");
  assert.equal(inv.env.OPENAI_HOST, "http://127.0.0.1:11434");
  assert.equal(inv.env.OPENAI_BASE_PATH, "v1/chat/completions");
});

Deno.test("generic: refuses without a command; honours prompt channel, flags and env names", () => {
  assert.throws(
    () => getAdapter("generic").build(input()),
    (e: unknown) =>
      e instanceof AdapterError && e.code === "adapter.bad_settings" &&
      e.location === "adapters.generic.command",
  );
  const settings = {
    command: ["my-agent", "--headless"],
    prompt: "argv" as const,
    prompt_flag: "--task",
    model_flag: "--llm",
    max_turns_flag: "--steps",
    env: ["GITHUB_TOKEN"],
  };
  const inv = getAdapter("generic", { generic: settings }).build(
    input({ settings, model: "big", max_turns: 9 }),
  );
  assert.deepEqual(inv.argv, [
    "my-agent",
    "--headless",
    "--llm",
    "big",
    "--steps",
    "9",
    "--task",
    "Write hello.txt",
  ]);
  assert.equal(inv.env.GITHUB_TOKEN, "never-passed-either", "named in settings.env, so passed");
  const file = getAdapter("generic", { generic: { command: ["a"], prompt: "file" } }).build(
    input({ settings: { command: ["a"], prompt: "file" } }),
  );
  assert.deepEqual(file.argv, ["a", "/tmp/homes/session-1/generic-prompt.md"]);
  const stdin = getAdapter("generic", { generic: { command: ["a"] } }).build(
    input({ settings: { command: ["a"] } }),
  );
  assert.equal(decode(stdin.stdin), "Write hello.txt");
  assert.throws(
    () =>
      getAdapter("generic").build(
        input({ settings: { command: ["a"], prompt: "argv" }, prompt: "y".repeat(200_000) }),
      ),
    (e: unknown) => e instanceof AdapterError && e.code === "adapter.prompt_too_long",
  );
});

Deno.test("scripted: deno runs the fixture agent with the prompt on stdin and loopback-only net", () => {
  const inv = build("scripted", {
    model: "sonnet",
    max_turns: 3,
    executable: "/usr/local/bin/deno",
    extra_env: { BERNSTEIN_SERVER_URL: "http://127.0.0.1:4321", BERNSTEIN_TASK_ID: "t1" },
  });
  assert.equal(inv.argv[0], "/usr/local/bin/deno");
  assert.ok(inv.argv.includes("--no-config"));
  // bernstein's V8 flags: a process with other flags rewrites the code cache of shared modules.
  assert.ok(inv.argv.includes(v8FlagsArg()));
  assert.ok(inv.argv.includes("--allow-net=127.0.0.1,localhost,[::1],127.0.0.1:4321"));
  assert.match(inv.argv[inv.argv.indexOf("--model") - 1], /fixtures\/agents\/scripted_agent\.ts$/);
  assert.equal(inv.argv[inv.argv.indexOf("--model") + 1], "scripted-sonnet");
  assert.equal(inv.env.BERNSTEIN_SERVER_URL, "http://127.0.0.1:4321");
  assert.equal(decode(inv.stdin), "Write hello.txt");
});

Deno.test("no adapter passes a variable it does not name, whatever the environment holds", () => {
  for (const adapter of ADAPTERS) {
    const settings = adapter.name === "generic" ? { command: ["g"] } : undefined;
    const inv = adapter.build(input({ settings }));
    assert.equal(inv.env.AWS_SECRET_ACCESS_KEY, undefined, adapter.name);
    assert.equal(inv.env.GITHUB_TOKEN, undefined, adapter.name);
    assert.equal(inv.env.HOME, "/tmp/homes/session-1", adapter.name);
    assert.equal(inv.env.TMPDIR, "/tmp/homes/session-1/tmp", adapter.name);
    for (const name of Object.keys(inv.env)) {
      const fromEnv = ENV.get(name) !== undefined && inv.env[name] === ENV.get(name);
      if (fromEnv) {
        assert.ok(
          ["PATH", "LANG"].includes(name) || adapter.env.includes(name),
          `${adapter.name} passed ${name} without naming it`,
        );
      }
    }
  }
});

Deno.test("every flag an adapter puts in argv is part of its flag contract", () => {
  for (const adapter of ADAPTERS) {
    if (adapter.name === "generic" || adapter.name === "scripted") continue;
    const inv = adapter.build(
      input({ model: "sonnet", effort: "high", max_turns: 3, system_prompt: "P" }),
    );
    const contract = new Set(adapter.flags.map((f) => f.flag));
    // Option flags (not their values, not the prompt, not paths).
    const used = inv.argv.slice(1).filter((a, i, all) =>
      /^-{1,2}[a-zA-Z]/.test(a) && all[i - 1] !== "--config" && a !== "-"
    );
    for (const flag of used) {
      assert.ok(contract.has(flag), `${adapter.name} uses ${flag} but does not list it`);
    }
  }
});

Deno.test("writeInvocationFiles writes under HOME with the planned modes and refuses escapes", async () => {
  await withTempDir(async (home) => {
    const inv = build("codex", { home });
    const written = await writeInvocationFiles(inv, home);
    assert.equal(written.length, 1);
    assert.ok((await Deno.stat(`${home}/tmp`)).isDirectory, "the child's TMPDIR exists");
    assert.equal(await Deno.readTextFile(`${home}/.codex/config.toml`), inv.files[0].content);
    assert.equal(((await Deno.stat(`${home}/.codex/config.toml`)).mode ?? 0) & 0o777, 0o600);
    await assert.rejects(
      writeInvocationFiles({ files: [{ path: "../evil", content: "x", mode: 0o600 }] }, home),
      PathEscapeError,
    );
    await Deno.symlink("/tmp", `${home}/out`);
    await assert.rejects(
      writeInvocationFiles({ files: [{ path: "out/evil", content: "x", mode: 0o600 }] }, home),
      PathEscapeError,
    );
  });
});
