import assert from "node:assert/strict";
import {
  buildRunModel,
  type LiveAgent,
  renderDashboardSections,
  UNCHECKED,
} from "../../src/report/mod.ts";
import { at, created, ev, mergedAttempt } from "./_records.ts";

const NOW = Date.parse(at(9_999));

function modelOf(events: ReturnType<typeof ev>[], state: "running" | "finished") {
  return buildRunModel({
    header: {
      run_id: "r",
      branch: null,
      goal: null,
      source: null,
      host: null,
      started_at: at(0),
      max_agents: 2,
      state,
    },
    events,
    tasks: [],
    summary: null,
    logTails: {},
    verification: UNCHECKED,
  }, { nowMs: NOW });
}

Deno.test("dashboard sections: at most 12 log tails, the others counted", () => {
  const events = [ev(0, "run.started", "run", "r")];
  const tails: Record<string, string> = {};
  for (let i = 0; i < 15; i++) {
    events.push(created(1, `t${i}`, `T${i}`), ...mergedAttempt(10 + i * 10, `t${i}`, `s${i}`));
    tails[`s${i}`] = `output of ${i}\n`;
  }
  const s = renderDashboardSections({
    model: modelOf(events, "finished"),
    agents: [],
    logTails: tails,
  }, NOW);
  assert.equal(s["d-logs"].match(/<details/g)?.length, 12);
  assert.match(s["d-logs"], /3 older agent log\(s\) not shown/);
  assert.match(s["d-logs"], /output of 14/, "the most recent first");
  assert.doesNotMatch(s["d-logs"], /output of 0\b/);
});

Deno.test("dashboard sections: live agents count as at work and add what they cost so far", () => {
  const events = [
    ev(0, "run.started", "run", "r"),
    created(1, "a", "A"),
    created(2, "b", "B"),
    ...mergedAttempt(10, "a", "a-1", { cost: 0.5 }),
    ev(20, "scheduler.claim", "task", "b", { session: "b-1", attempt: 1, adapter: "claude" }),
    ev(30, "scheduler.claim", "task", "c", { session: "c-1", attempt: 1, adapter: "claude" }),
  ];
  const agent: LiveAgent = {
    session: "b-1",
    task_id: "b",
    adapter: "claude",
    model: null,
    state: "running",
    started_at: at(40),
    last_output_at: at(9_000),
    last_line: "still <going>",
    turns: null,
    tokens: null,
    cost_usd: 0.25,
  };
  const s = renderDashboardSections({
    model: modelOf(events, "running"),
    agents: [agent],
    logTails: {},
  }, NOW);
  assert.match(s["d-headline"], /agents running<\/dt><dd>1</);
  assert.match(s["d-headline"], /\$0\.7500/);
  assert.match(s["d-agents"], /still &lt;going&gt;/);
  assert.match(s["d-agents"], /data-since="[^"]+">999 ms<\/span> ago/);
  assert.match(s["d-agents"], /until then they show —/);
});
