// The gate over logs spanning many batches: the verdict and every issue are the same whether
// the per-line work runs on the main thread or is shared with worker threads.
import { deepStrictEqual, equal, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { concatBytes, parseJsonBytes } from "../../src/canonical/mod.ts";
import { parseEntry, signaturePath } from "../../src/lineage/mod.ts";
import { csvRow, type FactFields } from "../../src/pack_format/mod.ts";
import { openDirectoryGateInput, runLineageGate } from "../../src/verify/mod.ts";
import { gateDir, generateTree, TEST_OPERATOR_KEY } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

const ENTRIES = 900;

const bigints = (_key: string, value: unknown) => typeof value === "bigint" ? `${value}n` : value;

/** What the window consumer is given of an entry, as one comparable string. */
function factKey(hash: string, e: FactFields): string {
  const facts = [e.artefact_path, e.ts_ns, e.parent_hashes, e.content_hash, e.agent_id];
  return JSON.stringify([hash, ...facts, e.agent_card_kid], bigints);
}

async function lines(dir: string): Promise<string[]> {
  return (await Deno.readTextFile(join(dir, ".sdd/lineage/log.jsonl"))).split("\n").slice(0, -1);
}

async function hashOf(line: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(line)));
  return "sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("a 900-entry tree passes inline and with 1 and 2 workers", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: ENTRIES, artefacts: 37 });
    for (const workers of [0, 1, 2]) {
      const result = await gateDir(dir, { workers });
      deepStrictEqual(result.issues, [], `workers=${workers}`);
      strictEqual(result.entries, ENTRIES);
      strictEqual(result.artefacts, 37);
    }
  });
});

Deno.test("onEntry gets every whole entry in log order, also from worker batches", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: ENTRIES, artefacts: 37 });
    const expected = await Promise.all(
      (await lines(dir)).map(async (l) => `${await hashOf(l)} ${JSON.parse(l).agent_id}`),
    );
    for (const workers of [0, 1]) {
      const opened = await openDirectoryGateInput({
        logPath: join(dir, ".sdd/lineage/log.jsonl"),
        cardsDir: join(dir, ".sdd/agents"),
        operatorKey: TEST_OPERATOR_KEY,
      });
      if (opened === undefined) throw new Error("no log");
      const seen: string[] = [];
      try {
        // Whole entries: fields the in-order checks never read (agent_id, ts_ns) are there.
        const result = await runLineageGate({
          ...opened.input,
          onEntry: (entry, hash) => seen.push(`${hash} ${entry.agent_id}`),
        }, { workers });
        strictEqual(result.ok, true, `workers=${workers}`);
      } finally {
        opened.close();
      }
      deepStrictEqual(seen, expected, `workers=${workers}`);
    }
  });
});

Deno.test("window gets every entry's fact fields and CSV rows in log order, also from workers", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: ENTRIES, artefacts: 37 });
    const raw = await lines(dir);
    // What the pack's window phase made of whole entries before: the same fields, the same rows.
    const entries = raw.map((l) => parseEntry(parseJsonBytes(new TextEncoder().encode(l))));
    const expectedEntries = await Promise.all(
      entries.map(async (e, i) => factKey(await hashOf(raw[i]), e)),
    );
    const expectedCsv = entries.map(csvRow).join("");
    for (const workers of [0, 1, 2]) {
      const opened = await openDirectoryGateInput({
        logPath: join(dir, ".sdd/lineage/log.jsonl"),
        cardsDir: join(dir, ".sdd/agents"),
        operatorKey: TEST_OPERATOR_KEY,
      });
      if (opened === undefined) throw new Error("no log");
      const seen: string[] = [];
      const rows: Uint8Array[] = [];
      try {
        const result = await runLineageGate({
          ...opened.input,
          window: {
            onEntry: (e, hash) => seen.push(factKey(hash, e)),
            onCsvRows: (r) => rows.push(r),
          },
        }, { workers });
        strictEqual(result.ok, true, `workers=${workers}`);
      } finally {
        opened.close();
      }
      deepStrictEqual(seen, expectedEntries, `workers=${workers}`);
      strictEqual(new TextDecoder().decode(concatBytes(rows)), expectedCsv, `workers=${workers}`);
    }
  });
});

Deno.test("window and onEntry are exclusive", async () => {
  await rejects(
    () =>
      runLineageGate({
        log: new Uint8Array(0),
        signatures: () => undefined,
        cards: [],
        onEntry: () => {},
        window: { onEntry: () => {}, onCsvRows: () => {} },
      }),
    TypeError,
  );
});

Deno.test("tampering deep in a long log gives identical issues inline and with workers", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: ENTRIES, artefacts: 37 });
    const log = await lines(dir);
    // A deleted sidecar (line 300), a forged HMAC (line 640) and a reordered line (line 820).
    const l300 = JSON.parse(log[299]).artefact_path as string;
    await Deno.remove(join(dir, ".sdd/lineage", signaturePath(l300, await hashOf(log[299]))));
    log[639] = log[639].replace(
      /"operator_hmac":"[0-9a-f]{64}"/,
      `"operator_hmac":"${"0".repeat(64)}"`,
    );
    log[819] = log[819].replace('{"agent_card_kid"', '{ "agent_card_kid"');
    await Deno.writeTextFile(join(dir, ".sdd/lineage/log.jsonl"), log.join("\n") + "\n");
    const inline = await gateDir(dir, { workers: 0 });
    const pooled = await gateDir(dir, { workers: 1 });
    const two = await gateDir(dir, { workers: 2 });
    equal(inline.ok, false);
    deepStrictEqual(pooled.issues, inline.issues);
    deepStrictEqual(two.issues, inline.issues);
    // The changed lines, and the next entry of each one's artefact (37 lines on), whose
    // parent no longer exists.
    deepStrictEqual(inline.issues.map((i) => `${i.line} ${i.kind}`), [
      "300 invalid signature",
      "640 invalid signature",
      "640 HMAC mismatch",
      "677 dangling parent_hash",
      "820 non-canonical line bytes",
      "857 dangling parent_hash",
      // The signed entries of the two rewritten lines left their sidecars behind.
      "undefined orphaned signature",
      "undefined orphaned signature",
    ]);
  });
});

Deno.test("a worker that dies hands its batches back: same verdict, nothing lost", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: 300, artefacts: 11 });
    const { openDirectoryGateInput, runLineageGate } = await import("../../src/verify/mod.ts");
    const { TEST_OPERATOR_KEY } = await import("../_helpers/lineage_tree.ts");
    const opened = await openDirectoryGateInput({
      logPath: join(dir, ".sdd/lineage/log.jsonl"),
      cardsDir: join(dir, ".sdd/agents"),
      operatorKey: TEST_OPERATOR_KEY,
    });
    if (opened === undefined) throw new Error("no log");
    const result = await runLineageGate(opened.input, {
      workers: 2,
      workerUrl: new URL("./_failing_worker.ts", import.meta.url),
    });
    opened.close();
    deepStrictEqual(result.issues, []);
    strictEqual(result.entries, 300);
  });
});

Deno.test("batches past the first 256 entries reach the worker; shorter logs never start one", async () => {
  const { openDirectoryGateInput, runLineageGate } = await import("../../src/verify/mod.ts");
  const marked = async (entries: number) =>
    await withTempDir(async (dir) => {
      generateTree(dir, { entries, artefacts: 11 });
      const opened = await openDirectoryGateInput({
        logPath: join(dir, ".sdd/lineage/log.jsonl"),
        cardsDir: join(dir, ".sdd/agents"),
      });
      if (opened === undefined) throw new Error("no log");
      try {
        const result = await runLineageGate(opened.input, {
          workers: 1,
          workerUrl: new URL("./_marking_worker.ts", import.meta.url),
        });
        return result.issues.filter((i) => (i.kind as string) === "worker").length;
      } finally {
        opened.close();
      }
    });
  equal(await marked(600) > 0, true, "a long log shares its batches with the worker");
  strictEqual(await marked(200), 0, "a short log stays on this thread");
});

Deno.test("a worker module that cannot load leaves every batch to this thread", async () => {
  await withTempDir(async (dir) => {
    generateTree(dir, { entries: 500, artefacts: 11 });
    const { openDirectoryGateInput, runLineageGate } = await import("../../src/verify/mod.ts");
    const opened = await openDirectoryGateInput({
      logPath: join(dir, ".sdd/lineage/log.jsonl"),
      cardsDir: join(dir, ".sdd/agents"),
    });
    if (opened === undefined) throw new Error("no log");
    try {
      const result = await runLineageGate(opened.input, {
        workers: 1,
        workerUrl: new URL("./_no_such_worker.ts", import.meta.url),
      });
      deepStrictEqual(result.issues, []);
      strictEqual(result.entries, 500);
    } finally {
      opened.close();
    }
  });
});
