// Evidence-gated escalation and failover decisions: only evidence moves a task up its ladder;
// provider and infrastructure failures never do. Routing picks the first healthy element not
// ruled out, and its hash is a function of the inputs only.
import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert/strict";
import {
  type ChainElement,
  chainFor,
  classifyFailure,
  decideRoute,
  nextRung,
  type ProbeResult,
  statusOfProviderError,
} from "../../src/providers/mod.ts";

Deno.test("failures are classified: evidence, provider, infrastructure", () => {
  const cases: [string, string, string][] = [
    ["gate-failed", "gate tests: 2 failed", "evidence"],
    ["signals-unmet", "completion signals not met: path_exists out.txt", "evidence"],
    ["max-turns", "reached the limit of 6 turn(s)", "evidence"],
    ["agent-failed", "I could not make the tests pass", "evidence"],
    ["rate-limited", "429", "provider"],
    ["agent-failed", "API Error: 503 Service Unavailable", "provider"],
    ["agent-failed", "connect ECONNREFUSED 127.0.0.1:11434", "provider"],
    ["agent-failed", "401 Unauthorized: invalid api key", "provider"],
    ["agent-failed", "Request timed out.", "provider"],
    ["agent-failed", "ENOSPC: no space left on device", "infra"],
    ["deadline", "deadline: killed after 900s", "infra"],
    ["infra-error", "spawn failed: not found", "infra"],
    ["merge-conflict", "conflict in a.txt", "infra"],
    ["provider-unavailable", "no healthy provider for role backend", "infra"],
    // A gate failure whose output mentions 503 is still a gate failure.
    ["gate-failed", "gate tests: expected 503 got 200", "evidence"],
  ];
  for (const [code, reason, want] of cases) {
    strictEqual(classifyFailure(code, reason), want, `${code}: ${reason}`);
  }
});

Deno.test("the ladder moves up one rung per piece of evidence, never on other failures, never past its top", () => {
  deepStrictEqual(nextRung(0, 2, { code: "gate-failed", reason: "x" }), {
    step: 1,
    escalated: true,
    why: "evidence: gate-failed",
  });
  strictEqual(nextRung(1, 2, { code: "max-turns", reason: "x" }).step, 2);
  const top = nextRung(2, 2, { code: "agent-failed", reason: "gave up" });
  deepStrictEqual([top.step, top.escalated], [2, false]);
  for (
    const failure of [
      { code: "rate-limited", reason: "429" },
      { code: "deadline", reason: "killed" },
      { code: "agent-failed", reason: "fetch failed: ECONNREFUSED" },
      { code: "infra-error", reason: "spawn failed" },
    ]
  ) {
    const d = nextRung(1, 2, failure);
    deepStrictEqual([d.step, d.escalated], [1, false], failure.code);
  }
});

const CHAIN: ChainElement[] = [
  { adapter: "claude", model: "opus", conformance: "expert" },
  { adapter: "codex", model: "gpt-5.2", conformance: "advanced", endpoint: "backup" },
  { adapter: "qwen", conformance: "advanced" },
];

function probe(
  healthy: boolean,
  status: ProbeResult["status"] = healthy ? "healthy" : "unreachable",
): ProbeResult {
  return { status, healthy, detail: status, kind: "http", ms: 1 };
}

Deno.test("routing takes the first healthy element not ruled out, or refuses", () => {
  const all = [probe(true), probe(true), probe(true)];
  const primary = decideRoute("backend", "default", CHAIN, all, []);
  deepStrictEqual([primary.chosen, primary.reason], [0, "primary_healthy"]);
  const down = decideRoute("backend", "default", CHAIN, [
    probe(false),
    probe(false, "rate_limited"),
    probe(true),
  ], []);
  deepStrictEqual([down.chosen, down.reason], [2, "failover"]);
  const ruledOut = decideRoute("backend", "default", CHAIN, all, [0, 1]);
  deepStrictEqual([ruledOut.chosen, ruledOut.reason, ruledOut.excluded], [2, "failover", [0, 1]]);
  const none = decideRoute(
    "backend",
    "default",
    CHAIN,
    [probe(false), probe(false), probe(false)],
    [],
  );
  deepStrictEqual([none.chosen, none.reason], [null, "no_healthy_provider"]);
});

Deno.test("the decision hash depends on the decision's inputs only (replayable), not on timings", () => {
  const a = decideRoute("backend", "default", CHAIN, [probe(false), probe(true), probe(true)], []);
  const b = decideRoute("backend", "default", CHAIN, [
    { ...probe(false), ms: 999, detail: "other words" },
    probe(true),
    probe(true),
  ], []);
  strictEqual(a.hash, b.hash);
  strictEqual(/^sha256:[0-9a-f]{64}$/.test(a.hash), true);
  notStrictEqual(
    a.hash,
    decideRoute("backend", "default", CHAIN, [probe(true), probe(true), probe(true)], []).hash,
  );
  // Excluded positions are a set: their order does not change the hash.
  strictEqual(
    decideRoute("r", "default", CHAIN, [probe(true), probe(true), probe(true)], [1, 0]).hash,
    decideRoute("r", "default", CHAIN, [probe(true), probe(true), probe(true)], [0, 1]).hash,
  );
});

Deno.test("a role uses its own chain, else default, else none; provider errors map to probe statuses", () => {
  const roles = { backend: { chain: CHAIN.slice(0, 1) }, default: { chain: CHAIN.slice(1) } };
  strictEqual(chainFor(roles, "backend")?.name, "backend");
  strictEqual(chainFor(roles, "docs")?.name, "default");
  strictEqual(chainFor({ backend: roles.backend }, "docs"), undefined);
  strictEqual(chainFor(undefined, "docs"), undefined);
  strictEqual(statusOfProviderError("429 Too Many Requests"), "rate_limited");
  strictEqual(statusOfProviderError("401 Unauthorized"), "auth");
  strictEqual(statusOfProviderError("API Error: 503 overloaded"), "server_error");
  strictEqual(statusOfProviderError("connect ECONNREFUSED"), "unreachable");
});
