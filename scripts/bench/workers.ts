// Workers on other hosts: time to drain a plan of no-op agents (the generic adapter writing one
// file, as run.ts) spread over 3 worker hosts (Linux network namespaces, 2 agents each, no
// agent on the orchestrator's host), against the same plan on one host with the same 6 agents
// at once. Both are whole `bernstein run`s; the reference is the one-host run of the same
// invocation. BENCH_WORKERS_TASKS sets the plan size (default 1,000). Needs root and iproute2
// for the namespaces; otherwise it says why and measures nothing.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HostNet, netnsUnavailable, Watched } from "../../tests/e2e/_netns.ts";
import { compare, report, timeCommand } from "./_report.ts";
import { v8FlagsArg } from "../runtime_flags.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TASKS = Number(Deno.env.get("BENCH_WORKERS_TASKS") ?? "1000");
const HOSTS = 3;
const PER_HOST = 2;

const unavailable = await netnsUnavailable();
if (unavailable !== undefined) {
  report("workers", `skipped: ${unavailable}`, 0, "-");
  Deno.exit(0);
}

async function sh(cwd: string, script: string): Promise<void> {
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
}

function bernstein(args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    "--frozen",
    `--config=${join(ROOT, "deno.json")}`,
    "-P=bernstein",
    v8FlagsArg(),
    join(ROOT, "main.ts"),
    ...args,
  ];
}

/** A repo with the no-op plan and `extra` config. */
async function repoWith(dir: string, extra: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await sh(
    dir,
    "git init -q -b main && git config user.name bench && git config user.email b@b.invalid && " +
      "echo '# bench' > README.md && git add -A && git commit -qm init && git checkout -qb feature",
  );
  const steps = Array.from(
    { length: TASKS },
    (_, i) => `      - title: Task ${i + 1}\n        description: no-op\n`,
  ).join("");
  await Deno.writeTextFile(
    join(dir, "plan.yaml"),
    `cli: generic\nmax_agents: ${HOSTS * PER_HOST}\nstages:\n  - name: all\n    steps:\n${steps}`,
  );
  await sh(dir, "git add plan.yaml && git commit -qm plan");
  await Deno.mkdir(join(dir, ".sdd"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, ".sdd", "config.yaml"),
    JSON.stringify({
      adapters: {
        generic: {
          command: ["sh", "-c", 'cat > /dev/null; echo done > "out-$BERNSTEIN_TASK_ID.txt"'],
          prompt: "stdin",
        },
      },
      tuning: { orchestrator: { tick_interval_s: 0.5 }, tasks: { default_max_retries: 0 } },
      ...extra,
    }),
  );
}

async function merges(dir: string): Promise<number> {
  const out = await new Deno.Command("git", {
    args: ["log", "--oneline", "--merges"],
    cwd: dir,
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n").filter((l) => l !== "").length;
}

const base = await Deno.makeTempDir({ prefix: "bernstein-bench-workers-" });
const env = (dir: string) => ({
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: Deno.env.get("HOME") ?? base,
  BERNSTEIN_AUDIT_KEY_PATH: join(dir, "..", `${dir.split("/").pop()}.key`),
  NO_COLOR: "1",
});

// 1. One host: 6 agents at once on the orchestrator's host.
const local = join(base, "local");
await repoWith(local, {});
const one = await timeCommand(bernstein(["run", "plan.yaml"]), { cwd: local, env: env(local) });
const oneMerged = await merges(local);

// 2. Three worker hosts, 2 agents each, none on the orchestrator's host.
const net = await HostNet.create(HOSTS);
const workers: Watched[] = [];
let spread: Awaited<ReturnType<typeof timeCommand>>;
let spreadMerged = 0;
try {
  const listener = Deno.listen({ hostname: net.hostAddress, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const remote = join(base, "workers");
  await repoWith(remote, {
    workers: { listen: `${net.hostAddress}:${port}`, local_agents: 0 },
    network: { allowed_ips: ["127.0.0.1", "::1", net.cidr] },
  });
  for (let i = 1; i <= HOSTS; i++) {
    const tokenFile = join(base, `w${i}.token`);
    await timeCommand(bernstein(["workers", "token", `w${i}`, "--out", tokenFile]), {
      cwd: remote,
      env: env(remote),
    });
    workers.push(
      new Watched(
        net.bernsteinOn(i, [
          "worker",
          "--server",
          `http://${net.hostAddress}:${port}`,
          "--token-file",
          tokenFile,
          "--name",
          `w${i}`,
          "--capacity",
          String(PER_HOST),
          "--dir",
          join(base, `w${i}-state`),
        ]),
        { cwd: base, env: env(remote) },
      ),
    );
  }
  spread = await timeCommand(bernstein(["run", "plan.yaml"]), { cwd: remote, env: env(remote) });
  spreadMerged = await merges(remote);
  if (spread.code !== 0) {
    console.error(
      `the run over workers ended with exit ${spread.code}:\n${spread.stdout.slice(-3000)}${
        spread.stderr.slice(-2000)
      }`,
    );
    for (const w of workers) console.error(w.errLines.slice(-10).join("\n"));
  }
} finally {
  for (const w of workers) {
    try {
      w.child.kill("SIGTERM");
    } catch {
      // gone
    }
  }
  await net.close();
  await Promise.allSettled(workers.map((w) => w.done));
}

report(
  "workers",
  `one host, ${TASKS} tasks, 6 agents: exit ${one.code}, merges`,
  oneMerged,
  `of ${TASKS}`,
);
report(
  "workers",
  `3 worker hosts x ${PER_HOST}, ${TASKS} tasks: exit ${spread.code}, merges`,
  spreadMerged,
  `of ${TASKS}`,
);
report("workers", `one host, ${TASKS} tasks, 6 agents: time to drain`, one.ms / 1000, "s");
compare(
  "workers",
  `3 worker hosts x ${PER_HOST} agents, ${TASKS} tasks: time to drain`,
  spread.ms / 1000,
  "s",
  { value: one.ms / 1000, label: "the same plan on one host, 6 agents, same invocation" },
);
compare("workers", "3 worker hosts: per task", spread.ms / TASKS, "ms/task", {
  value: one.ms / TASKS,
  label: "one host",
});
await Deno.remove(base, { recursive: true });
