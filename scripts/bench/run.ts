// Orchestration overhead: 100 tasks, 4 agents at once, a no-op agent (a shell one-liner that
// writes one file through the generic adapter), against a plain shell script doing the same
// git work per task (worktree add, commit, merge, worktree remove), in the same invocation.
// Goal (issue 22): within 1.2x of the script's wall time.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compare, peakRssMiB, report, timeCommand } from "./_report.ts";
import { v8FlagsArg } from "../runtime_flags.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TASKS = Number(Deno.env.get("BENCH_RUN_TASKS") ?? "100");

async function sh(cwd: string, script: string): Promise<void> {
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
}

async function makeRepo(dir: string): Promise<void> {
  await sh(
    dir,
    "git init -q -b main && git config user.name bench && git config user.email bench@b.invalid && " +
      "echo '# bench' > README.md && git add -A && git commit -qm init && git checkout -qb feature",
  );
}

const base = await Deno.makeTempDir({ prefix: "bernstein-bench-run-" });

// 1. The plain shell script.
const scriptRepo = join(base, "script");
await Deno.mkdir(scriptRepo);
await makeRepo(scriptRepo);
const script = `set -e
for i in $(seq 1 ${TASKS}); do
  git worktree add -q -b agent/t$i .wt/t$i HEAD
  echo done > .wt/t$i/out-t$i.txt
  git -C .wt/t$i add -A
  git -C .wt/t$i commit -qm "task $i"
  git merge -q --no-ff --no-edit agent/t$i
  git worktree remove .wt/t$i
  git branch -qD agent/t$i
done`;
await Deno.writeTextFile(join(scriptRepo, ".git", "info", "exclude"), ".wt/\n");
const scriptRun = await timeCommand(["sh", "-c", script], { cwd: scriptRepo });
if (scriptRun.code !== 0) throw new Error("the shell baseline failed");

// 2. bernstein run with the same work per task.
const runRepo = join(base, "run");
await Deno.mkdir(runRepo);
await makeRepo(runRepo);
const steps = Array.from(
  { length: TASKS },
  (_, i) => `      - title: Task ${i + 1}\n        description: no-op\n`,
).join("");
await Deno.writeTextFile(
  join(runRepo, "plan.yaml"),
  `cli: generic\nmax_agents: 4\nstages:\n  - name: all\n    steps:\n${steps}`,
);
await sh(runRepo, "git add plan.yaml && git commit -qm plan");
await Deno.mkdir(join(runRepo, ".sdd"), { recursive: true });
await Deno.writeTextFile(
  join(runRepo, ".sdd", "config.yaml"),
  JSON.stringify({
    adapters: {
      generic: {
        command: ["sh", "-c", 'cat > /dev/null; echo done > "out-$BERNSTEIN_TASK_ID.txt"'],
        prompt: "stdin",
      },
    },
    tuning: { orchestrator: { tick_interval_s: 0.5 }, tasks: { default_max_retries: 0 } },
  }),
);
const env = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: Deno.env.get("HOME") ?? base,
  BERNSTEIN_AUDIT_KEY_PATH: join(base, "audit.key"),
  NO_COLOR: "1",
};
const run = await timeCommand(
  [
    Deno.execPath(),
    "run",
    "-q",
    "--frozen",
    `--config=${join(ROOT, "deno.json")}`,
    "-P=bernstein",
    v8FlagsArg(),
    join(ROOT, "main.ts"),
    "run",
    "plan.yaml",
  ],
  { cwd: runRepo, env },
);
const merged = (await new Deno.Command("git", {
  args: ["log", "--oneline", "--merges"],
  cwd: runRepo,
  stdout: "piped",
}).output()).stdout;
const merges = new TextDecoder().decode(merged).trim().split("\n").filter((l) => l !== "").length;

report("run", `shell script, ${TASKS} tasks: wall`, scriptRun.ms / TASKS, "ms/task");
report(
  "run",
  `bernstein run, ${TASKS} tasks, 4 agents: exit ${run.code}, merges`,
  merges,
  `of ${TASKS}`,
);
compare("run", `bernstein run, ${TASKS} tasks, 4 agents: wall`, run.ms / TASKS, "ms/task", {
  value: scriptRun.ms / TASKS,
  label: "plain shell script doing the same git work, same run",
  goal: "<= 1.2",
});
compare("run", "bernstein run: CPU (user+sys, with its children)", run.cpuMs / TASKS, "ms/task", {
  value: scriptRun.cpuMs / TASKS,
  label: "the shell script's CPU",
});
report("run", "bernstein run peak memory", run.peakMiB, "MiB");
report("run", "bench process peak memory", peakRssMiB(), "MiB");
await Deno.remove(base, { recursive: true });
