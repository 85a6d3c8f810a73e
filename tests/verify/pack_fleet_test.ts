// The fleet events a pack carries (`fleet-events.jsonl`): an honest window passes through the
// builder and verifyPack; each broken rule is named with its line and chain position; the
// verifier's list of fleet event types is the fleet plane's.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { buildPack } from "../../src/compliance/mod.ts";
import { FLEET_EVENT_TYPES } from "../../src/fleet/mod.ts";
import {
  PACK_FLEET_EVENT_TYPES,
  PACK_FLEET_MEMBER,
  type PackFleetEvent,
  packFleetLine,
} from "../../src/pack_format/mod.ts";
import { checkPackFleetEvents, memoryBytes, verifyPack } from "../../src/verify/mod.ts";
import { sampleLog, samplePackContent } from "../../scripts/sample_pack.ts";

const H = (c: string) => `sha256:${c.repeat(64)}`;
const PERIOD = { since: "2026-03-01", until: "2026-03-31" };
let n = 0;

function ev(event_type: string, details: PackFleetEvent["details"], day = "2026-03-02") {
  n++;
  return {
    actor: "operator",
    details,
    event_type,
    hmac: n.toString(16).padStart(64, "0"),
    timestamp: `${day}T10:00:${String(n % 60).padStart(2, "0")}.000000000Z`,
    where: `${day}.jsonl:${n}`,
  };
}

/** `events[i]` with other content, at the same place in the chain. */
function swap(
  events: PackFleetEvent[],
  i: number,
  type: string,
  details: PackFleetEvent["details"],
) {
  events[i] = { ...events[i], event_type: type, details };
}

function member(events: PackFleetEvent[]): Uint8Array {
  const parts = events.map((e) => new TextDecoder().decode(packFleetLine(e)) + "\n");
  return new TextEncoder().encode(parts.join(""));
}

const honest = () => [
  ev("fleet.var_set", {
    name: "t",
    old_value_hash: H("1"),
    new_value_hash: H("2"),
    chain_position: 3,
  }),
  ev("fleet.var_read", { name: "t", value_hash: H("1"), chain_position: 2, task_id: "a" }),
  ev("fleet.var_read", { name: "t", value_hash: H("2"), chain_position: 3, task_id: "b" }),
  ev("fleet.var_set", {
    name: "t",
    old_value_hash: H("2"),
    new_value_hash: H("3"),
    chain_position: 4,
  }),
  ev("fleet.conn_create", { name: "gh", document_hash: H("a"), version: 1 }),
  ev("fleet.conn_resolve", { name: "gh", document_hash: H("a"), version: 1, task_id: "a" }),
  ev("fleet.conn_rotate", {
    name: "gh",
    old_document_hash: H("a"),
    new_document_hash: H("b"),
    version: 2,
  }),
  ev("fleet.conn_resolve", { name: "gh", document_hash: H("b"), version: 2, task_id: "b" }),
  ev("fleet.context_create", { name: "c", settings_hash: H("c") }),
  ev("fleet.context_activate", { name: "c", settings_hash: H("c") }),
];

Deno.test("the verifier's fleet event types are the fleet plane's", () => {
  deepStrictEqual([...PACK_FLEET_EVENT_TYPES].sort(), [...FLEET_EVENT_TYPES].sort());
});

Deno.test("an honest window (writes before it included) has no problems; an empty member neither", () => {
  deepStrictEqual(checkPackFleetEvents(member(honest()), PERIOD), []);
  deepStrictEqual(checkPackFleetEvents(new Uint8Array(), PERIOD), []);
});

Deno.test("each broken rule is named with its member line and chain position", () => {
  const events = honest();
  swap(events, 3, "fleet.var_set", {
    name: "t",
    old_value_hash: H("9"),
    new_value_hash: H("3"),
    chain_position: 6,
  });
  swap(events, 2, "fleet.var_read", { name: "t", value_hash: H("7"), chain_position: 3 });
  swap(events, 7, "fleet.conn_resolve", { name: "gh", document_hash: H("z"), version: 2 });
  swap(events, 9, "fleet.context_activate", { name: "c", settings_hash: H("d") });
  const problems = checkPackFleetEvents(member(events), PERIOD);
  strictEqual(problems.length, 5, problems.join("\n"));
  match(
    problems[0],
    /^fleet-events\.jsonl:3 \(2026-03-02\.jsonl:\d+\): variable 't' read of write 3 names/,
  );
  match(problems[1], /^fleet-events\.jsonl:4 .*write 6 follows write 3/);
  match(problems[2], /^fleet-events\.jsonl:4 .*old hash .* is not write 3's new hash/);
  match(problems[3], /^fleet-events\.jsonl:8 .*connection 'gh' use names document/);
  match(problems[4], /^fleet-events\.jsonl:10 .*context 'c' activation/);
});

Deno.test("form, period, order and duplicates are checked", () => {
  const a = ev("fleet.var_set", {
    name: "t",
    old_value_hash: "",
    new_value_hash: H("1"),
    chain_position: 0,
  });
  const late = ev(
    "fleet.var_read",
    { name: "t", value_hash: H("1"), chain_position: 0 },
    "2026-04-02",
  );
  const text = new TextDecoder().decode(member([a, late, a])) + '{"not":"an event"}\n' +
    JSON.stringify({ ...a, event_type: "task.created" }) + "\n";
  const problems = checkPackFleetEvents(new TextEncoder().encode(text), PERIOD);
  ok(problems.some((p) => /:2: .* is outside the period/.test(p)), problems.join("\n"));
  ok(problems.some((p) => /:3: out of chain order/.test(p)), problems.join("\n"));
  ok(problems.some((p) => /:3: record .* appears twice/.test(p)), problems.join("\n"));
  ok(problems.some((p) => /:4: not \{actor, details/.test(p)), problems.join("\n"));
  ok(problems.some((p) => /:5: 'task\.created' is not a fleet event/.test(p)), problems.join("\n"));
});

Deno.test("a pack carries the member bound by its manifest; verifyPack fails a broken one", async () => {
  const sample = sampleLog({ seed: 5 });
  const op = sample.operator;
  const good = buildPack({ ...samplePackContent(sample), fleetEvents: member(honest()) }, op);
  ok(good.members.has(PACK_FLEET_MEMBER));
  // The cover names it with its count.
  const cover = new TextDecoder().decode(good.members.get("README.md"));
  ok(
    cover.includes(`| \`${PACK_FLEET_MEMBER}\` |`) && cover.includes(": 10), as the audit"),
    cover,
  );
  const passed = await verifyPack(memoryBytes(good.zip));
  deepStrictEqual(passed.errors, []);
  const broken = honest();
  broken[3] = ev("fleet.var_set", {
    name: "t",
    old_value_hash: H("2"),
    new_value_hash: H("3"),
    chain_position: 9,
  });
  const bad = buildPack({ ...samplePackContent(sample), fleetEvents: member(broken) }, op);
  const failed = await verifyPack(memoryBytes(bad.zip));
  strictEqual(failed.ok, false);
  deepStrictEqual([...new Set(failed.errors.map((e) => e.kind))], ["fleet events invalid"]);
  // Without fleet events a pack has no such member (its bytes are as before).
  const plain = buildPack(samplePackContent(sample), op);
  ok(!plain.members.has(PACK_FLEET_MEMBER));
  ok(!new TextDecoder().decode(plain.members.get("README.md")).includes(PACK_FLEET_MEMBER));
});
