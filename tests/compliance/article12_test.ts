// The article12 block: the log figures the verifier recomputes, 12(3) applicability and the
// retention facts of Art. 19(1) and 26(6).
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { JsonObject } from "../../src/canonical/mod.ts";
import { type Article12Input, AuditLinker, buildArticle12 } from "../../src/compliance/mod.ts";
import {
  article12LogFigures,
  article12Mismatches,
  LogFactsCollector,
} from "../../src/pack_format/mod.ts";
import { sampleLog } from "../../scripts/sample_pack.ts";

const DAY = 86_400_000_000_000n;

function input(overrides: Partial<Article12Input> = {}): Article12Input {
  const collector = new LogFactsCollector();
  for (const e of sampleLog({ seed: 2, before: 0 }).log) collector.add(e.entry);
  return {
    facts: collector.facts(),
    riskPaths: ["src/**"],
    riskEntryCount: 3,
    riskArtefacts: ["src/a.ts"],
    unresolvedForkCount: 0,
    audit: new AuditLinker(new Set(["task:t-1"])).result({ authenticated: 0, rejected: 0 }),
    remoteBiometricIdentification: false,
    retentionDays: 183,
    periodDays: 90,
    retainedSinceNs: 0n,
    periodEndNs: 200n * DAY - 1n,
    unreadableLogLines: 0,
    ...overrides,
  };
}

Deno.test("the block states the log figures that the verifier recomputes", () => {
  const i = input();
  const block = buildArticle12(i);
  deepStrictEqual(article12Mismatches(block, article12LogFigures(i.facts)), []);
  const p = block["12(2)(c)"] as JsonObject;
  strictEqual(p.reviewer_identities !== undefined, true);
  deepStrictEqual((block["12(2)(a)"] as JsonObject).merge_count, 1);
  deepStrictEqual((block["12(2)(a)"] as JsonObject).fork_count, 1);
  deepStrictEqual(p.reviewer_identities, ["bernstein-steward"]);
});

Deno.test("12(3) is not applicable unless the system is remote biometric identification", () => {
  strictEqual((buildArticle12(input())["12(3)"] as JsonObject).applicable, false);
  const on = buildArticle12(input({ remoteBiometricIdentification: true }))["12(3)"] as JsonObject;
  strictEqual(on.applicable, true);
  strictEqual(on.recorded, false);
});

Deno.test("retention facts say whether the configuration, the period and the log cover six months", () => {
  const r = (o: Partial<Article12Input>) => buildArticle12(input(o)).retention as JsonObject;
  const short = r({ retentionDays: 30, periodDays: 31, retainedSinceNs: 150n * DAY });
  deepStrictEqual(
    [short.configured_meets_minimum, short.period_covers_minimum, short.retained_log_days],
    [false, false, 50],
  );
  strictEqual(short.retained_log_covers_minimum, false);
  const long = r({ retentionDays: 365, periodDays: 183, retainedSinceNs: 0n });
  deepStrictEqual(
    [long.configured_meets_minimum, long.period_covers_minimum, long.retained_log_covers_minimum],
    [true, true, true],
  );
  strictEqual(r({ retainedSinceNs: null }).retained_log_days, 0);
});

Deno.test("audit links: by details.tool_call_id, or by task resource for task:<id> tool calls", () => {
  const linker = new AuditLinker(new Set(["task:t-1", "tc-9", "task:t-2"]));
  linker.add({ resource_type: "task", resource_id: "t-1", details: {} });
  linker.add({ resource_type: "task", resource_id: "t-1", details: { tool_call_id: "tc-9" } });
  linker.add({ resource_type: "run", resource_id: "t-2", details: {} });
  linker.add({ resource_type: "task", resource_id: "t-3", details: { tool_call_id: 5 } });
  deepStrictEqual(linker.result({ authenticated: 4, rejected: 1 }), {
    checked: true,
    tool_call_ids: 3,
    linked_tool_call_ids: 2,
    linked_audit_events: 2,
    audit_records_authenticated: 4,
    audit_records_rejected: 1,
  });
});
