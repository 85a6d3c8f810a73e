// Workers on other hosts, for real: the orchestrator runs in the test's network namespace and
// listens on a bridge address; each worker host is a network namespace of its own (made by the
// test, addresses only inside it) running `bernstein worker`. Agents are the scripted agent.
// Ignored with the reason where namespaces cannot be created (not root, no iproute2).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { POSTGRES_MISSING, POSTGRES_PASSWORD, startPostgres } from "../_helpers/services.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { HostNet, netnsUnavailable, Watched } from "./_netns.ts";
import { bern, prepareRepo, runEnv, step, summaryOf } from "./_run_helpers.ts";

const UNAVAILABLE = await netnsUnavailable();
const SKIPPED = UNAVAILABLE === undefined ? "" : ` [skipped: ${UNAVAILABLE}]`;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    NO_COLOR: "1",
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir !== undefined) env.DENO_DIR = denoDir;
  return env;
}

function freePort(hostname: string): number {
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

interface Cluster {
  net: HostNet;
  repo: string;
  url: string;
  workers: Watched[];
}

/** A repo whose run listens for workers on the bridge, and `hosts` workers started on it. */
async function cluster(
  dir: string,
  hosts: number,
  plan: string,
  tuning: Record<string, unknown> = {},
): Promise<Cluster> {
  const net = await HostNet.create(hosts);
  const repo = join(dir, "repo");
  await Deno.mkdir(repo);
  const port = freePort(net.hostAddress);
  const url = `http://${net.hostAddress}:${port}`;
  await prepareRepo(repo, plan, {
    max_agents: 8,
    workers: { listen: `${net.hostAddress}:${port}`, local_agents: 0 },
    network: { allowed_ips: ["127.0.0.1", "::1", net.cidr] },
    tuning: {
      agent: { heartbeat_interval_s: 0.5 },
      workers: { poll_wait_s: 2 },
      ...tuning,
    },
  });
  const workers: Watched[] = [];
  for (let i = 1; i <= hosts; i++) {
    const tokenFile = join(dir, `w${i}.token`);
    const minted = await bern(repo, ["workers", "token", `w${i}`, "--out", tokenFile]);
    strictEqual(minted.code, 0, minted.stderr);
    workers.push(
      new Watched(
        net.bernsteinOn(i, [
          "worker",
          "--server",
          url,
          "--token-file",
          tokenFile,
          "--name",
          `w${i}`,
          "--capacity",
          "2",
          "--dir",
          join(dir, `w${i}-state`),
        ]),
        { cwd: dir, env: baseEnv() },
      ),
    );
  }
  return { net, repo, url, workers };
}

/** `bernstein run plan.yaml --json` in the repo, watched line by line. */
function startRun(c: Cluster): Watched {
  return new Watched(
    [
      Deno.execPath(),
      "run",
      "-q",
      "--frozen",
      `--config=${join(REPO_ROOT, "deno.json")}`,
      "-P=bernstein",
      join(REPO_ROOT, "main.ts"),
      "run",
      "plan.yaml",
      "--json",
    ],
    { cwd: c.repo, env: { ...baseEnv(), ...runEnv(c.repo) } },
  );
}

async function finish(run: Watched): Promise<Record<string, unknown>> {
  await run.done;
  const summary = summaryOf({
    code: (await run.child.status).code,
    stdout: run.lines.join("\n") + "\n",
    stderr: run.errLines.join("\n"),
  });
  return summary;
}

async function teardown(c: Cluster): Promise<void> {
  for (const w of c.workers) {
    try {
      w.child.kill("SIGTERM");
    } catch {
      // gone
    }
  }
  await c.net.close();
  await Promise.allSettled(c.workers.map((w) => w.done));
}

async function auditEvents(
  repo: string,
): Promise<{
  event_type: string;
  actor: string;
  resource_id: string;
  details: Record<string, unknown>;
}[]> {
  const out = [];
  for await (const e of Deno.readDir(join(repo, ".sdd", "audit"))) {
    if (!e.name.endsWith(".jsonl")) continue;
    const text = await Deno.readTextFile(join(repo, ".sdd", "audit", e.name));
    for (const line of text.split("\n").filter(Boolean)) out.push(JSON.parse(line));
  }
  return out;
}

/** A scripted-agent instruction that waits until the test creates `path` (no fixed sleep). */
function waitFor(path: string): string {
  return `@agent run sh -c "while [ ! -e ${path} ]; do sleep 0.05; done"`;
}

function plan(tasks: { title: string; lines: string[] }[]): string {
  return `name: hosts\ncli: scripted\nstages:\n  - name: all\n    steps:\n${
    tasks.map((t) => step(t.title, t.lines)).join("\n")
  }\n`;
}

Deno.test({
  name:
    `multi-host: a 20-task plan spreads over three worker hosts and merges completely; audit and lineage gates pass${SKIPPED}`,
  ignore: UNAVAILABLE !== undefined,
  fn: async () => {
    await withTempDir(async (dir) => {
      const tasks = Array.from({ length: 20 }, (_, i) => ({
        title: `File ${i + 1}`,
        lines: [`@agent write f${i + 1}.txt value ${i + 1}`],
      }));
      const c = await cluster(dir, 3, plan(tasks));
      try {
        const run = startRun(c);
        const summary = await finish(run);
        const story = [...run.lines, ...c.workers.flatMap((w) => w.errLines)].join("\n");
        strictEqual(summary.health, "HEALTHY", story);
        strictEqual((summary.merges as unknown[]).length, 20, story);
        for (let i = 1; i <= 20; i++) {
          strictEqual(await Deno.readTextFile(join(c.repo, `f${i}.txt`)), `value ${i}\n`);
        }
        const events = await auditEvents(c.repo);
        const byWorker = new Map<string, number>();
        for (const e of events.filter((e) => e.event_type === "worker.result")) {
          byWorker.set(e.actor, (byWorker.get(e.actor) ?? 0) + 1);
        }
        deepStrictEqual([...byWorker.keys()].sort(), ["worker:w1", "worker:w2", "worker:w3"]);
        strictEqual([...byWorker.values()].reduce((a, b) => a + b, 0), 20);
        // Every agent ran on a worker: the orchestrator holds none of their private keys.
        const keys = await Array.fromAsync(Deno.readDir(join(c.repo, ".sdd", "keys", "agents")))
          .catch(() => []);
        deepStrictEqual(keys.filter((k) => k.name.startsWith("scripted")), []);
        const gate = await bern(c.repo, ["lineage", "gate", "--json"]);
        strictEqual(gate.code, 0, gate.stdout + gate.stderr);
        strictEqual(JSON.parse(gate.stdout).ok, true);
        const audit = await bern(c.repo, ["audit", "verify"]);
        strictEqual(audit.code, 0, audit.stdout + audit.stderr);
      } finally {
        await teardown(c);
      }
    });
  },
});

Deno.test({
  name:
    `multi-host: a worker killed mid-task loses its claim after the timeout; the task runs once elsewhere and merges once${SKIPPED}`,
  ignore: UNAVAILABLE !== undefined,
  fn: async () => {
    await withTempDir(async (dir) => {
      const c = await cluster(
        dir,
        2,
        plan([{ title: "Slow", lines: ["@agent write slow.txt done", waitFor(join(dir, "go"))] }]),
        { orchestrator: { stale_claim_timeout_s: 3 } },
      );
      try {
        const run = startRun(c);
        const first = JSON.parse(await run.waitFor((l) => l.includes('"task.spawned"')));
        const victim = Number(String(first.worker).slice(1));
        ok(victim === 1 || victim === 2, `spawned on ${first.worker}`);
        // kill -9 the worker process (its agent, in its own process group, goes on alone).
        c.workers[victim - 1].child.kill("SIGKILL");
        // The orphaned agent may finish only once its claim is gone: it reports to the run's
        // task server directly, and a report made before would be an agent's done on a lost
        // worker (tests/workers/routes_test.ts: the run fails such a task as infra-error).
        await run.waitFor((l) => l.includes('"run.warning"') && l.includes("expired"));
        await Deno.writeTextFile(join(dir, "go"), "");
        const summary = await finish(run);
        strictEqual(summary.health, "HEALTHY", run.errLines.join("\n"));
        const spawned = run.events().filter((e) => e.type === "task.spawned");
        strictEqual(spawned.length, 2, "ran once more, elsewhere");
        ok(spawned[1].worker !== first.worker, `second run on ${spawned[1].worker}`);
        ok(
          run.events().some((e) =>
            e.type === "run.warning" && String(e.message).includes("expired")
          ),
          "the claim expired",
        );
        const merges = summary.merges as { task_id: string }[];
        strictEqual(merges.length, 1, "merged once");
        const events = await auditEvents(c.repo);
        ok(
          events.some((e) => e.event_type === "worker.lost" && e.resource_id === first.worker),
        );
        strictEqual(events.filter((e) => e.event_type === "merge.completed").length, 1);
      } finally {
        await teardown(c);
      }
    });
  },
});

Deno.test({
  name:
    `multi-host: a worker host's link goes down and comes back mid-run; the run finishes${SKIPPED}`,
  ignore: UNAVAILABLE !== undefined,
  fn: async () => {
    await withTempDir(async (dir) => {
      const tasks = Array.from({ length: 4 }, (_, i) => ({
        title: `Task ${i + 1}`,
        // The agents write only once the link is back: a tool call made while the policy hook
        // cannot reach the task server is denied (fail closed), and the agent would finish with
        // nothing to merge.
        lines: [waitFor(join(dir, "go")), `@agent write t${i + 1}.txt t${i + 1}`],
      }));
      // An agent that finishes while its link is still coming back cannot report, and fails
      // like any agent that cannot reach the task server: retries (the default, 2) take it again.
      const c = await cluster(dir, 2, plan(tasks), { orchestrator: { stale_claim_timeout_s: 3 } });
      try {
        const run = startRun(c);
        await run.waitFor((l) => l.includes('"task.spawned"') && l.includes('"worker":"w1"'));
        await c.net.linkDown(1);
        // Down long enough for its claims to expire: the run goes on without it.
        await run.waitFor((l) => l.includes('"run.warning"') && l.includes("expired"));
        await c.net.linkUp(1);
        await Deno.writeTextFile(join(dir, "go"), "");
        const summary = await finish(run);
        const audit = (await auditEvents(c.repo)).map((e) =>
          `${e.event_type} ${e.resource_id} ${JSON.stringify(e.details ?? e).slice(0, 300)}`
        );
        const root = join(c.repo, ".sdd", "runtime", "ledger");
        const ledger = await Array.fromAsync(Deno.readDir(root))
          .then(async (runs) => {
            const rows: string[] = [];
            for (const r of runs) {
              const path = join(root, r.name, "000000.jsonl");
              rows.push(...(await Deno.readTextFile(path).catch(() => "")).split("\n"));
            }
            return rows.filter((l) => l.includes("task.failed") || l.includes("abandoned"));
          }).catch((e) => [String(e)]);
        const story = [
          ...run.lines,
          "--- orchestrator stderr",
          ...run.errLines,
          "--- workers",
          ...c.workers.flatMap((w) => w.errLines),
          "--- audit",
          ...audit,
          "--- ledger",
          ...ledger,
        ].join("\n");
        strictEqual(summary.end, "quiescent", story);
        strictEqual(summary.health, "HEALTHY", story);
        const merged = (summary.merges as { task_id: string }[]).map((m) => m.task_id).sort();
        strictEqual(merged.length, 4, story);
        strictEqual(new Set(merged).size, 4, "nothing merged twice");
        for (let i = 1; i <= 4; i++) {
          strictEqual(await Deno.readTextFile(join(c.repo, `t${i}.txt`)), `t${i}\n`);
        }
      } finally {
        await teardown(c);
      }
    });
  },
});

/** Forwards TCP from `hostname:0` to `127.0.0.1:target` (a loopback-only server on the bridge). */
function forward(hostname: string, target: number): { port: number; close: () => void } {
  const listener = Deno.listen({ hostname, port: 0 });
  const conns = new Set<Deno.Conn>();
  (async () => {
    for await (const inbound of listener) {
      conns.add(inbound);
      Deno.connect({ hostname: "127.0.0.1", port: target }).then((outbound) => {
        conns.add(outbound);
        inbound.readable.pipeTo(outbound.writable).catch(() => {});
        outbound.readable.pipeTo(inbound.writable).catch(() => {});
      }, () => inbound.close());
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close: () => {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // closed
        }
      }
    },
  };
}

const RACE_UNAVAILABLE = UNAVAILABLE ?? POSTGRES_MISSING;

Deno.test({
  name:
    `multi-host: two orchestrators on two hosts race for one PostgreSQL store; one runs, the other is refused naming it${
      RACE_UNAVAILABLE === undefined ? "" : ` [skipped: ${RACE_UNAVAILABLE}]`
    }`,
  ignore: RACE_UNAVAILABLE !== undefined,
  fn: async () => {
    const pg = await startPostgres();
    const net = await HostNet.create(2);
    const fwd = forward(net.hostAddress, Number(new URL(pg.url).port));
    const runs: Watched[] = [];
    try {
      await withTempDir(async (dir) => {
        const url = new URL(pg.url);
        url.hostname = net.hostAddress;
        url.port = String(fwd.port);
        const namespace = `race-${Deno.pid}-${Date.now() % 100000}`;
        const config = {
          storage: { backend: "postgres", namespace, database_url: url.href },
        };
        const slow = plan([{ title: "Wait", lines: ["@agent sleep 60000"] }]);
        const repos = [join(dir, "a"), join(dir, "b")];
        for (const r of repos) {
          await Deno.mkdir(r);
          await prepareRepo(r, slow, config);
        }
        const runOn = (host: number, repo: string) =>
          new Watched(
            net.bernsteinOn(host, ["run", "plan.yaml", "--json"]),
            { cwd: repo, env: { ...baseEnv(), ...runEnv(repo) } },
          );
        runs.push(runOn(1, repos[0]));
        // The first holds the namespace once its agent is spawned.
        await runs[0].waitFor((l) => l.includes('"task.spawned"'));
        runs.push(runOn(2, repos[1]));
        const status = await runs[1].done;
        strictEqual(status.code, 1, runs[1].lines.join("\n"));
        const message = runs[1].errLines.join("\n");
        ok(
          message.includes("error[task.store_locked]") &&
            message.includes(`(namespace ${namespace}) is open in another process`) &&
            message.includes(`pid ${runs[0].child.pid}`),
          message,
        );
        ok(!message.includes(POSTGRES_PASSWORD), "no password in the refusal");
        strictEqual(runs[0].events().some((e) => e.type === "run.summary"), false, "A still runs");
      });
    } finally {
      for (const r of runs) {
        try {
          r.child.kill("SIGKILL");
        } catch {
          // gone
        }
      }
      await net.close(); // kills the agents left in the namespaces too
      await Promise.allSettled(runs.map((r) => r.done));
      fwd.close();
      await pg.stop();
    }
  },
});
