// Run bugs found while making the configuration honest (issue 12 §4), each in a real run with
// the scripted agent, real git and the real task server.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { until } from "../_helpers/wait.ts";
import {
  bern,
  eventsOf,
  prepareRepo,
  scriptedPlan,
  startBernstein,
  step,
  summaryOf,
} from "./_run_helpers.ts";

Deno.test("a dependency that fails once and succeeds on retry still lets its dependent run", async () => {
  await withTempDir(async (dir) => {
    // A folder the sandbox lets the agent write: the marker outlives the first attempt.
    await Deno.mkdir(join(dir, ".flaky"));
    const marker = join(dir, ".flaky", "marker");
    const flaky = `@agent run sh -c "test -e '${marker}' || { touch '${marker}'; exit 1; }"`;
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: first
    steps:
${step("Flaky", [flaky, "@agent write a.txt a"])}
  - name: second
    depends_on: [first]
    steps:
${step("After", ["@agent write b.txt b"])}
`,
      {
        tuning: { tasks: { default_max_retries: 1 } },
        sandbox: { writable: [join(dir, ".flaky")] },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.health, "HEALTHY");
    const failed = eventsOf(run).filter((e) => e.type === "task.failed").map((e) => e.task_id);
    deepStrictEqual(failed, ["1.1-flaky"], "only the flaky attempt failed");
    strictEqual(await Deno.readTextFile(join(dir, "b.txt")), "b\n");
  });
});

Deno.test("a task created 'planned' through the task server does not keep the run alive", async () => {
  await withTempDir(async (dir) => {
    const post = [
      "const r = await fetch(Deno.env.get('BERNSTEIN_SERVER_URL') + '/tasks', {method: 'POST',",
      "headers: {authorization: 'Bearer ' +",
      "Deno.readTextFileSync(Deno.env.get('BERNSTEIN_TASK_TOKEN_FILE')),",
      "'content-type': 'application/json'},",
      "body: JSON.stringify({title: 'Later', description: 'x', role: 'backend', status: 'planned'})});",
      "if (!r.ok) throw new Error(r.status + ' ' + await r.text());",
    ].join(" ");
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: s
    steps:
${
        step(
          "Plan ahead",
          [`@agent run deno eval "${post}"`, "@agent write a.txt a"],
          "        role: manager\n",
        )
      }
`,
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 1, run.stderr + run.stdout);
    const summary = summaryOf(run);
    strictEqual(summary.end, "quiescent");
    strictEqual(summary.health, "UNHEALTHY");
    deepStrictEqual((summary.tasks as Record<string, number>).planned, 1);
    strictEqual(
      summary.reason,
      "every runnable task finished; 1 task(s) left planned: nothing opens a planned task once no agent runs",
    );
  });
});

/** A running agent session recorded in `.sdd/runtime/sessions/`. */
interface RunningSession {
  session: string;
  pid: number;
  pid_start: string | null;
}

/** The running agent sessions recorded in `.sdd/runtime/sessions/`. */
async function runningSessions(dir: string): Promise<RunningSession[]> {
  const out: RunningSession[] = [];
  try {
    for await (const e of Deno.readDir(join(dir, ".sdd", "runtime", "sessions"))) {
      const file = JSON.parse(
        await Deno.readTextFile(join(dir, ".sdd", "runtime", "sessions", e.name)),
      );
      if (file.state === "running") {
        out.push({ session: file.session, pid: file.pid, pid_start: file.pid_start ?? null });
      }
    }
  } catch {
    // Not written yet.
  }
  return out;
}

/** Every file of `.sdd/runtime/sessions/` with its text, for a failure's message. */
async function sessionFolderText(dir: string): Promise<string> {
  const folder = join(dir, ".sdd", "runtime", "sessions");
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(folder)) {
      out.push(`${e.name}: ${await Deno.readTextFile(join(folder, e.name)).catch(String)}`);
    }
  } catch (error) {
    out.push(String(error));
  }
  return out.join("\n");
}

/** The stat line of a process, split after its command name; undefined when it is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** A live process: it exists and is not a zombie (an ended agent whose parent died). */
function alive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[0] !== "Z";
}

/** Ends a process group a failed test would otherwise leave running. */
function endGroup(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

Deno.test({
  name: "agents of a kill -9'd run are ended, and audited, when the next run starts",
  ignore: Deno.build.os !== "linux", // reads /proc to tell a live agent from a zombie
  fn: async () => {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        scriptedPlan(step("Hang", ["@agent hang"])),
        // Without the sandbox: a sandboxed agent dies with the orchestrator that started it
        // (bwrap --die-with-parent), so there would be no leftover to end.
        { isolation: "none" },
      );
      await Deno.writeTextFile(
        join(dir, "other.yaml"),
        scriptedPlan(step("Quick", ["@agent write q.txt q"])),
      );
      const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
      let exited = false;
      child.status.then(() => (exited = true));
      // Wait until the agent has said it hangs: it writes nothing after that, so the
      // orchestrator's death cannot end it through a broken pipe.
      const sessions = await until(async () => {
        if (exited) throw new Error("the run ended before its agent hung");
        const running = await runningSessions(dir);
        if (running.length === 0) return undefined;
        const log = join(dir, ".sdd", "runtime", `${running[0].session}.log`);
        const text = await Deno.readTextFile(log).catch(() => "");
        return text.includes("hanging as instructed") ? running : undefined;
      }, "the agent to hang");
      child.kill("SIGKILL");
      await child.output();
      const [agent] = sessions;
      try {
        strictEqual(alive(agent.pid), true, "the dead run's agent is still running");
        // The orchestrator runs without --allow-all, which Deno asks for any read of /proc:
        // the start time that identifies the agent must still have been recorded.
        strictEqual(agent.pid_start, statFields(agent.pid)?.[19], "the agent's start time");
        // What the next run will find, for the message of a failure (once seen under load and
        // not explained: the next run warned of no leftover).
        const before = `sessions folder: ${await sessionFolderText(dir)}\nstat of ${agent.pid}: ${
          statFields(agent.pid)?.join(" ")
        }`;
        const next = await bern(dir, ["run", "other.yaml", "--fresh", "--json"]);
        strictEqual(next.code, 0, next.stderr + next.stdout);
        strictEqual(
          alive(agent.pid),
          false,
          `ended before the new run started:\n${next.stdout}\nbefore it: ${before}\nafter it: ` +
            `stat of ${agent.pid}: ${statFields(agent.pid)?.join(" ")}\n${next.stderr}`,
        );
        const warning = eventsOf(next).find((e) =>
          e.type === "run.warning" && String(e.message).includes("left running by a dead run")
        );
        strictEqual(typeof warning?.message, "string");
        const audit = await bern(dir, [
          "audit",
          "show",
          "--type",
          "agent.leftover_ended",
          "--json",
        ]);
        const shown = JSON.parse(audit.stdout);
        deepStrictEqual(
          shown.records.map((
            r: { record: { resource_id: string; details: { pid: number } } },
          ) => [r.record.resource_id, r.record.details.pid]),
          [[agent.session, agent.pid]],
        );
      } finally {
        endGroup(agent.pid);
      }
    });
  },
});

Deno.test({
  name: "a recorded agent whose pid now belongs to another process is not signalled",
  ignore: Deno.build.os !== "linux", // start times come from /proc
  fn: async () => {
    await withTempDir(async (dir) => {
      await prepareRepo(
        dir,
        scriptedPlan(step("Quick", ["@agent write q.txt q"])),
        { isolation: "none" },
      );
      // A process group of someone else's that now has the pid a dead run recorded.
      const stranger = new Deno.Command("sleep", {
        args: ["600"],
        stdout: "null",
        stderr: "null",
        detached: true,
      }).spawn();
      try {
        const sessions = join(dir, ".sdd", "runtime", "sessions");
        await Deno.mkdir(sessions, { recursive: true });
        const start = Number(statFields(stranger.pid)?.[19]);
        await Deno.writeTextFile(
          join(sessions, "1.1-old-0001.json"),
          JSON.stringify({
            session: "1.1-old-0001",
            task_id: "1.1-old",
            adapter: "scripted",
            model: null,
            agent_id: "scripted:old",
            worktree: join(dir, "gone"),
            branch: "bernstein/old",
            base_sha: "0".repeat(40),
            pid: stranger.pid,
            pid_start: String(start - 1), // the agent that had this pid started earlier
            started_at: "2026-01-01T00:00:00.000Z",
            state: "running",
            attachment_digests: [],
          }),
        );
        const run = await bern(dir, ["run", "plan.yaml", "--fresh", "--json"]);
        strictEqual(run.code, 0, run.stderr + run.stdout);
        strictEqual(alive(stranger.pid), true, "the stranger was signalled");
        const ended = eventsOf(run).filter((e) =>
          e.type === "run.warning" && String(e.message).includes("left running by a dead run")
        );
        deepStrictEqual(ended, []);
      } finally {
        endGroup(stranger.pid);
        await stranger.status;
      }
    });
  },
});

Deno.test("an agent still reporting progress at its deadline is given more time, audited", async () => {
  await withTempDir(async (dir) => {
    const work = ["@agent progress started"];
    for (let i = 0; i < 5; i++) work.push("@agent sleep 400", `@agent progress step ${i}`);
    work.push("@agent write done.txt done");
    await prepareRepo(
      dir,
      scriptedPlan(step("Long", work, "        scope: small\n")),
      {
        tuning: {
          orchestrator: {
            max_agent_runtime_s: 1,
            scope_runtime_s: { small: 1, medium: 1, large: 1, xl: 1 },
            deadline_extension_s: 3,
            deadline_max_s: 60,
          },
        },
      },
    );
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    strictEqual(summaryOf(run).health, "HEALTHY");
    const shown = await bern(dir, ["audit", "show", "--type", "agent.deadline_extended", "--json"]);
    const first = JSON.parse(shown.stdout).records[0].record.details;
    deepStrictEqual([first.from_s, first.to_s], [1, 4]);
    strictEqual(await Deno.readTextFile(join(dir, "done.txt")), "done\n");
  });
});
