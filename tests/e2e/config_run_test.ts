// Configuration in real runs: what the configuration says happens, in a real run with the
// scripted agent, real git and the real task server.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { git, withTempDir } from "../_helpers/temp.ts";
import {
  bern,
  prepareRepo,
  scriptedPlan,
  startBernstein,
  step,
  summaryOf,
} from "./_run_helpers.ts";

const ONE_STEP = scriptedPlan(step("Write a file", ["@agent write out.txt hello"]));

Deno.test("after 'config set' (and a local bernstein.yaml edit) the next run is not refused as dirty", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ONE_STEP);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    await git(dir, "add", ".sdd/config.yaml", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "track the configuration");
    const set = await bern(dir, ["config", "set", "tuning.agent.kill_grace_s", "3"]);
    strictEqual(set.code, 0, set.stderr);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 1\n");
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr);
    strictEqual(summaryOf(run).health, "HEALTHY");
    strictEqual(await Deno.readTextFile(join(dir, "out.txt")), "hello\n");
    // A real local edit still refuses the run.
    await Deno.writeTextFile(join(dir, "plan.yaml"), ONE_STEP + "# edited\n");
    const dirty = await bern(dir, ["run", "plan.yaml"]);
    strictEqual(dirty.code, 2);
    ok(dirty.stderr.startsWith("error[run.dirty_tree]"), dirty.stderr);
  });
});

async function runOpen(dir: string, runId: string): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(
    join(dir, ".sdd", "runtime", "ledger", runId, "000000.jsonl"),
  );
  const rows = text.trim().split("\n").map((l) => JSON.parse(l));
  return rows.find((r) => r.kind === "run.open").payload;
}

Deno.test("a plan's max_agents is a default: the project file and the inline override beat it", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, "max_agents: 1\n" + ONE_STEP);
    const planOnly = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(planOnly.code, 0, planOnly.stderr);
    strictEqual((await runOpen(dir, String(summaryOf(planOnly).run_id))).max_agents, 1);
    // The design's own example: BERNSTEIN_CONFIG_OVERRIDE='{max_agents: 8}'.
    const inline = await bern(dir, ["run", "plan.yaml", "--json"], {
      BERNSTEIN_CONFIG_OVERRIDE: "{max_agents: 8}",
    });
    strictEqual(inline.code, 0, inline.stderr);
    strictEqual((await runOpen(dir, String(summaryOf(inline).run_id))).max_agents, 8);
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    const project = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(project.code, 0, project.stderr);
    strictEqual((await runOpen(dir, String(summaryOf(project).run_id))).max_agents, 2);
  });
});

/** A stand-in for an agent CLI that is not installed here (a dry run only looks it up). */
async function stubCli(dir: string, name: string): Promise<string> {
  const bin = join(dir, "..", `${dir.split("/").pop()}-bin`);
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(join(bin, name), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
}

Deno.test("the design's minimal example runs: goal seeds a manager task on internal_llm_provider", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ONE_STEP);
    await Deno.copyFile(
      join(REPO_ROOT, "fixtures/config/design_examples/minimal.yaml"),
      join(dir, "bernstein.yaml"),
    );
    await git(dir, "add", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "design example");
    const dry = await bern(dir, ["run", "--dry-run", "--json"], {
      PATH: await stubCli(dir, "gemini"),
    });
    strictEqual(dry.code, 0, dry.stderr);
    ok(!dry.stderr.includes("not_implemented"), dry.stderr);
    const doc = JSON.parse(dry.stdout);
    strictEqual(doc.source.kind, "goal");
    strictEqual(doc.source.goal, "Implement API auth and integration tests");
    deepStrictEqual(
      doc.tasks.map((t: { role: string; adapter: string }) => [t.role, t.adapter]),
      [["manager", "gemini"]],
    );
  });
});

Deno.test("a goal from bernstein.yaml runs its manager on internal_llm_provider; -g and plans come first", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ONE_STEP);
    const goal = [
      "Say hello in a file.",
      '@agent run bernstein task create --title "Write hello" --role backend --description "@agent write hello.txt hi"',
      "@agent summary planned one task",
    ].map((l) => `  ${l}\n`).join("");
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      `goal: |\n${goal}internal_llm_provider: scripted\ncli: claude\n` +
        "role_model_policy:\n  backend: {cli: scripted}\n",
    );
    await git(dir, "add", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "goal");
    const run = await bern(dir, ["run", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    strictEqual(await Deno.readTextFile(join(dir, "hello.txt")), "hi\n");
    const tasks = JSON.parse((await bern(dir, ["task", "list", "--json"])).stdout).tasks;
    strictEqual(tasks.length, 2);
    // A plan given on the command line is run instead of the configured goal.
    const plan = await bern(dir, ["run", "plan.yaml", "--dry-run", "--json"]);
    strictEqual(JSON.parse(plan.stdout).source.kind, "plan");
  });
});

Deno.test("an unknown adapter name in the configuration fails validate and a dry run at its line", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, ONE_STEP);
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      "internal_llm_provider: gemni\nrole_model_policy:\n  qa: {endpoint: nowhere}\n",
    );
    const validate = await bern(dir, ["config", "validate"]);
    strictEqual(validate.code, 1);
    ok(
      validate.stderr.includes(
        "error[config.unknown_adapter]: bernstein.yaml:1:24: internal_llm_provider: unknown adapter 'gemni'",
      ),
      validate.stderr,
    );
    ok(validate.stderr.includes("error[config.unknown_endpoint]: bernstein.yaml:3:18"));
    const dry = await bern(dir, ["run", "plan.yaml", "--dry-run"]);
    strictEqual(dry.code, 2);
    ok(
      dry.stderr.startsWith("error[config.unknown_adapter]: bernstein.yaml:1:24: "),
      dry.stderr,
    );
    ok(dry.stderr.includes("(and 1 more; run 'bernstein config validate')"), dry.stderr);
  });
});

Deno.test("hot reload: an edit applies on the next tick, audited with both hashes; a broken edit is refused once", async () => {
  await withTempDir(async (dir) => {
    // In a folder the sandbox shows the agent (read-only), outside its worktree.
    await Deno.mkdir(join(dir, ".go"));
    const go = join(dir, ".go", "go");
    await prepareRepo(
      dir,
      scriptedPlan(step("Wait", [`@agent run sh -c "while [ ! -e '${go}' ]; do sleep 0.1; done"`])),
      { sandbox: { read_only: [join(dir, ".go")] } },
    );
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "max_agents: 2\n");
    await git(dir, "add", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "config");
    const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
    // Empty until the run has created its audit key and log.
    const audit = async (type: string): Promise<Record<string, unknown>[]> => {
      const shown = await bern(dir, ["audit", "show", "--type", type, "--json"]);
      if (shown.code !== 0) return [];
      return JSON.parse(shown.stdout).records
        .map((r: { record: { details: Record<string, unknown> } }) => r.record.details);
    };
    const until = async (what: string, test: () => Promise<boolean>) => {
      const deadline = Date.now() + 60_000;
      while (!(await test())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until("the agent", async () => (await audit("agent.spawned")).length > 0);
    // bernstein.yaml is tracked: the overlay is where a running project is changed locally.
    await Deno.writeTextFile(
      join(dir, ".git", "bernstein-overlay.yaml"),
      "max_agents: 3\ntuning:\n  agent:\n    kill_grace_s: 4\nlineage:\n  strict: true\n",
    );
    await until("the reload", async () => (await audit("config.reloaded")).length > 0);
    const [reloaded] = await audit("config.reloaded");
    ok(String(reloaded.old_hash).startsWith("sha256:"));
    ok(reloaded.old_hash !== reloaded.new_hash);
    deepStrictEqual(reloaded.applied, ["max_agents", "tuning.agent.kill_grace_s"]);
    deepStrictEqual(reloaded.pending, ["lineage.strict"]);
    await Deno.writeTextFile(join(dir, ".git", "bernstein-overlay.yaml"), "max_agents: [\n");
    await until("the refusal", async () => (await audit("config.reload_refused")).length > 0);
    // Mended: the next change applies again (and the broken file was reported only once).
    await Deno.writeTextFile(join(dir, ".git", "bernstein-overlay.yaml"), "max_agents: 4\n");
    await until("the second reload", async () => (await audit("config.reloaded")).length > 1);
    await Deno.writeTextFile(go, "");
    const out = await child.output();
    strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
    strictEqual((await audit("config.reload_refused")).length, 1);
    const lines = new TextDecoder().decode(out.stdout).split("\n");
    strictEqual(lines.filter((l) => l.includes("configuration edit refused")).length, 1);
  });
});

Deno.test("agents list shows the merged catalog roles; a run takes a role's adapter from its catalog", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("Check it", ["@agent write qa.txt ok"], "        role: reviewer\n")),
    );
    await Deno.mkdir(join(dir, "agent-catalog", ".claude", "agents"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "agent-catalog", ".claude", "agents", "reviewer.md"),
      "---\nname: Reviewer\ndescription: Reviews.\ncli: scripted\n---\nYou review carefully.\n",
    );
    await Deno.writeTextFile(
      join(dir, "bernstein.yaml"),
      "cli: claude\ncatalogs:\n  - name: local-specialists\n    type: plugin\n    path: ./agent-catalog\n    priority: 60\n",
    );
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "catalog");
    const list = await bern(dir, ["agents", "list", "--json"]);
    strictEqual(list.code, 0, list.stderr);
    deepStrictEqual(JSON.parse(list.stdout).agents, [{
      role: "reviewer",
      name: "Reviewer",
      catalog: "local-specialists",
      priority: 60,
      cli: "scripted",
      model: null,
      path: "agent-catalog/.claude/agents/reviewer.md",
    }]);
    const human = await bern(dir, ["agents", "list"]);
    ok(human.stdout.includes("reviewer  Reviewer  local-specialists  60"), human.stdout);
    // The role's catalog adapter wins over the configured default (claude is not installed).
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    strictEqual(await Deno.readTextFile(join(dir, "qa.txt")), "ok\n");
  });
});

Deno.test("cells (list form): a cell's max_agents holds its roles to that many agents at once", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      `cli: scripted
stages:
  - name: s
    steps:
${step("One", ["@agent sleep 300", "@agent write one.txt 1"], "        role: backend\n")}
${step("Two", ["@agent sleep 300", "@agent write two.txt 2"], "        role: backend\n")}
${step("Three", ["@agent write three.txt 3"], "        role: docs\n")}
`,
      { max_agents: 4, cells: [{ name: "api", roles: ["backend"], max_agents: 1 }] },
    );
    const validate = await bern(dir, ["config", "validate"]);
    ok(!validate.stderr.includes("cells"), validate.stderr);
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr + run.stdout);
    // In chain order: a backend agent starts only after the other one exited.
    const audit = join(dir, ".sdd", "audit");
    const events: { event_type: string; details: { task_id?: string } }[] = [];
    for (const name of (await Array.fromAsync(Deno.readDir(audit))).map((e) => e.name).sort()) {
      if (!name.endsWith(".jsonl")) continue;
      for (const line of (await Deno.readTextFile(join(audit, name))).split("\n")) {
        if (line.startsWith("{")) events.push(JSON.parse(line));
      }
    }
    const backend = events.filter((e) =>
      (e.event_type === "agent.spawned" || e.event_type === "agent.exited") &&
      /^1\.[12]-/.test(e.details.task_id ?? "")
    ).map((e) => e.event_type);
    deepStrictEqual(backend, ["agent.spawned", "agent.exited", "agent.spawned", "agent.exited"]);
  });
});
