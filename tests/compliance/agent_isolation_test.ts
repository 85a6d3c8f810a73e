import { deepStrictEqual, ok } from "node:assert/strict";
import {
  agentIsolationBlock,
  AgentIsolationCollector,
  buildArticle12,
  renderReadme,
} from "../../src/compliance/mod.ts";
import type { JsonObject } from "../../src/canonical/mod.ts";
import { LogFactsCollector } from "../../src/pack_format/mod.ts";

const spawned = (session: string, adapter: unknown, isolation: unknown) => ({
  event_type: "agent.spawned",
  resource_id: session,
  details: { adapter, isolation } as JsonObject,
});

Deno.test("agent isolation: each identity from its last authenticated spawn; unknown ones not_recorded; egress left in the event", () => {
  const c = new AgentIsolationCollector();
  c.add(spawned("t1-a1-aa", "claude", { isolation: "none" }));
  c.add(spawned("t1-a1-aa", "claude", {
    isolation: "sandbox",
    backend: "bwrap",
    egress: ["127.0.0.1:4000"],
    read_only: [],
  }));
  c.add(spawned("t2-a1-bb", "codex", { isolation: "remote", worker: "w1" }));
  c.add(spawned("t3-a1-cc", "codex", "garbage"));
  c.add(spawned("t4-a1-dd", 7, { isolation: "none" })); // no adapter: no identity
  c.add({ event_type: "task.transition", resource_id: "x", details: {} });
  const block = agentIsolationBlock(
    ["claude:t1-a1-aa", "codex:t2-a1-bb", "codex:t3-a1-cc", "rogue-bot"],
    c.result(),
  );
  deepStrictEqual(block, {
    checked: true,
    counts: { not_recorded: 2, remote: 1, sandbox: 1 },
    agents: [
      { agent_id: "claude:t1-a1-aa", isolation: "sandbox", backend: "bwrap" },
      { agent_id: "codex:t2-a1-bb", isolation: "remote" },
      { agent_id: "codex:t3-a1-cc", isolation: "not_recorded" },
      { agent_id: "rogue-bot", isolation: "not_recorded" },
    ],
  });
  deepStrictEqual(
    agentIsolationBlock(["a"], {
      checked: false,
      reason: "audit key unavailable",
      byAgent: new Map(),
    }),
    { checked: false, reason: "audit key unavailable" },
  );
});

Deno.test("the pack's 12(2)(c) states the isolation per agent and the README counts it", () => {
  const facts = new LogFactsCollector().facts();
  const c = new AgentIsolationCollector();
  const article12 = buildArticle12({
    facts: {
      ...facts,
      agents: [{ agent_id: "claude:s1", kids: ["k"], entry_count: 1, merge_count: 0 }],
    },
    riskPaths: [],
    riskEntryCount: 0,
    riskArtefacts: [],
    unresolvedForkCount: 0,
    audit: {
      checked: true,
      tool_call_ids: 0,
      linked_tool_call_ids: 0,
      linked_audit_events: 0,
      audit_records_authenticated: 0,
      audit_records_rejected: 0,
    },
    agentIsolation: (c.add(spawned("s1", "claude", { isolation: "none" })), c.result()),
    remoteBiometricIdentification: false,
    retentionDays: 183,
    periodDays: 1,
    retainedSinceNs: null,
    periodEndNs: 0n,
    unreadableLogLines: 0,
  });
  const c2 = article12["12(2)(c)"] as JsonObject;
  deepStrictEqual(c2.agent_isolation, {
    checked: true,
    counts: { none: 1 },
    agents: [{ agent_id: "claude:s1", isolation: "none" }],
  });
  const readme = renderReadme({
    org: "Org",
    since: "2026-01-01",
    until: "2026-01-01",
    builder: "test",
    builtAt: null,
    facts,
    article12,
    operatorKid: "kid",
    operatorFingerprint: "fp",
    signatureCount: 0,
    cardCount: 0,
  });
  ok(readme.includes("isolation: none 1 (per agent in the manifest)."), readme);
});
