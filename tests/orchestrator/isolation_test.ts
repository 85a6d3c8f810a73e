// The run's isolation as the orchestrator builds it: the git config a sandboxed agent sees
// keeps only keys that name no program and no remote; without a sandbox the spawn path is
// the direct subprocess and says so in every agent's record; the run's secrets.
import assert from "node:assert/strict";
import { mapEnv } from "../../src/io/mod.ts";
import {
  cleanedGitConfig,
  secretVariableNames,
  setUpIsolation,
} from "../../src/orchestrator/mod.ts";
import { decideIsolation } from "../../src/sandbox/mod.ts";

Deno.test("a sandboxed agent's git config keeps format keys only: no remotes, hooks or programs", () => {
  const listing = [
    "core.repositoryformatversion\n0",
    "core.filemode\ntrue",
    "core.fsmonitor\n/tmp/x.sh",
    "core.hookspath\n/tmp/hooks",
    "remote.origin.url\nhttps://user:ghp_secret@github.com/a/b",
    "extensions.worktreeconfig\ntrue",
    "filter.evil.clean\nsh -c x",
    "core.bare\nfalse",
  ].join("\0") + "\0";
  assert.equal(
    cleanedGitConfig(listing),
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n" +
      "[extensions]\n\tworktreeconfig = true\n",
  );
});

Deno.test("isolation none: the direct subprocess, recorded as none with the reason", async () => {
  const decision = decideIsolation("none", { available: false, backend: "bwrap", reason: "x" });
  const iso = await setUpIsolation({
    decision,
    config: { network: { allowed_ips: [] } },
    env: mapEnv({}),
    project: { root: "/p", sdd: "/p/.sdd" },
    git: undefined as never,
    self: { argv: ["bernstein"], env: {}, readOnly: [] },
    secretFiles: [],
    onRefused: () => {},
  });
  assert.equal(iso.spawnPath.name, "direct-subprocess");
  const inv = {
    argv: ["claude"],
    env: {},
    cwd: "/w",
    files: [],
    prompt_channel: "argv" as const,
    notes: [],
  };
  const wrapped = await iso.spawnPath.wrap(inv, {
    session: "s",
    worktree: "/w",
    home: "/h",
    adapter: "claude",
  });
  assert.equal(wrapped.invocation, inv);
  assert.equal(wrapped.isolation.isolation, "none");
  assert.match(String(wrapped.isolation.reason), /no sandbox/);
  const cmd = await iso.isolateCommand("s", "/h")(["deno", "test"], { cwd: "/w", env: { A: "1" } });
  assert.deepEqual(cmd, { argv: ["deno", "test"], env: { A: "1" } });
  await iso.close();
});

Deno.test("secret variables: provider keys of every adapter, configured ones, endpoint keys", () => {
  const names = secretVariableNames({
    adapters: { generic: { env: ["MY_SERVICE_TOKEN", "PLAIN_SETTING"] } },
    local_endpoints: { lan: { base_url: "http://10.0.0.5/v1", api_key_env: "LAN_MODEL_KEY" } },
  });
  for (
    const n of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "GEMINI_API_KEY",
      "MY_SERVICE_TOKEN",
      "LAN_MODEL_KEY",
      "BERNSTEIN_OPERATOR_SECRET",
      "GITHUB_TOKEN",
    ]
  ) {
    assert.ok(names.includes(n), n);
  }
  assert.ok(!names.includes("PLAIN_SETTING"));
});
