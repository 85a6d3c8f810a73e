// The report and the dashboard command around a run's life: while it runs (`bernstein dashboard`
// mints a working one-time link, `--open` hands it to the opener; the report says "running"),
// and after its orchestrator was killed (the report says "interrupted", the unfinished attempt
// too). With no run, `bernstein dashboard` says so.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { until } from "../_helpers/wait.ts";
import { bern, prepareRepo, startBernstein } from "./_run_helpers.ts";

function plan(gate: string): string {
  return `name: states
cli: scripted
stages:
  - name: build
    steps:
      - title: Wait for the gate
        files: [a.txt]
        description: |
          @agent progress waiting for the gate
          @agent run sh -c "while [ ! -f ${gate} ]; do sleep 0.05; done"
          @agent write a.txt a
`;
}

function waitForFile(path: string, contains = ""): Promise<string> {
  return until(async () => {
    const text = await Deno.readTextFile(path).catch(() => undefined);
    return text !== undefined && text.includes(contains) ? text : undefined;
  }, `'${contains}' in ${path}`);
}

Deno.test("report states: running, then interrupted; 'bernstein dashboard' mints a link that works once", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    // In a folder the sandbox shows the agent (read-only), outside its worktree.
    await Deno.mkdir(join(dir, "gates"));
    const gate = join(dir, "gates", "gate");
    await prepareRepo(repo, plan(gate), { sandbox: { read_only: [join(dir, "gates")] } });
    const child = startBernstein(repo, ["run", "plan.yaml"]);
    const out = new Response(child.stdout).text();
    const err = new Response(child.stderr).text();
    const sessionsDir = join(repo, ".sdd", "runtime", "sessions");
    try {
      // The agent is at work once its session file says so and its progress reached the log.
      const session = await until(async () => {
        // Session files only (an atomic write leaves a `.<pid>.<n>.tmp` there for a moment).
        const names = (await Array.fromAsync(Deno.readDir(sessionsDir)).catch(() => []))
          .map((e) => e.name).filter((n) => /^[^.].*\.json$/.test(n));
        return names[0]?.replace(/\.json$/, "");
      }, "the agent's session file");
      await waitForFile(join(repo, ".sdd", "runtime", `${session}.log`), "waiting for the gate");

      const minted = await bern(repo, ["dashboard", "--json"]);
      assert.equal(minted.code, 0, minted.stderr);
      const { url } = JSON.parse(minted.stdout);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/login\?code=[A-Za-z0-9_-]{43}$/);
      const first = await fetch(url, { redirect: "manual" });
      await first.body?.cancel();
      assert.equal(first.status, 303);
      const second = await fetch(url, { redirect: "manual" });
      await second.body?.cancel();
      assert.equal(second.status, 401);

      const opener = join(dir, "opener.sh");
      const opened = join(dir, "opened.txt");
      await Deno.writeTextFile(opener, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      await Deno.chmod(opener, 0o755);
      const viaOpener = await bern(repo, ["dashboard", "--open"], { BERNSTEIN_OPENER: opener });
      assert.equal(viaOpener.code, 0, viaOpener.stderr);
      assert.equal(await Deno.readTextFile(opened), viaOpener.stdout.trim());

      const running = await bern(repo, ["runs", "report", "--json"]);
      assert.equal(running.code, 0, running.stderr);
      const live = JSON.parse(running.stdout);
      assert.equal(live.run.state, "running");
      assert.deepEqual(live.attempts.map((a: { outcome: string }) => a.outcome), ["running"]);
      assert.equal(live.attempts[0].last_progress, "waiting for the gate");
      assert.equal(live.verification.scorecard.status, "unchecked");

      // The orchestrator dies without a word; its agent's process group goes with it here.
      child.kill("SIGKILL");
      await child.status;
      const file = JSON.parse(await Deno.readTextFile(join(sessionsDir, `${session}.json`)));
      try {
        Deno.kill(-file.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
      const html = join(dir, "interrupted.html");
      const after = await bern(repo, ["runs", "report", "--json", "--html", html]);
      assert.equal(after.code, 0, after.stderr);
      const dead = JSON.parse(after.stdout);
      assert.equal(dead.run.state, "interrupted");
      assert.equal(dead.run.health, "UNHEALTHY");
      assert.match(dead.run.reason, /interrupted/);
      assert.deepEqual(dead.attempts.map((a: { outcome: string }) => a.outcome), ["interrupted"]);
      assert.match(await Deno.readTextFile(html), /interrupted/);
      const gone = await bern(repo, ["dashboard"]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /^error\[dashboard\.no_run\]/);
    } finally {
      await Deno.writeTextFile(gate, "").catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // Already ended.
      }
      await child.status;
      await out.catch(() => "");
      await err.catch(() => "");
    }
  });
});

Deno.test("report states: 'bernstein dashboard' outside a run says no run is in progress", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, plan(join(dir, "gate")));
    const r = await bern(dir, ["dashboard"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error\[dashboard\.no_run\]: no run is in progress/);
    const report = await bern(dir, ["runs", "report"]);
    assert.equal(report.code, 1);
    assert.match(report.stderr, /^error\[runs\.not_found\]: no run in this project yet/);
  });
});
