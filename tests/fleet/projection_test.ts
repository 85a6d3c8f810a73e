import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  explainDivergence,
  type FleetChainEvent,
  headWrite,
  projectFleet,
} from "../../src/fleet/mod.ts";

let n = 0;
function ev(event_type: string, details: Record<string, unknown>): FleetChainEvent {
  n++;
  return {
    event_type,
    actor: "operator",
    details: details as FleetChainEvent["details"],
    timestamp: `t${n}`,
    hmac: `h${n}`,
    where: `2026-12-01.jsonl:${n}`,
  };
}
const H = (c: string) => `sha256:${c.repeat(64)}`;
const set = (name: string, o: string, nw: string, pos: number) =>
  ev("fleet.var_set", { name, old_value_hash: o, new_value_hash: nw, chain_position: pos });
const read = (name: string, hash: string, pos: number, task: string) =>
  ev("fleet.var_read", { name, value_hash: hash, chain_position: pos, task_id: task, run_id: "r" });

Deno.test("a clean history projects with no violations; the head is the last set", () => {
  const p = projectFleet([
    set("t", "", H("a"), 0),
    read("t", H("a"), 0, "task-a"),
    set("t", H("a"), H("b"), 1),
    ev("fleet.var_unset", {
      name: "t",
      old_value_hash: H("b"),
      new_value_hash: "",
      chain_position: 2,
    }),
    set("t", "", H("c"), 3),
  ]);
  deepStrictEqual(p.violations, []);
  strictEqual(headWrite(p.variables.get("t"))?.new_value_hash, H("c"));
  strictEqual(p.variables.get("t")?.reads.length, 1);
});

Deno.test("a missing write is an ordinal gap and a hash-lineage break, named by position", () => {
  const p = projectFleet([set("t", "", H("a"), 0), set("t", H("b"), H("c"), 2)]);
  deepStrictEqual(p.violations.map((v) => v.code), ["fleet.ordinal_gap", "fleet.hash_lineage"]);
  strictEqual(p.violations[0].where, p.variables.get("t")?.writes[1].where);
});

Deno.test("a repeated ordinal (a fork) and a read of a write that never existed are violations", () => {
  const p = projectFleet([
    set("t", "", H("a"), 0),
    set("t", "", H("b"), 0),
    read("t", H("z"), 0, "x"),
    read("t", H("a"), 7, "y"),
  ]);
  deepStrictEqual(p.violations.map((v) => v.code), [
    "fleet.ordinal_gap",
    "fleet.hash_lineage",
    "fleet.read_unknown",
    "fleet.read_unknown",
  ]);
});

Deno.test("malformed details are reported, never thrown", () => {
  const p = projectFleet([ev("fleet.var_set", { name: "t", chain_position: "x" })]);
  deepStrictEqual(p.violations.map((v) => v.code), ["fleet.malformed"]);
});

Deno.test("divergence names the writes between two reads' positions", () => {
  const p = projectFleet([
    set("t", "", H("a"), 0),
    read("t", H("a"), 0, "A"),
    set("t", H("a"), H("b"), 1),
    set("t", H("b"), H("c"), 2),
    read("t", H("c"), 2, "B"),
    set("t", H("c"), H("d"), 3),
  ]);
  const h = p.variables.get("t");
  if (h === undefined) throw new Error("no history");
  const d = explainDivergence(h, h.reads[1], h.reads[0]);
  strictEqual(d.same, false);
  deepStrictEqual(d.writes.map((w) => w.ordinal), [1, 2]);
  strictEqual(explainDivergence(h, h.reads[0], h.reads[0]).same, true);
});

Deno.test("connection references: rotations chain, resolutions name a document the chain created", () => {
  const p = projectFleet([
    ev("fleet.conn_create", { name: "c", document_hash: H("a"), version: 1 }),
    ev("fleet.conn_resolve", { name: "c", document_hash: H("a"), version: 1, task_id: "t1" }),
    ev("fleet.conn_rotate", {
      name: "c",
      old_document_hash: H("a"),
      new_document_hash: H("b"),
      version: 2,
    }),
    ev("fleet.conn_resolve", { name: "c", document_hash: H("b"), version: 2, task_id: "t2" }),
  ]);
  deepStrictEqual(p.violations, []);
  deepStrictEqual(p.connections.get("c")?.resolutions.map((r) => r.task_id), ["t1", "t2"]);
  const bad = projectFleet([
    ev("fleet.conn_resolve", { name: "c", document_hash: H("z"), version: 1 }),
    ev("fleet.conn_create", { name: "c", document_hash: H("a"), version: 1 }),
    ev("fleet.conn_rotate", {
      name: "c",
      old_document_hash: H("x"),
      new_document_hash: H("b"),
      version: 3,
    }),
    ev("fleet.conn_refuse", { name: "c", document_hash: H("y"), reason: "r" }),
  ]);
  deepStrictEqual(bad.violations.map((v) => v.code), [
    "fleet.conn_unknown_document",
    "fleet.conn_lineage",
    "fleet.conn_lineage",
    "fleet.conn_unknown_document",
  ]);
});
