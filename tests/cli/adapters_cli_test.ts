// `bernstein adapters list|check` as a whole binary, against stand-in executables that replay
// the help and version texts recorded from claude 2.1.332 (fixtures/adapters/claude/).
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBernstein } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/adapters/claude/", import.meta.url));

/** A fake `claude` that answers --version, --help and the hidden --max-turns probe. */
async function fakeClaude(bin: string, help: string): Promise<void> {
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(join(bin, "claude-help.txt"), help);
  await Deno.writeTextFile(
    join(bin, "claude"),
    `#!/bin/sh
case "$1" in
  --version) echo "2.1.332 (Claude Code)" ;;
  --help) cat "${join(bin, "claude-help.txt")}" ;;
  -p) echo "Error: Input must be provided either through stdin or as a prompt argument" >&2; exit 1 ;;
  *) echo "unexpected $*" >&2; exit 9 ;;
esac
`,
  );
  await Deno.chmod(join(bin, "claude"), 0o755);
}

const SYS_PATH = "/usr/local/bin:/usr/bin:/bin";

Deno.test("adapters check claude passes against the recorded 2.1.332 help", async () => {
  await withTempDir(async (dir) => {
    await fakeClaude(join(dir, "bin"), await Deno.readTextFile(`${FIXTURES}help/help.txt`));
    const env = { PATH: `${join(dir, "bin")}:${SYS_PATH}` };
    const run = await runBernstein(["adapters", "check", "claude"], { cwd: dir, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /version {2}2\.1\.332/);
    assert.match(run.stdout, /ok {7}--max-turns {2}via '-p --max-turns 1' \(hidden/);
    assert.match(run.stdout, /contract OK$/m);
    const json = await runBernstein(["adapters", "check", "claude", "--json"], { cwd: dir, env });
    assert.equal(json.code, 0);
    const body = JSON.parse(json.stdout);
    assert.equal(body.ok, true);
    assert.equal(body.version, "2.1.332");
    assert.deepEqual(body.missing, []);
    assert.equal(body.flags.length, 12);
  });
});

Deno.test("adapters check names the flag that vanished from the help and exits 1", async () => {
  await withTempDir(async (dir) => {
    const help = (await Deno.readTextFile(`${FIXTURES}help/help.txt`))
      .split("\n").filter((l) => !/^\s+--verbose\b/.test(l)).join("\n");
    await fakeClaude(join(dir, "bin"), help);
    const env = { PATH: `${join(dir, "bin")}:${SYS_PATH}` };
    const run = await runBernstein(["adapters", "check", "claude"], { cwd: dir, env });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /MISSING {2}--verbose {2}via '--help'/);
    assert.match(
      run.stderr,
      /error\[adapter\.flag_drift\]: claude 2\.1\.332: flag\(s\) vanished: --verbose/,
    );
    const json = await runBernstein(["adapters", "check", "claude", "--json"], { cwd: dir, env });
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout).missing, ["--verbose"]);
  });
});

Deno.test("adapters check exits 1 when the binary is missing, 2 for an unknown name", async () => {
  await withTempDir(async (dir) => {
    const env = { PATH: SYS_PATH };
    const missing = await runBernstein(["adapters", "check", "cursor"], { cwd: dir, env });
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /error\[adapter\.unavailable\]: cursor: 'cursor-agent' not found on PATH/,
    );
    const unknown = await runBernstein(["adapters", "check", "cladue"], { cwd: dir, env });
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /error\[adapter\.unknown\]: unknown adapter 'cladue' \(did you mean 'claude'\?/,
    );
  });
});

Deno.test("adapters list --json: every adapter, found or not, with version and capabilities", async () => {
  await withTempDir(async (dir) => {
    await fakeClaude(join(dir, "bin"), "Usage: claude\n");
    const env = { PATH: `${join(dir, "bin")}:${SYS_PATH}` };
    const run = await runBernstein(["adapters", "list", "--json"], { cwd: dir, env });
    assert.equal(run.code, 0, run.stderr);
    const body = JSON.parse(run.stdout);
    assert.equal(body.adapters.length, 12);
    const byName = Object.fromEntries(
      body.adapters.map((a: { name: string }) => [a.name, a]),
    );
    assert.equal(byName.claude.available, true);
    assert.equal(byName.claude.version, "2.1.332");
    assert.equal(byName.claude.path, join(dir, "bin", "claude"));
    assert.equal(byName.claude.capabilities.cost_reporting, true);
    // The attachment seat: how images travel per adapter, and the limits for all of them.
    assert.equal(byName.claude.capabilities.attachment_channel, "content-block");
    assert.equal(byName.gemini.capabilities.attachment_channel, "file-reference");
    assert.equal(byName.codex.capabilities.attachment_channel, "file-argument");
    assert.equal(byName.aider.capabilities.multimodal, false);
    assert.deepEqual(byName.gemini.capabilities.document_types, ["application/pdf"]);
    // The kinds each adapter takes, by its channels.
    assert.deepEqual(byName.claude.capabilities.attachment_kinds, [
      "text",
      "folder",
      "notebook",
      "held_text",
      "image",
      "held_image",
      "document",
    ]);
    assert.deepEqual(byName.codex.capabilities.attachment_kinds, [
      "text",
      "folder",
      "notebook",
      "held_text",
      "image",
      "held_image",
    ]);
    assert.deepEqual(byName.aider.capabilities.attachment_kinds, [
      "text",
      "folder",
      "notebook",
      "held_text",
    ]);
    assert.deepEqual(body.attachments, {
      kinds: ["text", "folder", "notebook", "held_text", "image", "held_image", "document"],
      max_per_task: 20,
      max_text_chars: 100_000,
      max_read_bytes: 64 * 1024 * 1024,
      held: {
        image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
        max_name_chars: 200,
        max_text_bytes: 1024 * 1024,
        max_bytes_per_task: 8 * 1024 * 1024,
      },
    });
    assert.equal(byName.cursor.available, false);
    assert.equal(byName.cursor.reason, "'cursor-agent' not found on PATH");
    assert.equal(byName.generic.reason, "adapters.generic.command is not set");
    assert.equal(byName.scripted.available, true);
    assert.equal(body.auto, "claude");
    assert.equal(body.auto_preference[0], "claude");
    const text = await runBernstein(["adapters", "list"], { cwd: dir, env });
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^claude +yes +2\.1\.332 +yes +yes +yes +stdin$/m);
    assert.match(text.stdout, /^cli: auto → claude /m);
  });
});

Deno.test("adapters list reads adapters.generic from bernstein.yaml", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "bin"));
    await Deno.writeTextFile(join(dir, "bin", "my-agent"), '#!/bin/sh\necho "my-agent 3.4.5"\n');
    await Deno.chmod(join(dir, "bin", "my-agent"), 0o755);
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      "adapters:\n  generic:\n    command: [my-agent, --headless]\n    flags: [--headless]\n",
    );
    const env = { PATH: `${join(dir, "bin")}:${SYS_PATH}` };
    const run = await runBernstein(["adapters", "list", "--json"], { cwd: dir, env });
    assert.equal(run.code, 0, run.stderr);
    const generic = JSON.parse(run.stdout).adapters.find((a: { name: string }) =>
      a.name === "generic"
    );
    assert.equal(generic.available, true);
    assert.equal(generic.version, "3.4.5");
    const check = await runBernstein(["adapters", "check", "generic"], { cwd: dir, env });
    // The stand-in prints no help listing --headless: drift is reported, not ignored.
    assert.equal(check.code, 1);
    assert.match(check.stdout, /MISSING {2}--headless/);
  });
});
