import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { canonicalize, type JsonObject } from "../../src/canonical/mod.ts";
import { FakeClock } from "../../src/io/mod.ts";
import {
  entryHash,
  isSecretKey,
  type LedgerEntryInput,
  LedgerError,
  ledgerPath,
  LedgerWriter,
  readLedger,
  redactPayload,
  rowBytes,
  tsFromMs,
  verifyLedgerBytes,
} from "../../src/ledger/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const REF = new URL("./ledger_ref.py", import.meta.url).pathname;
const START_MS = Date.UTC(2026, 0, 1);

async function python(args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command("python3", {
    args: [REF, ...args],
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

interface Event extends LedgerEntryInput {
  ts_ms: number;
}

// Events with every kind, non-ASCII text, nested values, integers, floats and booleans.
const EVENTS: Event[] = [
  { kind: "run.open", payload: { branch: "feature/ü", host: "ci-1", seed: "9f" }, ts_ms: START_MS },
  {
    kind: "task.scheduled",
    task_id: "1.1-add-api",
    payload: { title: "Add the API — fast ✓", deps: [], priority: 2 },
    ts_ms: START_MS + 1,
  },
  {
    kind: "task.started",
    task_id: "1.1-add-api",
    payload: { cli: "scripted", attempt: 1 },
    ts_ms: START_MS + 250,
  },
  { kind: "run.resumed", payload: { note: 'emoji 😀 and "quotes"\n' }, ts_ms: START_MS + 1000 },
  {
    kind: "task.completed",
    task_id: "1.1-add-api",
    payload: {
      merged: true,
      cost_usd: 0.125,
      files: ["a.ts", "b/ç.ts"],
      nested: { x: null, y: 1e-7 },
    },
    ts_ms: START_MS + 1001,
  },
  {
    kind: "task.failed",
    task_id: "2.1-test",
    payload: { reason: "gate-failed", cost_usd: 1.5 },
    ts_ms: START_MS + 2000,
  },
  { kind: "task.abandoned", task_id: "2.2-docs", payload: {}, ts_ms: START_MS + 2500 },
  { kind: "run.closed", payload: { reason: "quiescent" }, ts_ms: START_MS + 3333 },
];

async function writeOurs(
  sdd: string,
  runId: string,
  events: readonly Event[],
): Promise<Uint8Array> {
  const clock = new FakeClock(events[0].ts_ms);
  const ledger = await LedgerWriter.open(sdd, runId, { clock });
  for (const ev of events) {
    clock.advance(ev.ts_ms - clock.nowMs());
    const { ts_ms: _ts, ...input } = ev;
    await ledger.append(input);
  }
  return await Deno.readFile(ledgerPath(sdd, runId));
}

Deno.test("ledger rows are byte-identical to an independent Python implementation of FORMATS §6", async () => {
  await withTempDir(async (dir) => {
    const ours = await writeOurs(join(dir, ".sdd"), "brave-otter-000001", EVENTS);
    const theirs = await python(
      ["write"],
      JSON.stringify(EVENTS.map((e) => ({ ...e, task_id: e.task_id ?? null }))),
    );
    strictEqual(new TextDecoder().decode(ours), theirs);
    const firstLine = theirs.split("\n")[0];
    ok(firstLine.includes('"ts":1767225600.0'), firstLine);
    ok(firstLine.includes('"branch":"feature/\\u00fc"'), firstLine);
  });
});

Deno.test("each implementation verifies the other's ledger and finds the same first broken row", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const ours = await writeOurs(sdd, "r1", EVENTS);
    const path = ledgerPath(sdd, "r1");
    deepStrictEqual(JSON.parse(await python(["verify", path])), {
      ok: true,
      rows: 8,
      line: null,
      reason: null,
    });
    const theirsPath = join(dir, "theirs.jsonl");
    await Deno.writeTextFile(theirsPath, await python(["write"], JSON.stringify(EVENTS)));
    const check = verifyLedgerBytes(await Deno.readFile(theirsPath));
    ok(check.ok);
    strictEqual(check.rows.length, 8);
    strictEqual(check.rows[4].payload.cost_usd, 0.125);
    // Tamper with the payload of row 3 (line 3): both stop there.
    const text = new TextDecoder().decode(ours).replace('"attempt":1', '"attempt":2');
    await Deno.writeTextFile(theirsPath, text);
    const broken = verifyLedgerBytes(new TextEncoder().encode(text));
    deepStrictEqual(
      [broken.ok, broken.broken?.line, broken.broken?.seq, broken.broken?.reason],
      [false, 3, 2, "entry_hash does not match the row's content"],
    );
    strictEqual(broken.rows.length, 2);
    const py = JSON.parse(await python(["verify", theirsPath]));
    deepStrictEqual([py.ok, py.line, py.reason], [false, 3, "entry_hash mismatch"]);
  });
});

function lines(bytes: Uint8Array): string[] {
  return new TextDecoder().decode(bytes).split("\n").slice(0, -1);
}

function rebuild(rows: string[]): Uint8Array {
  return new TextEncoder().encode(rows.map((r) => r + "\n").join(""));
}

Deno.test("chain verification reports the first broken row for each kind of tampering", async () => {
  await withTempDir(async (dir) => {
    const good = lines(await writeOurs(join(dir, ".sdd"), "r1", EVENTS));
    const at = (rows: string[]) => {
      const c = verifyLedgerBytes(rebuild(rows));
      return [c.ok, c.broken?.line, c.broken?.reason];
    };
    // A deleted row breaks the next one's seq.
    deepStrictEqual(at([...good.slice(0, 2), ...good.slice(3)]), [
      false,
      3,
      "seq is 3, expected 2",
    ]);
    // Swapped rows.
    deepStrictEqual(at([good[0], good[2], good[1], ...good.slice(3)]), [
      false,
      2,
      "seq is 2, expected 1",
    ]);
    // A row rewritten with a correct entry_hash still breaks the next row's prev_hash.
    const row1 = JSON.parse(good[1]);
    row1.payload.title = "forged";
    row1.entry_hash = entryHash(row1);
    const forged = canonicalize(row1 as JsonObject, "canon-ascii");
    deepStrictEqual(at([good[0], forged, ...good.slice(2)]), [
      false,
      3,
      "prev_hash does not match the previous row's entry_hash",
    ]);
    // Non-canonical bytes (a space) are refused even though the JSON means the same.
    const spaced = good[0].replace('"seq":0', '"seq": 0');
    deepStrictEqual(at([spaced, ...good.slice(1)]).slice(0, 2), [false, 1]);
    ok(String(at([spaced, ...good.slice(1)])[2]).startsWith("non-canonical line bytes"));
    // A torn tail (no final newline).
    const torn = new TextEncoder().encode(good.join("\n"));
    const c = verifyLedgerBytes(torn);
    deepStrictEqual([c.ok, c.broken?.line, c.broken?.reason, c.rows.length], [
      false,
      8,
      "missing trailing newline",
      7,
    ]);
    // A row of an unknown kind, even with a matching hash.
    const odd = JSON.parse(good[0]);
    odd.kind = "run.paused";
    odd.entry_hash = entryHash(odd);
    deepStrictEqual(at([canonicalize(odd as JsonObject, "canon-ascii")]), [
      false,
      1,
      'unknown kind "run.paused"',
    ]);
    // An integer ts is not a float.
    const intTs = good[0].replace('"ts":1767225600.0', '"ts":1767225600');
    deepStrictEqual(at([intTs]), [false, 1, "ts must be a float (epoch seconds)"]);
    // The first row must start from 64 zeros.
    deepStrictEqual(at(good.slice(1)), [false, 1, "seq is 1, expected 0"]);
    deepStrictEqual(verifyLedgerBytes(new Uint8Array()), { ok: true, rows: [] });
  });
});

Deno.test("the writer refuses to append to a torn or tampered ledger and never rewrites it", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const bytes = await writeOurs(sdd, "r1", EVENTS.slice(0, 3));
    const path = ledgerPath(sdd, "r1");
    const torn = bytes.subarray(0, bytes.length - 10);
    await Deno.writeFile(path, torn);
    await rejects(
      () => LedgerWriter.open(sdd, "r1", { clock: new FakeClock() }),
      (e: unknown) =>
        e instanceof LedgerError && e.code === "ledger.chain_broken" &&
        e.message.includes("line 3"),
    );
    deepStrictEqual(await Deno.readFile(path), torn);
  });
});

Deno.test("two writers appending at once keep one unbroken chain", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const clock = new FakeClock(START_MS);
    const a = await LedgerWriter.open(sdd, "r1", { clock });
    const b = await LedgerWriter.open(sdd, "r1", { clock });
    await a.append({ kind: "run.open" });
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      const w = i % 2 === 0 ? a : b;
      appends.push(w.append({ kind: "task.scheduled", task_id: `t${i}` }));
    }
    await Promise.all(appends);
    const read = await readLedger(sdd, "r1");
    ok(read.ok, JSON.stringify(read.broken));
    strictEqual(read.rows.length, 21);
    deepStrictEqual(read.rows.map((r) => r.seq), Array.from({ length: 21 }, (_, i) => i));
    deepStrictEqual(
      new Set(read.rows.slice(1).map((r) => r.task_id)),
      new Set(Array.from({ length: 20 }, (_, i) => `t${i}`)),
    );
    strictEqual(((await Deno.stat(read.path)).mode ?? 0) & 0o777, 0o600);
  });
});

Deno.test("append refuses unknown kinds and task events without a task id", async () => {
  await withTempDir(async (dir) => {
    const ledger = await LedgerWriter.open(join(dir, ".sdd"), "r1", { clock: new FakeClock() });
    await rejects(
      () => ledger.append({ kind: "run.paused" as "run.open" }),
      (e: unknown) => e instanceof LedgerError && e.code === "ledger.bad_kind",
    );
    await rejects(
      () => ledger.append({ kind: "task.started" }),
      (e: unknown) => e instanceof LedgerError && e.code === "ledger.bad_row",
    );
    await rejects(
      () => ledger.append({ kind: "run.open", task_id: "t1" }),
      (e: unknown) => e instanceof LedgerError && e.code === "ledger.bad_row",
    );
    strictEqual(ledger.head, undefined);
    await rejects(
      () => readLedger(join(dir, ".sdd"), "r1"),
      (e: unknown) => e instanceof LedgerError && e.code === "ledger.missing",
    );
    await rejects(
      () => LedgerWriter.open(join(dir, ".sdd"), "../escape", { clock: new FakeClock() }),
      (e: unknown) => (e as { code?: string }).code === "runs.bad_id",
    );
  });
});

Deno.test("secret-looking payload fields are redacted before hashing and listed in redactions", async () => {
  ok(isSecretKey("api_key") && isSecretKey("OPENAI_API_KEY") && isSecretKey("access_token"));
  ok(isSecretKey("Authorization") && isSecretKey("db.password"));
  ok(!isSecretKey("input_tokens") && !isSecretKey("tokens") && !isSecretKey("author"));
  const { payload, redactions } = redactPayload({
    zeta: { GITHUB_TOKEN: "ghp_x" },
    access_token: "abc",
    input_tokens: 12,
    list: [{ password: "p" }],
  });
  deepStrictEqual(redactions, ["access_token", "list[0].password", "zeta.GITHUB_TOKEN"]);
  deepStrictEqual(payload, {
    access_token: "[redacted]",
    input_tokens: 12,
    list: [{ password: "[redacted]" }],
    zeta: { GITHUB_TOKEN: "[redacted]" },
  });
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const ledger = await LedgerWriter.open(sdd, "r1", { clock: new FakeClock(START_MS) });
    const row = await ledger.append({
      kind: "run.open",
      payload: { env: { ANTHROPIC_API_KEY: "sk-secret" } },
    });
    deepStrictEqual(row.redactions, ["env.ANTHROPIC_API_KEY"]);
    const text = await Deno.readTextFile(ledgerPath(sdd, "r1"));
    ok(!text.includes("sk-secret"));
    ok(verifyLedgerBytes(rowBytes(row)).ok);
  });
});

Deno.test("ts is float epoch seconds: integral values keep their .0", () => {
  strictEqual(canonicalize({ ts: tsFromMs(START_MS) }, "canon-ascii"), '{"ts":1767225600.0}');
  strictEqual(canonicalize({ ts: tsFromMs(START_MS + 5) }, "canon-ascii"), '{"ts":1767225600.005}');
});
