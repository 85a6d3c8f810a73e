// The run's GitHub steps against the fake API: the repository from the origin remote, the
// token from GITHUB_TOKEN / GH_TOKEN (never in a message), a failed sync as a loud warning
// that lets the run go on, a missing token, and the merge comment channel (only synced
// issues, the commit in the text, a refusal reported).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { objectLayer, resolveConfig } from "../../src/config/mod.ts";
import { FakeClock, mapEnv } from "../../src/io/mod.ts";
import {
  githubCommentChannel,
  githubDoctor,
  syncGithubBacklog,
} from "../../src/orchestrator/mod.ts";
import type { Notification } from "../../src/notify/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";
import { configOf } from "../notify/_config.ts";
import { startFakeGitHub } from "./_fake_github.ts";

const TOKEN = "ghp_PLANTEDTOKENabcdef0123456789";

function parts(dir: string, github: Record<string, unknown>, env: Record<string, string>) {
  return {
    config: configOf({ github: { sync_backlog: true, ...github } }),
    root: dir,
    sdd: join(dir, ".sdd"),
    env: mapEnv(env),
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
  };
}

Deno.test("the sync finds the repository from the origin remote and says what it did; the token is in no message", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 4, title: "Four" }]);
  try {
    await withTempDir(async (dir) => {
      await makeRepo(dir);
      await git(dir, "remote", "add", "origin", "git@127.0.0.1:acme/widget.git");
      const { warnings, synced } = await syncGithubBacklog(
        parts(dir, { api_url: fake.apiUrl }, { GH_TOKEN: TOKEN }),
      );
      deepStrictEqual(warnings.map((w) => w.code), ["github.synced"]);
      deepStrictEqual(synced, { repo: "acme/widget", open: 1, created: 1, updated: 0, closed: 0 });
      ok(
        warnings[0].message.includes("synced 1 open issue(s) of acme/widget"),
        warnings[0].message,
      );
      ok((await Deno.stat(join(dir, ".sdd", "backlog", "open", "gh-4.md"))).isFile);
      ok(fake.requests.every((r) => r.auth === `Bearer ${TOKEN}`));
      ok(!JSON.stringify(warnings).includes(TOKEN));
    });
  } finally {
    await fake.close();
  }
});

Deno.test("a failed sync is a loud warning and the run goes on; no repository, no token", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 1, title: "One" }]);
  try {
    await withTempDir(async (dir) => {
      await makeRepo(dir);
      const { warnings: missing, synced: missingSynced } = await syncGithubBacklog(
        parts(dir, { api_url: fake.apiUrl, repo: "acme/gone" }, { GITHUB_TOKEN: TOKEN }),
      );
      deepStrictEqual(missing.map((w) => w.code), ["github.sync_failed"]);
      strictEqual(missingSynced, undefined, "a failed sync records no source");
      ok(
        missing[0].message.startsWith("!!! GitHub backlog sync FAILED: acme/gone:"),
        missing[0].message,
      );
      const { warnings: wrong } = await syncGithubBacklog(
        parts(dir, { api_url: fake.apiUrl, repo: "acme/widget" }, { GITHUB_TOKEN: "ghp_BAD" }),
      );
      ok(wrong[0].message.includes("refused the token") && !wrong[0].message.includes("ghp_BAD"));
      const { warnings: noRepo } = await syncGithubBacklog(
        parts(dir, { api_url: fake.apiUrl }, {}),
      );
      deepStrictEqual(noRepo.map((w) => [w.code, w.hint]), [
        ["github.sync_failed", "set github.repo: owner/name"],
      ]);
      // Without a token: a warning, and public issues still come.
      const { warnings: anonymous } = await syncGithubBacklog(
        parts(dir, { api_url: fake.apiUrl, repo: "acme/widget" }, {}),
      );
      deepStrictEqual(anonymous.map((w) => w.code), ["github.no_token", "github.synced"]);
      strictEqual(fake.requests.at(-1)?.auth, null);
    });
  } finally {
    await fake.close();
  }
});

function merged(taskId: string): Notification {
  return {
    id: "n1",
    event: "task.merged",
    severity: "info",
    occurred_at: "2026-01-01T00:00:00.000Z",
    project: "widget",
    run: { id: "brave-otter-3fa9c2", branch: "feature" },
    title: `Task ${taskId} merged`,
    text: "",
    details: { task_id: taskId, sha: "0123abcd", files: 2 },
    report: null,
  };
}

Deno.test("the merge comment goes to synced issues only, names the commit and reports a refusal", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 4, title: "Four" }, { number: 5, title: "Five" }]);
  try {
    await withTempDir(async (dir) => {
      await makeRepo(dir);
      const p = parts(dir, { api_url: fake.apiUrl, repo: "acme/widget", comment_on_merge: true }, {
        GITHUB_TOKEN: TOKEN,
      });
      await syncGithubBacklog(p);
      // A hand-written gh-5 is not a synced issue: no comment there.
      await Deno.writeTextFile(join(dir, ".sdd", "backlog", "open", "gh-5.md"), "# mine\n");
      const channel = await githubCommentChannel(p);
      if (!("send" in channel)) throw new Error(channel.message);
      deepStrictEqual(
        ["gh-4", "gh-5", "1.1-write"].map((id) => channel.accepts?.(merged(id))),
        [true, false, false],
      );
      const sent = await channel.send(merged("gh-4"), new AbortController().signal);
      deepStrictEqual(sent, { ok: true, status: "commented on #4" });
      const [c] = fake.comments;
      deepStrictEqual([c.repo, c.number], ["acme/widget", 4]);
      ok(
        c.body.includes("`0123abcd` on branch `feature`") && c.body.includes("brave-otter-3fa9c2"),
      );
      fake.script.push({
        status: 403,
        body: JSON.stringify({ message: "Must have admin rights" }),
      });
      const refused = await channel.send(merged("gh-4"), new AbortController().signal);
      ok(
        !refused.ok && !refused.retryable && refused.status === "HTTP 403",
        JSON.stringify(refused),
      );
      const off = await githubCommentChannel(
        parts(dir, { api_url: fake.apiUrl, repo: "acme/widget", comment_on_merge: true }, {}),
      );
      ok(!("send" in off) && off.code === "github.comment_off", JSON.stringify(off));
    });
  } finally {
    await fake.close();
  }
});

Deno.test("doctor's GitHub line: off, on with the token's variable (never its value), on without a token", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const off = await githubDoctor({ ...parts(dir, {}, {}), config: configOf({}) });
    deepStrictEqual(off.map((c) => [c.status, c.detail]), [
      ["OK", "backlog sync off (github.sync_backlog)"],
    ]);
    const on = await githubDoctor(
      parts(dir, { repo: "acme/widget", labels: ["bernstein"] }, { GITHUB_TOKEN: TOKEN }),
    );
    deepStrictEqual(on.map((c) => [c.status, c.detail]), [[
      "OK",
      "backlog sync on: acme/widget (github.repo) via https://api.github.com; token: " +
      "GITHUB_TOKEN; labels: bernstein",
    ]]);
    const bare = await githubDoctor(parts(dir, { repo: "acme/widget" }, {}));
    deepStrictEqual(bare.map((c) => c.status), ["WARN"]);
    ok(bare[0].hint?.includes("GITHUB_TOKEN"));
    const lost = await githubDoctor(parts(dir, {}, {}));
    deepStrictEqual(lost.map((c) => [c.status, c.hint]), [["WARN", "set github.repo: owner/name"]]);
  });
});

Deno.test("BERNSTEIN_SYNC_GITHUB_BACKLOG: 1/true/on turn the sync on, 0/false/off turn it off over the file, other values warn", () => {
  const syncOf = (file: boolean | undefined, value: string) => {
    const r = resolveConfig({
      layers: [objectLayer("test", file === undefined ? {} : { github: { sync_backlog: file } })],
      env: mapEnv({ BERNSTEIN_SYNC_GITHUB_BACKLOG: value }),
    });
    return [r.config?.github.sync_backlog, r.problems.map((p) => p.code)];
  };
  for (const on of ["1", "true", "on", "YES"]) deepStrictEqual(syncOf(undefined, on), [true, []]);
  for (const off of ["0", "false", "off", "no"]) deepStrictEqual(syncOf(true, off), [false, []]);
  const [value, codes] = syncOf(true, "maybe");
  strictEqual(value, true, "a bad value falls through to the file");
  strictEqual((codes as string[]).length, 1);
});
