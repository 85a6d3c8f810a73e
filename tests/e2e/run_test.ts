// Whole runs: real git, real processes (the scripted agent), the real task server.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { scheduleTick } from "../../src/orchestrator/mod.ts";
import { waitUntil } from "../_helpers/events.ts";
import { git, withTempDir } from "../_helpers/temp.ts";
import {
  bern,
  eventsOf,
  prepareRepo,
  scriptedPlan,
  startBernstein,
  step,
  summaryOf,
} from "./_run_helpers.ts";

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
/** Changes to tracked files at the root (a merge must never leave any). */
const trackedChanges = async (dir: string) =>
  (await git(dir, "status", "--porcelain", "--untracked-files=no")).trim();
const runTag = (summary: Record<string, unknown>) => String(summary.run_id).split("-").pop();

async function ledgerRows(
  dir: string,
  runId: string,
): Promise<{ kind: string; task_id: string | null; payload: Record<string, unknown> }[]> {
  const text = await Deno.readTextFile(
    join(dir, ".sdd", "runtime", "ledger", runId, "000000.jsonl"),
  );
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test("a plan with dependencies runs agents in parallel, merges in order, and the record verifies", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `name: deps
cli: scripted
stages:
  - name: build
    steps:
${step("Write a", ["@agent write a.txt alpha", "@agent sleep 300"], "        files: [a.txt]\n")}
${step("Write b", ["@agent write b.txt beta", "@agent sleep 300"], "        files: [b.txt]\n")}
  - name: use
    depends_on: [build]
    steps:
${
        step(
          "Write c",
          ["@agent write c.txt gamma"],
          "        completion_signals:\n          - path_exists: c.txt\n",
        )
      }
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.health, "HEALTHY");
    const events = eventsOf(run);
    const spawned = events.filter((e) => e.type === "task.spawned").map((e) => e.task_id);
    const merged = events.filter((e) => e.type === "task.merged").map((e) => e.task_id);
    deepStrictEqual(spawned.slice(0, 2).sort(), ["1.1-write-a", "1.2-write-b"]);
    // The dependent step starts only after both of its dependencies merged.
    const iC = events.findIndex((e) => e.type === "task.spawned" && e.task_id === "2.1-write-c");
    const iA = events.findIndex((e) => e.type === "task.merged" && e.task_id === "1.1-write-a");
    const iB = events.findIndex((e) => e.type === "task.merged" && e.task_id === "1.2-write-b");
    ok(iC > iA && iC > iB, "c waits for a and b to merge");
    // Both first-stage agents were alive at the same time.
    const iDoneFirst = events.findIndex((e) => e.type === "task.done");
    ok(
      events.slice(0, iDoneFirst).filter((e) => e.type === "task.spawned").length === 2,
      "a and b overlap",
    );
    deepStrictEqual(merged.sort(), ["1.1-write-a", "1.2-write-b", "2.1-write-c"]);
    for (const [f, text] of [["a.txt", "alpha\n"], ["b.txt", "beta\n"], ["c.txt", "gamma\n"]]) {
      strictEqual(await Deno.readTextFile(join(dir, f)), text);
    }
    strictEqual(
      await exists(join(dir, ".sdd", "worktrees", `1.1-write-a-a1-${runTag(summary)}`)),
      false,
      "merged worktrees are removed",
    );
    const gate = await bern(dir, ["lineage", "gate", "--json"]);
    strictEqual(gate.code, 0, gate.stdout + gate.stderr);
    // The end of the run signed a checkpoint of each log; the gate checks the lineage one.
    const signed = summary.checkpoints as { log: string; size: number; root: string }[];
    deepStrictEqual(signed.map((c) => [c.log, c.log === "lineage" ? c.size : "n"]), [
      ["lineage", 3],
      ["audit", "n"],
    ]);
    const gateCp = JSON.parse(gate.stdout).checkpoint;
    strictEqual(gateCp.latest.size, 3);
    strictEqual(gateCp.latest.root, signed[0].root);
    strictEqual(gateCp.not_checkpointed, 0);
    const chain = JSON.parse((await bern(dir, ["lineage", "chain", "c.txt", "--json"])).stdout);
    strictEqual(
      JSON.stringify(chain).includes(`scripted:2.1-write-c-a1-${runTag(summary)}`),
      true,
      "c.txt is signed by the agent that wrote it",
    );
    const audit = await bern(dir, ["audit", "verify"]);
    strictEqual(audit.code, 0, audit.stdout + audit.stderr);
    ok(
      audit.stdout.includes(`covers ${signed[1].size} lines`) &&
        audit.stdout.includes("; 0 not yet checkpointed; 1 signature checked"),
      `the run's audit checkpoint is checked: ${audit.stdout}`,
    );
    const runId = String(summary.run_id);
    const score = await bern(dir, ["runs", "scorecard", runId, "--verify"]);
    strictEqual(score.code, 0, score.stdout + score.stderr);
    const kinds = (await ledgerRows(dir, runId)).map((r) => r.kind);
    strictEqual(kinds[0], "run.open");
    strictEqual(kinds[kinds.length - 1], "run.closed");
    strictEqual(kinds.filter((k) => k === "task.completed").length, 3);
    strictEqual(
      await trackedChanges(dir),
      "",
      "the root stays clean",
    );
  });
});

Deno.test("scheduling decisions of a real run replay identically", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted
max_agents: 2
stages:
  - name: one
    steps:
${step("A", ["@agent write a.txt a"])}
${step("B", ["@agent write b.txt b"])}
${step("C", ["@agent write c.txt c"])}
  - name: two
    depends_on: [one]
    steps:
${step("D", ["@agent write d.txt d"])}
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr);
    const runId = String(summaryOf(run).run_id);
    const records = JSON.parse(
      await Deno.readTextFile(join(dir, ".sdd", "runs", runId, "decisions.json")),
    );
    ok(records.length >= 3, `${records.length} ticks recorded`);
    for (const r of records) {
      const replayed = scheduleTick({ ...r.input, notBefore: new Map(r.input.notBefore) });
      deepStrictEqual(replayed, r.decisions, `tick ${r.tick}`);
    }
    // max_agents: 2 was honoured in every tick.
    for (const r of records) {
      const spawns = r.decisions.filter((d: { kind: string }) => d.kind === "spawn").length;
      ok(spawns + r.input.running.length <= 2);
    }
  });
});

Deno.test("a merge conflict is refused, the agent's branch kept, and the run unhealthy", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: both
    steps:
${step("Left", ["@agent write README.md left side"])}
${step("Right", ["@agent write README.md right side"])}
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1);
    const summary = summaryOf(run);
    strictEqual(summary.health, "UNHEALTHY");
    const refused = summary.refused_merges as {
      task_id: string;
      branch: string;
      reason: string;
      detail: string;
    }[];
    strictEqual(refused.length, 1);
    strictEqual(refused[0].reason, "merge-conflict");
    ok(refused[0].detail.includes("README.md"));
    ok(
      (await git(dir, "branch", "--list", refused[0].branch)).includes(refused[0].branch),
      "the work is kept",
    );
    const file = await Deno.readTextFile(join(dir, ".sdd", "runtime", "refused_merges.jsonl"));
    ok(file.includes('"reason":"merge-conflict"'));
    strictEqual(
      await trackedChanges(dir),
      "",
      "no half-merged state is left",
    );
  });
});

Deno.test("a failing tests gate refuses the work with its output; run_config refuses config edits", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: s
    steps:
${step("Bad code", ["@agent write bad.txt broken"])}
${step("Edit config", ["@agent write .mcp.json {}"])}
`,
      {
        // The gate is the merge-time backstop for agents without a pre-tool hook; with the
        // policy on, the scripted agent's hook would deny the .mcp.json write before it happens.
        policy: { enabled: false },
        quality_gates: {
          run_config: true,
          tests: {
            command: [
              "sh",
              "-c",
              "if [ -e bad.txt ]; then echo 'bad.txt must not exist'; exit 4; fi",
            ],
          },
        },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1);
    const events = eventsOf(run);
    const gates = events.filter((e) => e.type === "gate.failed").map((e) => [e.task_id, e.gate]);
    deepStrictEqual(gates.sort(), [["1.1-bad-code", "tests"], ["1.2-edit-config", "run_config"]]);
    const auditShow = await bern(dir, ["audit", "show", "--type", "gate.result", "--json"]);
    ok(
      auditShow.stdout.includes("bad.txt must not exist"),
      "the gate output is recorded in the audit chain",
    );
    strictEqual(await exists(join(dir, "bad.txt")), false, "nothing was merged");
  });
});

Deno.test("a crashing agent fails its task; the retry carries the failure into the next prompt", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("Crash", ["@agent crash 7"])),
      {
        tuning: { tasks: { default_max_retries: 1 } },
        // The scripted agent records its prompt there: a folder the sandbox lets it write.
        sandbox: { writable: [join(dir, ".record")] },
      },
    );
    await Deno.mkdir(join(dir, ".record"));
    const record = join(dir, ".record", "prompt");
    const run = await bern(dir, ["run", "plan.yaml", "--json"], {
      BERNSTEIN_SCRIPTED_RECORD: record,
    });
    strictEqual(run.code, 1);
    const events = eventsOf(run);
    strictEqual(events.filter((e) => e.type === "task.spawned").length, 2, "one retry");
    ok(
      events.some((e) => e.type === "task.failed" && String(e.reason).includes("exit")),
      JSON.stringify(events),
    );
    const prompt = await Deno.readTextFile(record);
    ok(prompt.includes("Previous attempt failed (this is attempt 2)"), prompt);
  });
});

Deno.test("a hanging agent is killed at its deadline with its whole process group", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("Hang", ["@agent hang"], "        scope: small\n")),
      {
        tuning: {
          agent: { kill_grace_s: 0.5 },
          orchestrator: {
            max_agent_runtime_s: 1,
            scope_runtime_s: { small: 1, medium: 1, large: 1, xl: 1 },
          },
        },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr);
    const failed = eventsOf(run).find((e) => e.type === "task.failed");
    ok(String(failed?.reason).startsWith("deadline: killed after 1s"), JSON.stringify(failed));
    const ps = JSON.parse((await bern(dir, ["ps", "--all", "--json"])).stdout);
    const pid = ps.agents[0].pid as number;
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
    ok(stat === "" || stat.split(") ")[1]?.startsWith("Z"), "the agent process is gone");
    const tasks = JSON.parse((await bern(dir, ["task", "list", "--json"])).stdout).tasks as {
      status: string;
      assigned_agent: string | null;
    }[];
    strictEqual(tasks[0].status, "failed", "the claim was released");
  });
});

Deno.test("the default branch is refused before any worktree or process exists", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("X", ["@agent write x.txt x"])),
    );
    const plan = await Deno.readTextFile(join(dir, "plan.yaml"));
    await git(dir, "checkout", "-q", "main");
    await Deno.writeTextFile(join(dir, "plan.yaml"), plan);
    const run = await bern(dir, ["run", "plan.yaml"]);
    strictEqual(run.code, 2);
    ok(
      run.stderr.startsWith(
        "error[run.default_branch]: refusing to run on the default branch 'main'",
      ),
      run.stderr,
    );
    strictEqual(await exists(join(dir, ".sdd", "worktrees")), false);
    strictEqual(await exists(join(dir, ".sdd", "runtime", "tasks.jsonl")), false);
    const allowed = await bern(dir, ["run", "plan.yaml", "--dry-run"]);
    strictEqual(allowed.code, 0, "--dry-run is exempt");
    const withEnv = await bern(dir, ["run", "plan.yaml", "--json"], {
      BERNSTEIN_ALLOW_MERGE_TO_DEFAULT_BRANCH: "1",
    });
    strictEqual(withEnv.code, 0, withEnv.stderr);
  });
});

Deno.test("an unknown or missing adapter is refused up front with the adapters that would work", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `stages:\n  - name: s\n    steps:\n${step("X", ["@agent write x.txt x"])}\n`,
    );
    const unknown = await bern(dir, ["run", "plan.yaml", "--cli", "clade"]);
    strictEqual(unknown.code, 2, unknown.stderr);
    ok(unknown.stderr.includes("unknown adapter 'clade'"), unknown.stderr);
    ok(unknown.stderr.includes("scripted"), "lists the adapters that would work");
    const missing = await bern(dir, ["run", "plan.yaml", "--cli", "goose"], {
      PATH: "/usr/bin:/bin",
    });
    strictEqual(missing.code, 2);
    ok(missing.stderr.includes("adapter 'goose' cannot run"), missing.stderr);
    strictEqual(await exists(join(dir, ".sdd", "worktrees")), false);
  });
});

Deno.test("the zero-terminal backstop fails tasks stuck behind a blocked one and stops", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: first
    steps:
${
        step("Needs a human", [
          '@agent run bernstein task block 1.1-needs-a-human --reason "needs credentials"',
          "@agent no-report",
        ])
      }
  - name: second
    depends_on: [first]
    steps:
${step("After", ["@agent write after.txt x"])}
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.end, "backstop");
    ok(
      String(summary.reason).includes("no task finished and nothing changed"),
      String(summary.reason),
    );
    const tasks = JSON.parse((await bern(dir, ["task", "list", "--json"])).stdout).tasks as {
      id: string;
      status: string;
      terminal_reason: string;
    }[];
    for (const t of tasks) {
      strictEqual(t.status, "failed", t.id);
      ok(t.terminal_reason.startsWith("backstop:"), t.terminal_reason);
    }
    const kinds = (await ledgerRows(dir, String(summary.run_id))).map((r) => r.kind);
    ok(kinds.includes("task.abandoned"));
  });
});

Deno.test("a goal runs a manager that creates tasks through the task server", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, "stages: []\n");
    const goal = [
      "Say hello in a file.",
      '@agent run bernstein task create --title "Write hello" --role backend --description "@agent write hello.txt hi"',
      "@agent summary planned one task",
    ].join("\n");
    const run = await bern(dir, ["-g", goal, "--cli", "scripted", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const tasks = JSON.parse((await bern(dir, ["task", "list", "--json"])).stdout).tasks as {
      id: string;
      role: string;
      parent_task_id: string | null;
      status: string;
    }[];
    strictEqual(tasks.length, 2);
    const child = tasks.find((t) => t.role === "backend");
    strictEqual(child?.parent_task_id, "manager");
    strictEqual(child?.status, "closed");
    strictEqual(await Deno.readTextFile(join(dir, "hello.txt")), "hi\n");
  });
});

Deno.test("a manager that creates no task in time aborts the run with exit 2 and a diagnostic", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, "stages: []\n", {
      tuning: { orchestrator: { stalled_manager_threshold_s: 1 } },
    });
    const run = await bern(dir, [
      "-g",
      "Think forever.\n@agent sleep 60000",
      "--cli",
      "scripted",
      "--json",
    ]);
    strictEqual(run.code, 2, run.stderr);
    const summary = summaryOf(run);
    strictEqual(summary.end, "manager-stalled");
    const diagnostic = JSON.parse(
      await Deno.readTextFile(
        join(dir, ".sdd", "runs", String(summary.run_id), "manager_stalled.json"),
      ),
    );
    strictEqual(diagnostic.children, 0);
    strictEqual(diagnostic.task_id, "manager");
  });
});

Deno.test("a killed orchestrator resumes: acknowledged work is not redone and nothing is lost", async () => {
  await withTempDir(async (dir) => {
    // Outside the worktree, in a folder the sandbox shows the agent (read-only).
    await Deno.mkdir(join(dir, ".release"));
    const release = join(dir, ".release", "go");
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: s
    steps:
${step("Quick", ["@agent write quick.txt q"])}
${
        step("Slow", [
          `@agent run sh -c 'while [ ! -f ${release} ]; do sleep 0.05; done'`,
          "@agent write slow.txt s",
        ])
      }
`,
      { sandbox: { read_only: [join(dir, ".release")] } },
    );
    const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
    // The slow agent waits for the release file, so it is still running when the quick task
    // has merged, however slow the machine; then kill -9 and release it.
    await waitUntil(async () => (await git(dir, "log", "--oneline")).includes("Merge 1.1-quick"), {
      what: "the quick task's merge",
      until: child.status,
    });
    child.kill("SIGKILL");
    await child.output();
    const before = JSON.parse((await bern(dir, ["status", "--json"])).stdout).tasks;
    const toDo = before.total - (before.closed ?? 0) - (before.failed ?? 0);
    ok(toDo >= 1, JSON.stringify(before));
    await Deno.writeTextFile(release, "");
    const again = await bern(dir, ["run", "--json"]);
    strictEqual(again.code, 0, again.stderr + again.stdout);
    const events = eventsOf(again);
    strictEqual(events[0].type, "run.resumed");
    strictEqual(events[0].open, toDo, "the banner counts the tasks still to do");
    deepStrictEqual(events.filter((e) => e.type === "task.spawned").map((e) => e.task_id), [
      "1.2-slow",
    ], "only the interrupted task runs again");
    strictEqual(await Deno.readTextFile(join(dir, "slow.txt")), "s\n");
    strictEqual(await Deno.readTextFile(join(dir, "quick.txt")), "q\n");
    const summary = summaryOf(again);
    const rows = await ledgerRows(dir, String(summary.run_id));
    strictEqual(
      rows.filter((r) => r.kind === "task.started" && r.task_id === "1.1-quick").length,
      1,
      "quick ran once",
    );
    ok(rows.some((r) => r.kind === "run.resumed"));
    const gate = await bern(dir, ["lineage", "gate"]);
    strictEqual(gate.code, 0, gate.stdout);
    await Deno.remove(release);
  });
});

Deno.test("status, ps and logs show a live run; stop --force ends it and the record stays whole", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("Talk then hang", ["@agent progress hello from the agent", "@agent hang"])),
    );
    const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
    const output = child.output();
    // The agent hangs after its progress line, so the run lives until stopped.
    let ps: { agents: { task_id: string; state: string }[] } = { agents: [] };
    await waitUntil(async () => {
      ps = JSON.parse((await bern(dir, ["ps", "--json"])).stdout);
      return ps.agents.length > 0;
    }, { what: "an agent in 'bernstein ps'", until: output });
    strictEqual(ps.agents[0]?.task_id, "1.1-talk-then-hang");
    const status = JSON.parse((await bern(dir, ["status", "--json"])).stdout);
    strictEqual(status.run.state, "running");
    let logs = "";
    await waitUntil(async () => {
      logs = (await bern(dir, ["logs", "1.1-talk-then-hang"])).stdout;
      return logs.includes("hello from the agent");
    }, { what: "the agent's progress line in 'bernstein logs'", until: output });
    const stop = await bern(dir, ["stop", "--force"]);
    strictEqual(stop.code, 0, stop.stderr);
    const out = await output;
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    const summary = JSON.parse(lines[lines.length - 1]).summary;
    strictEqual(summary.end, "stopped");
    strictEqual(out.code, 1);
    const after = JSON.parse((await bern(dir, ["status", "--json"])).stdout);
    strictEqual(after.run.state, "finished");
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
    const score = await bern(dir, ["runs", "scorecard", String(summary.run_id), "--verify"]);
    strictEqual(score.code, 0, score.stdout + score.stderr);
  });
});

Deno.test("lineage.strict: a merge whose lineage cannot be recorded is undone and refused; lax merges anyway", async () => {
  for (const strict of [true, false]) {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        scriptedPlan(step("Write", ["@agent write w.txt w"])),
        {
          lineage: { enabled: true, strict },
        },
      );
      // A folder where the log file should be: every lineage append fails.
      await Deno.mkdir(join(dir, ".sdd", "lineage", "log.jsonl"), { recursive: true });
      const before = await git(dir, "rev-parse", "HEAD");
      const run = await bern(dir, ["run", "plan.yaml", "--json"]);
      const summary = summaryOf(run);
      if (strict) {
        strictEqual(run.code, 1, run.stderr);
        const refused = summary.refused_merges as { reason: string; branch: string }[];
        strictEqual(refused[0]?.reason, "lineage-refused", JSON.stringify(summary));
        strictEqual(await git(dir, "rev-parse", "HEAD"), before, "the merge was undone");
        strictEqual(await exists(join(dir, "w.txt")), false);
        strictEqual(await trackedChanges(dir), "");
        ok((await git(dir, "branch", "--list", refused[0].branch)).includes(refused[0].branch));
      } else {
        strictEqual(run.code, 0, run.stderr + run.stdout);
        strictEqual(await Deno.readTextFile(join(dir, "w.txt")), "w\n");
        ok(
          eventsOf(run).some((e) =>
            e.type === "run.warning" && String(e.message).includes("lineage")
          ),
        );
      }
    });
  }
});
