// The condition language of conditional dependencies: parsed, type-checked, evaluated by walking
// the tree; nothing else is reachable (no names beyond status/result/output, no calls, no eval).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type ConditionContext, evaluateCondition, parseCondition } from "../../src/plan/mod.ts";

const failed: ConditionContext = {
  status: "failed",
  result: "gate-failed: gate tests: exit 1",
  output: "3 passed, 2 FAILED",
};
const done: ConditionContext = { status: "done", result: "completed", output: "" };

function holds(text: string, ctx: ConditionContext): boolean {
  const c = parseCondition(text);
  if (!c.ok) throw new Error(`${text}: ${c.problem} at ${c.column}`);
  return evaluateCondition(c.condition, ctx);
}

Deno.test("conditions: comparisons, membership, substrings, and/or/not with precedence", () => {
  const cases: [string, boolean, boolean][] = [
    ["status == 'failed'", true, false],
    ['status != "failed"', false, true],
    ["status in ['failed', 'cancelled']", true, false],
    ["status not in ['failed', 'cancelled']", false, true],
    ["output contains 'FAILED'", true, false],
    ["'FAIL' in output", true, false],
    ["status == 'failed' and output contains 'FAILED'", true, false],
    ["status == 'done' or result contains 'gate'", true, true],
    ["not status == 'failed'", false, true],
    ["not (status == 'failed' or status == 'done')", false, false],
    // and binds tighter than or
    ["status == 'done' or status == 'failed' and output contains 'nope'", false, true],
    ["(status == 'done' or status == 'failed') and output contains 'nope'", false, false],
    ["true", true, true],
    ["false or status == 'done'", false, true],
    ["result == 'it\\'s'", false, false],
    ["status in []", false, false],
  ];
  for (const [text, onFailed, onDone] of cases) {
    strictEqual(holds(text, failed), onFailed, `${text} on failed`);
    strictEqual(holds(text, done), onDone, `${text} on done`);
  }
});

Deno.test("conditions: anything outside the language is refused with a column", () => {
  const bad: [string, RegExp, number][] = [
    ["status = 'failed'", /unexpected '='/, 8],
    ["exit_code == '1'", /unknown name 'exit_code'/, 1],
    ["__import__('os')", /unknown name '__import__'/, 1],
    ["status == 'failed", /unterminated string/, 11],
    ["status", /expected ==, !=, in, not in or contains/, 7],
    ["status == 'a' and", /expected status, result, output/, 18],
    ["(status == 'a'", /expected '\)'/, 15],
    ["['a'] in status", /a list cannot be the left side/, 1],
    ["status == ['a']", /a list goes after 'in'/, 1],
    ["status in [status]", /a list holds strings only/, 12],
    ["status == 'a' status", /expected 'and', 'or' or the end/, 15],
    ["status == 1", /unexpected '1'/, 11],
    ["status == '\\x'", /unknown escape/, 12],
    ["", /expected status, result, output/, 1],
  ];
  for (const [text, want, column] of bad) {
    const c = parseCondition(text);
    ok(!c.ok, `${text} must be refused`);
    if (!c.ok) {
      ok(want.test(c.problem), `${text}: ${c.problem}`);
      strictEqual(c.column, column, `${text}: column of ${c.problem}`);
    }
  }
  const long = parseCondition(`status == '${"x".repeat(1000)}'`);
  deepStrictEqual(long.ok, false);
  const deep = parseCondition(`${"not ".repeat(40)}status == 'a'`);
  ok(!deep.ok && /nested more than 32 levels/.test(deep.problem));
  const parens = parseCondition(`${"(".repeat(40)}status == 'a'${")".repeat(40)}`);
  ok(!parens.ok && /nested more than 32 levels/.test(parens.problem));
});
