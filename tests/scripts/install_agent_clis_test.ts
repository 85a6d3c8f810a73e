// scripts/install_agent_clis.ts with a stand-in npm: success links the binary, a failure is
// reported as skipped with npm's reason, a second run finds the CLI present.
import assert from "node:assert/strict";
import { join } from "node:path";
import { agentClisDir, installOne, PINNED_CLIS } from "../../scripts/install_agent_clis.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { pinnedStatus } from "../_helpers/real_cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const CLI = { name: "demo", package: "@demo/cli", version: "1.2.3", bin: "demo" };

async function fakeNpm(dir: string, script: string): Promise<string> {
  const path = join(dir, "npm");
  await Deno.writeTextFile(path, `#!/bin/sh\n${script}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("every pinned CLI names an exact version (no ranges, no tags)", () => {
  assert.deepEqual(PINNED_CLIS.map((c) => c.name), [
    "claude",
    "codex",
    "gemini",
    "opencode",
    "qwen",
  ]);
  for (const cli of PINNED_CLIS) assert.match(cli.version, /^\d+\.\d+\.\d+$/, cli.name);
});

Deno.test("the cache folder is outside the repository and overridable", () => {
  assert.equal(agentClisDir(mapEnv({ HOME: "/home/u" })), "/home/u/.cache/bernstein/agent-clis");
  assert.equal(
    agentClisDir(mapEnv({ HOME: "/home/u", BERNSTEIN_AGENT_CLIS_DIR: "/opt/clis" })),
    "/opt/clis",
  );
});

Deno.test("a successful install links the binary into bin/; a second run finds it present", async () => {
  await withTempDir(async (dir) => {
    // Stand-in npm: `npm install --prefix P … SPEC` creates P/node_modules/.bin/demo.
    const npm = await fakeNpm(
      dir,
      'prefix="$3"; mkdir -p "$prefix/node_modules/.bin"; ' +
        'printf "#!/bin/sh\\necho 1.2.3\\n" > "$prefix/node_modules/.bin/demo"; ' +
        'chmod 755 "$prefix/node_modules/.bin/demo"; echo "$@" > "$prefix/args.txt"',
    );
    const cache = join(dir, "cache");
    await Deno.mkdir(cache);
    const first = await installOne(cache, CLI, { npm });
    assert.equal(first.status, "installed");
    assert.equal(first.bin, join(cache, "bin", "demo"));
    assert.equal(
      await Deno.realPath(join(cache, "bin", "demo")),
      join(cache, "demo-1.2.3", "node_modules", ".bin", "demo"),
    );
    const args = await Deno.readTextFile(join(cache, "demo-1.2.3", "args.txt"));
    assert.match(args, /@demo\/cli@1\.2\.3$/m);
    const second = await installOne(cache, CLI, { npm: join(dir, "no-npm-needed") });
    assert.equal(second.status, "present");
  });
});

Deno.test("a failed install is reported as skipped with npm's reason", async () => {
  await withTempDir(async (dir) => {
    const npm = await fakeNpm(
      dir,
      'echo "npm error code E404" >&2; echo "npm error 404 Not Found - @demo/cli" >&2; exit 1',
    );
    const outcome = await installOne(dir, CLI, { npm });
    assert.deepEqual(outcome, {
      name: "demo",
      spec: "@demo/cli@1.2.3",
      status: "skipped",
      reason: "npm exited 1: npm error code E404 | npm error 404 Not Found - @demo/cli",
    });
    const missing = await installOne(dir, CLI, { npm: join(dir, "nope", "npm") });
    assert.equal(missing.status, "skipped");
    assert.match(missing.reason ?? "", /cannot start .*npm: not found/);
  });
});

Deno.test("a CLI that failed to install makes its tests ignored with npm's reason in the name", async () => {
  await withTempDir(async (dir) => {
    const npm = await fakeNpm(dir, 'echo "npm ERR! 404 Not Found - @demo/cli" >&2; exit 1');
    const outcome = await installOne(dir, CLI, { npm });
    assert.equal(outcome.status, "skipped");
    await Deno.writeTextFile(
      join(dir, "manifest.json"),
      JSON.stringify({ pinned: [CLI], outcomes: [outcome] }),
    );
    const status = pinnedStatus(CLI, dir);
    assert.equal(status.exe, undefined);
    assert.match(status.why, /^ \[skipped: @demo\/cli@1\.2\.3 failed to install: npm exited 1: /);
    assert.match(status.why, /404 Not Found/);
    // Never tried here: the reason says so and how to install.
    const other = pinnedStatus({ ...CLI, name: "other", package: "@o/cli" }, dir);
    assert.match(
      other.why,
      /@o\/cli@1\.2\.3 not installed in .*; run scripts\/install_agent_clis\.ts\]$/,
    );
  });
});

Deno.test("only the pinned version's own folder counts as installed, not a stale bin/ link", async () => {
  await withTempDir(async (dir) => {
    const npm = await fakeNpm(
      dir,
      'p="$3"; mkdir -p "$p/node_modules/.bin"; printf "#!/bin/sh\\necho 1.2.3\\n" > "$p/node_modules/.bin/demo"; chmod +x "$p/node_modules/.bin/demo"',
    );
    await installOne(dir, CLI, { npm });
    assert.equal(
      pinnedStatus(CLI, dir).exe,
      join(dir, "demo-1.2.3", "node_modules", ".bin", "demo"),
    );
    assert.equal(pinnedStatus({ ...CLI, version: "1.2.4" }, dir).exe, undefined);
  });
});
