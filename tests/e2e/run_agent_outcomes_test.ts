// What `bernstein run` records about each agent attempt, with the deterministic scripted agent
// (so it holds where no real CLI is installed; tests/e2e/real_agents/ does the same with
// the real ones): the turns and tokens it reported in the ledger and the summary, failures named
// `rate-limited` (retried after the cooldown) and `max-turns`, and `adapters.<name>` settings
// reaching the spawn.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runBernstein } from "../_helpers/cli.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";
import { jsonLines } from "./_real_run.ts";

interface Outcome {
  code: number;
  stderr: string;
  events: Record<string, unknown>[];
  summary: Record<string, unknown>;
  ledger: Record<string, unknown>[];
  root: string;
}

async function runPlan(
  dir: string,
  steps: { title: string; description: string }[],
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Outcome> {
  const root = join(dir, "repo");
  await Deno.mkdir(root);
  await makeRepo(root);
  const plan = [
    "name: outcomes",
    "cli: scripted",
    "stages:",
    "  - name: one",
    "    steps:",
    ...steps.flatMap((s) => [
      `      - title: ${JSON.stringify(s.title)}`,
      "        scope: small",
      "        description: |",
      ...s.description.split("\n").map((l) => `          ${l}`),
    ]),
  ].join("\n") + "\n";
  await Deno.writeTextFile(join(root, "plan.yaml"), plan);
  await git(root, "add", "plan.yaml");
  await git(root, "commit", "-q", "-m", "plan");
  const run = await runBernstein(["run", "plan.yaml", "--json"], {
    cwd: root,
    env: {
      BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"),
      DENO_NO_UPDATE_CHECK: "1",
      BERNSTEIN_CONFIG_OVERRIDE: JSON.stringify({
        ...config,
        tuning: {
          orchestrator: { tick_interval_s: 0.1 },
          ...(config.tuning as Record<string, unknown> ?? {}),
        },
      }),
      ...env,
    },
  });
  const events = jsonLines(run.stdout);
  const summary = events.find((e) => e.type === "run.summary")?.summary as Record<string, unknown>;
  assert.ok(summary !== undefined, run.stderr + run.stdout);
  const ledger = jsonLines(
    await Deno.readTextFile(
      join(root, ".sdd", "runtime", "ledger", String(summary.run_id), "000000.jsonl"),
    ),
  );
  return { code: run.code, stderr: run.stderr, events, summary, ledger, root };
}

function payloads(o: Outcome, kind: string): Record<string, unknown>[] {
  return o.ledger.filter((r) => r.kind === kind).map((r) => r.payload as Record<string, unknown>);
}

Deno.test("the ledger and the summary carry the turns and tokens each agent reported", async () => {
  await withTempDir(async (dir) => {
    const o = await runPlan(dir, [
      { title: "One", description: "@agent write one.txt 1" },
      { title: "Two", description: "@agent write two.txt 2\n@agent write three.txt 3" },
    ], { tuning: { tasks: { default_max_retries: 0 } } });
    assert.equal(o.code, 0, o.stderr);
    const done = payloads(o, "task.completed");
    assert.deepEqual(done.map((p) => p.turns).sort(), [1, 2]);
    for (const p of done) {
      // The scripted agent reports its prompt's length as input tokens and no output.
      assert.ok(Number(p.tokens_in) > 100);
      assert.equal(p.tokens_out, 0);
    }
    const rows = (o.summary.cost as { by_adapter_model: Record<string, unknown>[] })
      .by_adapter_model;
    assert.equal(rows.length, 1);
    assert.equal(rows[0].turns, 3);
    assert.equal(rows[0].tokens, done.reduce((a, p) => a + Number(p.tokens_in), 0));
  });
});

Deno.test("a rate-limited attempt is named so and retried after the cooldown, not the backoff", async () => {
  await withTempDir(async (dir) => {
    const o = await runPlan(dir, [{
      title: "Limited",
      description: "@agent fail API Error: 429 rate limit reached for requests",
    }, {
      title: "Broken",
      description: "@agent fail the build is broken",
    }], {
      tuning: {
        tasks: { default_max_retries: 1 },
        spawn: { spawn_backoff_base_s: 0.1, spawn_backoff_max_s: 0.1, rate_limit_cooldown_s: 0.5 },
      },
    });
    assert.equal(o.summary.health, "UNHEALTHY");
    const failed = o.ledger.filter((r) => r.kind === "task.failed");
    const reasons = (id: string) =>
      failed.filter((r) => r.task_id === id).map((r) => (r.payload as { reason: string }).reason);
    assert.deepEqual(reasons("1.1-limited"), ["rate-limited", "rate-limited"]);
    assert.deepEqual(reasons("1.2-broken"), ["agent-failed", "agent-failed"]);
    const retries = o.events.filter((e) => e.type === "task.retry");
    assert.deepEqual(
      retries.map((e) => [e.task_id, e.delay_s, e.cooldown ?? null]).sort(),
      [["1.1-limited", 0.5, "rate-limit"], ["1.2-broken", 0.1, null]],
    );
  });
});

Deno.test("an agent stopped by its turn limit fails as max-turns", async () => {
  await withTempDir(async (dir) => {
    const o = await runPlan(dir, [{
      title: "Long",
      description: "@agent no-report\n@agent write a.txt 1\n@agent write b.txt 2",
    }], { tuning: { tasks: { default_max_retries: 0 }, agent: { max_turns: 1 } } });
    assert.deepEqual(payloads(o, "task.failed").map((p) => p.reason), ["max-turns"]);
    assert.equal(payloads(o, "task.failed")[0].turns, 1);
  });
});

Deno.test("adapters.<name>.env passes the named variables to the agent, nothing else", async () => {
  await withTempDir(async (dir) => {
    const record = join(dir, "prompt.txt");
    const o = await runPlan(
      dir,
      [{ title: "Env", description: "@agent write e.txt x" }],
      // Without the sandbox: it points every proxy variable at the agent's egress proxy.
      { adapters: { scripted: { env: ["HTTPS_PROXY", "NO_PROXY"] } }, isolation: "none" },
      {
        HTTPS_PROXY: "http://127.0.0.1:9",
        NO_PROXY: "127.0.0.1",
        HTTP_PROXY: "http://127.0.0.1:9",
        BERNSTEIN_SCRIPTED_RECORD: record,
      },
    );
    assert.equal(o.code, 0, o.stderr);
    const meta = JSON.parse(await Deno.readTextFile(`${record}.meta.json`));
    const names: string[] = meta.env;
    assert.ok(names.includes("HTTPS_PROXY") && names.includes("NO_PROXY"), names.join(" "));
    assert.ok(!names.includes("HTTP_PROXY"), "a variable not named stays out");
  });
});
