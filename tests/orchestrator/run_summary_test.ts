// The summary's attempts: one row per agent run, in the order they ended, with the provider and
// model that served it (an endpoint profile shows its own model and URL, never "default"), and
// the closing summary's lines for them (the first few, the rest counted).
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  attemptLines,
  buildSummary,
  emptyOutcome,
  SHOWN_ATTEMPTS,
  tallyOutcome,
} from "../../src/orchestrator/mod.ts";

function exited(
  taskId: string,
  session: string,
  ok: boolean,
  model: string | null,
  provider?: string,
) {
  return {
    kind: "agent.exited" as const,
    taskId,
    session,
    adapter: "claude",
    model,
    ...(provider !== undefined ? { provider } : {}),
    exit: {
      result: {
        ok,
        summary: "",
        turns: 2,
        tokens: { input: 10, output: 5 },
        cost_usd: ok ? 0.5 : null,
        error: ok ? null : "overloaded",
        subtype: null,
        session_id: null,
        exit_code: ok ? 0 : 1,
      },
      timedOut: false,
      signal: null,
    },
  };
}

Deno.test("the summary lists each attempt with its provider and model, in the order they ended", () => {
  const outcome = emptyOutcome();
  tallyOutcome(outcome, exited("t1", "t1-a1", false, "m1", "endpoint primary (http://h1/v1)"));
  tallyOutcome(outcome, exited("t1", "t1-a2", true, "m2", "endpoint backup (http://h2/v1)"));
  tallyOutcome(outcome, exited("t2", "t2-a1", true, null));
  const summary = buildSummary(
    { runId: "r", branch: "feature", sdd: "/p/.sdd" },
    outcome,
    [],
    { path: "s.json", sha256: "00", content: {} },
  );
  deepStrictEqual(
    summary.attempts.map((a) => [
      a.task_id,
      a.session,
      a.model,
      a.provider,
      a.ok,
      a.cost_usd,
    ]),
    [
      ["t1", "t1-a1", "m1", "endpoint primary (http://h1/v1)", false, null],
      ["t1", "t1-a2", "m2", "endpoint backup (http://h2/v1)", true, 0.5],
      ["t2", "t2-a1", "default", "claude (its own provider)", true, 0.5],
    ],
  );
  deepStrictEqual(attemptLines(outcome.costs), [
    "t1: claude/m1 on endpoint primary (http://h1/v1) — agent failed",
    "t1: claude/m2 on endpoint backup (http://h2/v1) — agent ok",
    "t2: claude/default on claude (its own provider) — agent ok",
  ]);
});

Deno.test("the closing summary shows the first attempts and counts the rest", () => {
  const outcome = emptyOutcome();
  for (let i = 0; i < SHOWN_ATTEMPTS + 5; i++) {
    tallyOutcome(outcome, exited(`t${i}`, `s${i}`, true, "m", "p"));
  }
  const lines = attemptLines(outcome.costs);
  strictEqual(lines.length, SHOWN_ATTEMPTS + 1);
  strictEqual(lines[SHOWN_ATTEMPTS], "… 5 more in summary.json");
});
