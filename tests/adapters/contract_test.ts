// The flag contract and version probe, checked against the help and version texts recorded from
// the pinned CLIs (fixtures/adapters/<cli>/help, version.txt) through a fake probe runner.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  type Adapter,
  checkAdapter,
  checkFlags,
  getAdapter,
  helpMentionsFlag,
  mapPathLookup,
  type ProbeRunner,
  probeVersion,
} from "../../src/adapters/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/adapters/", import.meta.url));
const enc = new TextEncoder();

function helpFile(args: readonly string[]): string {
  return `${args.join(" ").replace(/^-+/, "").replace(/[ ]+/g, "_")}.txt`;
}

/** A runner answering from recorded files; `edit` can change a help text (simulated drift). */
function recordedRunner(
  cli: string,
  edit: (args: string, text: string) => string = (_a, t) => t,
): { runner: ProbeRunner; calls: string[] } {
  const calls: string[] = [];
  const runner: ProbeRunner = async (argv) => {
    const args = argv.slice(1);
    calls.push(args.join(" "));
    let text: string;
    if (args.join(" ") === "--version") {
      text = await Deno.readTextFile(`${FIXTURES}${cli}/version.txt`);
    } else {
      text = edit(
        args.join(" "),
        await Deno.readTextFile(`${FIXTURES}${cli}/help/${helpFile(args)}`),
      );
    }
    return { code: 0, stdout: enc.encode(text), stderr: new Uint8Array(), timedOut: false };
  };
  return { runner, calls };
}

const PROBE = { executable: "/x/cli", env: {}, timeoutMs: 1000 };

function visibleOnly(adapter: Adapter): Adapter {
  return { ...adapter, flags: adapter.flags.filter((f) => f.hidden === undefined) };
}

for (
  const [cli, version] of [
    ["claude", "2.1.332"],
    ["codex", "0.171.0"],
    ["gemini", "0.61.0"],
    ["qwen", "0.15.10"],
    ["opencode", "1.18.33"],
  ]
) {
  Deno.test(`${cli} ${version}: every relied-on flag is in the recorded help`, async () => {
    const adapter = visibleOnly(getAdapter(cli));
    const { runner, calls } = recordedRunner(cli);
    const checks = await checkFlags(adapter, { ...PROBE, runner });
    assert.ok(checks.length > 0);
    for (const c of checks) assert.ok(c.present, `${c.flag} missing: ${c.detail}`);
    // Each help command runs once however many flags it covers.
    assert.equal(calls.length, new Set(calls).size);
    assert.deepEqual(await probeVersion(adapter, { ...PROBE, runner }), { version });
  });
}

Deno.test("a flag that vanished from the help is reported missing, by name", async () => {
  const { runner } = recordedRunner(
    "codex",
    (_args, text) =>
      text.split("\n").filter((l) => !l.includes("--output-last-message")).join("\n"),
  );
  const checks = await checkFlags(getAdapter("codex"), { ...PROBE, runner });
  const missing = checks.filter((c) => !c.present);
  assert.deepEqual(missing.map((c) => c.flag), ["--output-last-message"]);
  assert.equal(missing[0].via, "exec --help");
  assert.equal(missing[0].detail, "not in 'exec --help' output");
});

Deno.test("a flag only mentioned in another option's description does not count", () => {
  const help = [
    "Options:",
    "  -m, --model <MODEL>     Model (see also --effort)",
    "      --json              Print JSON",
    "  --allowedTools, --allowed-tools <tools...>",
  ].join("\n");
  assert.ok(helpMentionsFlag(help, "--model"));
  assert.ok(helpMentionsFlag(help, "-m"));
  assert.ok(helpMentionsFlag(help, "--json"));
  assert.ok(helpMentionsFlag(help, "--allowed-tools"));
  assert.ok(!helpMentionsFlag(help, "--effort"));
  assert.ok(!helpMentionsFlag(help, "--jso"));
  assert.ok(!helpMentionsFlag(help, "--mod"));
});

Deno.test("a hidden flag counts as present unless the CLI rejects it as unknown", async () => {
  const claude = getAdapter("claude");
  const hiddenOnly = { ...claude, flags: claude.flags.filter((f) => f.hidden !== undefined) };
  const accepting: ProbeRunner = () =>
    Promise.resolve({
      code: 1,
      stdout: new Uint8Array(),
      stderr: enc.encode("Error: Input must be provided either through stdin or as a prompt"),
      timedOut: false,
    });
  const rejecting: ProbeRunner = () =>
    Promise.resolve({
      code: 1,
      stdout: new Uint8Array(),
      stderr: enc.encode("error: unknown option '--max-turns'"),
      timedOut: false,
    });
  const [ok] = await checkFlags(hiddenOnly, { ...PROBE, runner: accepting });
  assert.deepEqual(ok, {
    flag: "--max-turns",
    present: true,
    via: "-p --max-turns 1",
    detail: "hidden from --help; accepted",
  });
  const [gone] = await checkFlags(hiddenOnly, { ...PROBE, runner: rejecting });
  assert.equal(gone.present, false);
  assert.equal(gone.detail, "the CLI rejects it as unknown");
});

Deno.test("a probe that times out or cannot start is a failure, not a pass", async () => {
  const slow: ProbeRunner = () =>
    Promise.resolve({
      code: 143,
      stdout: new Uint8Array(),
      stderr: new Uint8Array(),
      timedOut: true,
    });
  const broken: ProbeRunner = () => Promise.reject(new Error("cannot start /x/cli: not found"));
  const gemini = getAdapter("gemini");
  assert.deepEqual(await probeVersion(gemini, { ...PROBE, runner: slow }), {
    error: "version probe timed out after 1000 ms",
  });
  const flags = await checkFlags(gemini, { ...PROBE, runner: slow });
  assert.ok(flags.every((f) => !f.present && f.detail === "'--help' timed out"));
  assert.deepEqual(await probeVersion(gemini, { ...PROBE, runner: broken }), {
    error: "cannot start /x/cli: not found",
  });
});

Deno.test("a version probe that exits non-zero or prints no version is a failure", async () => {
  const failing: ProbeRunner = () =>
    Promise.resolve({
      code: 2,
      stdout: new Uint8Array(),
      stderr: enc.encode("segfault\n"),
      timedOut: false,
    });
  const chatty: ProbeRunner = () =>
    Promise.resolve({
      code: 0,
      stdout: enc.encode("hello"),
      stderr: new Uint8Array(),
      timedOut: false,
    });
  const codex = getAdapter("codex");
  assert.deepEqual(await probeVersion(codex, { ...PROBE, runner: failing }), {
    error: "version probe exited 2: segfault",
  });
  assert.deepEqual(await probeVersion(codex, { ...PROBE, runner: chatty }), {
    error: "no version in: hello",
  });
});

Deno.test("checkAdapter: drift makes the check fail and names the flag; a missing binary too", async () => {
  const { runner } = recordedRunner(
    "gemini",
    (_a, text) => text.replace(/--skip-trust/g, "--trust"),
  );
  const drift = await checkAdapter("gemini", {
    lookup: mapPathLookup({ gemini: "/x/gemini" }),
    env: mapEnv({ PATH: "/x" }),
    timeoutMs: 1000,
    runner,
  });
  assert.equal(drift.ok, false);
  assert.equal(drift.version, "0.61.0");
  assert.deepEqual(drift.missing, ["--skip-trust"]);
  const missing = await checkAdapter("gemini", {
    lookup: mapPathLookup({}),
    env: mapEnv({}),
    timeoutMs: 1000,
    runner,
  });
  assert.equal(missing.ok, false);
  assert.equal(missing.available, false);
  assert.equal(missing.reason, "'gemini' not found on PATH");
});
