// Real agent CLIs driven by real `bernstein run`s: for each pinned CLI that is installed, a
// two-step plan whose steps that CLI runs in parallel, each in its own worktree and HOME,
// against the project's deterministic model server (tests/e2e/model_servers). The files the
// real CLI wrote land in the merge, lineage entries are signed by that agent's identity, the
// lineage gate and the audit chain verify, and what the CLI's own output said (result, turns,
// tokens, cost) reaches the task, the run summary and the ledger. Then one plan with a step per
// installed CLI. No agent reaches any host but 127.0.0.1: every CLI gets the egress sentinel as
// its proxy, and the test fails on any request the sentinel or the model server did not expect.
// A CLI that is not installed makes its tests ignored with the reason in the name. One file per
// CLI (and one for the mixed plan) defines its tests from here, so they run in parallel.
import assert from "node:assert/strict";
import { join } from "node:path";
import { getAdapter, parseOutput } from "../../../src/adapters/mod.ts";
import { probeSandbox } from "../../../src/sandbox/mod.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { git } from "../../_helpers/temp.ts";
import {
  auditEvents,
  bernsteinIn,
  LEAKED_KEY,
  ledgerRows,
  MODEL_KEY,
  REAL_CLIS,
  type RealCli,
  type RealRun,
  runReal,
  runTag,
  sessionLog,
  skipReason,
  type StepSpec,
  taskRecords,
} from "../_real_run.ts";
import {
  CALL_USAGE,
  type EgressSentinel,
  type ModelServer,
  startEgressSentinel,
  startModelServer,
  TEXT_USAGE,
} from "../model_servers/mod.ts";

/** Runs `fn` with a fresh model server and sentinel, closing both afterwards. */
async function withServers<T>(
  fn: (server: ModelServer, sentinel: EgressSentinel, dir: string) => Promise<T>,
): Promise<T> {
  return await withTempDir(async (dir) => {
    const server = startModelServer();
    const sentinel = startEgressSentinel();
    try {
      return await fn(server, sentinel, dir);
    } finally {
      await sentinel.close();
      await server.close();
    }
  });
}

function step(cli: string, n: number, name: string, role: string): StepSpec {
  return {
    title: `Write ${name}`,
    cli,
    role,
    files: [`${name}.txt`],
    expect: [`${name}.txt`],
    description: [
      `Create ${name}.txt.`,
      `@model write ${name}.txt ${name} written by ${cli} in step ${n}`,
      `@model say wrote ${name}.txt`,
    ].join("\n"),
  };
}

/** The run went through and nothing tried to leave 127.0.0.1. */
function assertCleanRun(run: RealRun, server: ModelServer, sentinel: EgressSentinel): void {
  const context = `exit ${run.cli.code}\n${run.cli.stderr}\n${run.cli.stdout.slice(-3000)}`;
  assert.equal(run.cli.code, 0, context);
  assert.equal(run.summary?.health, "HEALTHY", context);
  assert.deepEqual(server.problems, [], "the model server saw only what the script expects");
  assert.deepEqual(sentinel.foreign, [], "no agent tried to reach another host");
  for (const r of server.requests) {
    assert.ok(!JSON.stringify(r).includes(LEAKED_KEY), "a provider key leaked to the model");
  }
}

/** Each turn request carried the endpoint's key (the profile's api_key_env). */
function assertEndpointKey(server: ModelServer): void {
  for (const r of server.turns()) {
    const sent = [r.headers["x-api-key"], r.headers["authorization"], r.headers["x-goog-api-key"]];
    assert.ok(
      sent.some((v) => v !== undefined && v.includes(MODEL_KEY)),
      `request #${r.seq} carried the endpoint key`,
    );
  }
}

interface SessionFacts {
  session: string;
  summary: string;
  turns: number | null;
  tokens: number | null;
  cost: number | null;
}

/** What the adapter's parser reads from a session's log (the real CLI's real output). */
async function parsedSession(run: RealRun, cli: string, session: string): Promise<SessionFacts> {
  const log = await sessionLog(run, session);
  const { result } = parseOutput(getAdapter(cli), log, { code: 0 });
  return {
    session,
    summary: result.summary,
    turns: result.turns,
    tokens: result.tokens === null ? null : result.tokens.input + result.tokens.output,
    cost: result.cost_usd,
  };
}

function sum(values: (number | null)[]): number | null {
  return values.every((v) => v === null) ? null : values.reduce((a: number, v) => a + (v ?? 0), 0);
}

async function assertTwoStepRun(
  cli: RealCli,
  run: RealRun,
  server: ModelServer,
  home: string,
): Promise<void> {
  const steps = [["1.1-write-alpha", "alpha", 1], ["1.2-write-beta", "beta", 2]] as const;
  // Both steps were spawned in the same scheduler tick: they ran in parallel.
  const runId = String(run.summary?.run_id);
  const decisions = JSON.parse(
    await Deno.readTextFile(join(run.root, ".sdd", "runs", runId, "decisions.json")),
  ) as { decisions: { kind: string; taskId: string }[] }[];
  assert.deepEqual(
    decisions[0].decisions.filter((d) => d.kind === "spawn").map((d) => d.taskId),
    steps.map((s) => s[0]),
  );
  const tasks = await taskRecords(run);
  const ledger = await ledgerRows(run);
  const facts: SessionFacts[] = [];
  for (const [taskId, name, n] of steps) {
    const session = `${taskId}-a1-${runTag(run)}`;
    const worktree = join(run.root, ".sdd", "worktrees", session);
    // The real CLI wrote the file in its worktree through its own tool; the merge brought it in.
    const content = `${name} written by ${cli.name} in step ${n}\n`;
    assert.equal(await git(run.root, "show", `HEAD:${name}.txt`), content);
    assert.equal(await Deno.readTextFile(join(run.root, `${name}.txt`)), content);
    const turns = server.turns(worktree);
    assert.deepEqual(
      turns.map((t) => t.answer.replace(/ via .*/, "")),
      [`write ${name}.txt`, `say wrote ${name}.txt`],
      `the ${cli.name} agent of ${taskId} announced its worktree as its working directory`,
    );
    // Lineage: one entry, signed by this agent's identity.
    const chain = await bernsteinIn(run, ["lineage", "chain", `${name}.txt`, "--json"]);
    assert.equal(chain.code, 0, chain.stderr);
    const entries = JSON.parse(chain.stdout).entries as Record<string, unknown>[];
    assert.equal(entries.length, 1);
    assert.equal(entries[0].agent_id, `${cli.name}:${session}`);
    const card = JSON.parse(
      await Deno.readTextFile(
        join(run.root, ".sdd", "agents", `${cli.name}_${session}`, "card.json"),
      ),
    );
    assert.equal(card.agent_id, `${cli.name}:${session}`);
    assert.equal(card.kid, entries[0].agent_card_kid);
    // The parser, fed the real CLI's real output: the task result and the ledger carry it.
    const parsed = await parsedSession(run, cli.name, session);
    facts.push(parsed);
    assert.equal(parsed.summary, `wrote ${name}.txt`);
    assert.equal(tasks.get(taskId)?.result_summary, parsed.summary);
    assert.equal(tasks.get(taskId)?.status, "closed");
    // Tokens the CLI reported are exactly what the model server answered for that session.
    const served = turns.reduce((a, t) => a + (t.usage ? t.usage.input + t.usage.output : 0), 0);
    assert.equal(
      served,
      CALL_USAGE.input + CALL_USAGE.output + TEXT_USAGE.input + TEXT_USAGE.output,
    );
    assert.equal(parsed.tokens, served, `${cli.name} reported the tokens the model server sent`);
    assert.equal(parsed.turns === null, !["claude", "opencode", "qwen"].includes(cli.name));
    assert.equal(parsed.cost !== null, cli.reportsCost, "cost only where the CLI reports it");
    const done = ledger.find((r) => r.kind === "task.completed" && r.task_id === taskId);
    assert.deepEqual(
      {
        merged: (done?.payload as Record<string, unknown>).merged,
        cost_usd: (done?.payload as Record<string, unknown>).cost_usd,
        turns: (done?.payload as Record<string, unknown>).turns,
        tokens: Number((done?.payload as Record<string, unknown>).tokens_in) +
          Number((done?.payload as Record<string, unknown>).tokens_out),
      },
      { merged: true, cost_usd: parsed.cost, turns: parsed.turns, tokens: parsed.tokens },
    );
    // The write went through bernstein's pre-tool hook in this CLI: decided, allowed, audited,
    // and counted in the task's ledger row (docs/POLICY.md).
    const decided = (await auditEvents(run)).filter((e) =>
      e.event_type === "policy.decision" &&
      (e.details as Record<string, unknown>).session === session
    ).map((e) => e.details as Record<string, unknown>);
    assert.ok(decided.length >= 1, `${cli.name}'s tool call reached the policy hook`);
    assert.ok(decided.every((d) => d.action === "allow" && d.adapter === cli.name));
    const counts = (done?.payload as Record<string, unknown>).policy as Record<string, number>;
    assert.equal(counts.decisions, decided.length);
    // Its own HOME under .sdd/runtime/homes: the CLI's state went there, never to ours.
    const ownHome = join(run.root, ".sdd", "runtime", "homes", session);
    assert.ok((await Array.fromAsync(Deno.readDir(ownHome))).some((e) => e.name !== "bin"));
  }
  assert.deepEqual(
    await Array.fromAsync(Deno.readDir(home)),
    [],
    "the operator's HOME stays clean",
  );
  // The run summary adds up what the parser read from both sessions.
  const rows = (run.summary?.cost as { by_adapter_model: Record<string, unknown>[] })
    .by_adapter_model;
  // The model is the endpoint profile's (issue 19: it used to show as "default").
  assert.deepEqual(rows, [{
    adapter: cli.name,
    model: "fake-model",
    runs: 2,
    cost_usd: sum(facts.map((f) => f.cost)),
    tokens: sum(facts.map((f) => f.tokens)),
    turns: sum(facts.map((f) => f.turns)),
  }]);
  if (cli.name === "claude") assert.ok((rows[0].cost_usd as number) > 0);
  // The whole record verifies.
  const gate = await bernsteinIn(run, ["lineage", "gate"]);
  assert.equal(gate.code, 0, gate.stdout + gate.stderr);
  const audit = await bernsteinIn(run, ["audit", "verify"]);
  assert.equal(audit.code, 0, audit.stdout + audit.stderr);
  // Each spawn's decisions are in the audit log (as root, claude's permission choice).
  const spawned = (await auditEvents(run)).filter((e) => e.event_type === "agent.spawned");
  assert.equal(spawned.length, 2);
  // The default isolation: every agent ran in the sandbox wherever it works here.
  const expected = (await probeSandbox()).available ? "sandbox" : "none";
  for (const e of spawned) {
    const isolation = (e.details as { isolation: Record<string, unknown> }).isolation;
    assert.equal(isolation.isolation, expected, JSON.stringify(isolation));
  }
  if (cli.name === "claude" && Deno.uid() === 0) {
    for (const e of spawned) {
      const notes = (e.details as { notes: string[] }).notes;
      assert.ok(notes.some((n) => n.includes("running as root: --permission-mode acceptEdits")));
    }
  }
}

/** Defines the two-step test of one CLI (ignored with the reason when it is not installed). */
export function defineTwoStepTest(cli: RealCli): void {
  Deno.test({
    name: `real ${cli.name} ${cli.pin.version}: a two-step plan runs in parallel, merges the ` +
      `files it wrote, lineage signed by the agent, gate and audit pass${skipReason(cli)}`,
    ignore: cli.exe === undefined,
    async fn() {
      await withServers(async (server, sentinel, dir) => {
        const run = await runReal(dir, {
          steps: [step(cli.name, 1, "alpha", "backend"), step(cli.name, 2, "beta", "docs")],
          server,
          sentinel,
        });
        console.log(`real ${cli.name} ${cli.pin.version}: two-step run took ${run.seconds}s`);
        assertCleanRun(run, server, sentinel);
        assertEndpointKey(server);
        await assertTwoStepRun(cli, run, server, join(dir, "home"));
        if (cli.name === "qwen") {
          // qwen ignores NO_PROXY: its requests went through the sentinel, so the proxy setting
          // (adapters.qwen.env) reached the agent and loopback forwarding works.
          assert.ok(sentinel.forwarded.length > 0);
        }
      });
    },
  });
}

const ROLES = ["backend", "frontend", "qa", "docs", "security"];

/** Defines the test of one plan with a step per installed CLI. */
export function defineMixedTest(): void {
  const installed = REAL_CLIS.filter((c) => c.exe !== undefined);
  Deno.test({
    name: `real: one plan with a step per installed CLI (${
      installed.map((c) => c.name).join(", ") || "none"
    }) runs them side by side and merges every file${
      installed.length < 2
        ? " [skipped: fewer than two pinned agent CLIs installed; run scripts/install_agent_clis.ts]"
        : ""
    }`,
    ignore: installed.length < 2,
    async fn() {
      await withServers(async (server, sentinel, dir) => {
        const steps = installed.map((c, i) => step(c.name, i + 1, `by-${c.name}`, ROLES[i]));
        const run = await runReal(dir, {
          steps,
          server,
          sentinel,
          tuning: { extra: { max_agents: steps.length } },
        });
        console.log(`real mixed (${installed.map((c) => c.name).join(", ")}): ${run.seconds}s`);
        assertCleanRun(run, server, sentinel);
        assertEndpointKey(server);
        const spawnTick = JSON.parse(
          await Deno.readTextFile(
            join(run.root, ".sdd", "runs", String(run.summary?.run_id), "decisions.json"),
          ),
        )[0].decisions.filter((d: { kind: string }) => d.kind === "spawn");
        assert.equal(spawnTick.length, steps.length, "every step started in the first tick");
        for (const [i, c] of installed.entries()) {
          const name = `by-${c.name}`;
          assert.equal(
            await git(run.root, "show", `HEAD:${name}.txt`),
            `${name} written by ${c.name} in step ${i + 1}\n`,
          );
          const chain = JSON.parse(
            (await bernsteinIn(run, ["lineage", "chain", `${name}.txt`, "--json"])).stdout,
          );
          assert.equal(
            chain.entries[0].agent_id,
            `${c.name}:1.${i + 1}-write-${name}-a1-${runTag(run)}`,
          );
        }
        const apis = new Set(server.turns().map((r) => r.api));
        assert.deepEqual(apis, new Set(installed.map((c) => c.api)));
        assert.equal((await bernsteinIn(run, ["lineage", "gate"])).code, 0);
        assert.equal((await bernsteinIn(run, ["audit", "verify"])).code, 0);
      });
    },
  });
}
