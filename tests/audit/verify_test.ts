// The audit part of the tamper matrix: each change to a segment is caught at segment:line with
// the contract's words, and nothing else is reported.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHmac } from "node:crypto";
import {
  type AuditChainKeys,
  auditChainKeys,
  type AuditIssue,
  buildRecord,
  ensureAuditKey,
  GENESIS_HMAC,
  verifyAuditLog,
} from "../../src/audit/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import {
  type AuditFixture,
  auditFixture,
  onlySegment,
  segmentLines,
  writeEvents,
  writeLines,
} from "./_helpers.ts";

const SEG = "2026-01-01.jsonl";

async function tampered(
  edit: (lines: string[], fx: AuditFixture) => string[] | Promise<string[]>,
  options: { records?: number; chunkSize?: number } = {},
) {
  return await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, options.records ?? 6);
    const path = await onlySegment(fx);
    await writeLines(path, await edit(await segmentLines(path), fx));
    return await verifyAuditLog(fx.dir, fx.key, { chunkSize: options.chunkSize });
  });
}

function brief(issues: AuditIssue[]): string[] {
  return issues.map((i) => `${i.segment}:${i.line}: ${i.code}`);
}

function hasWords(issues: AuditIssue[], words: string): void {
  ok(issues.some((i) => i.message.includes(words)), `no issue says '${words}'`);
}

Deno.test("an untouched log verifies, also when read in tiny chunks", async () => {
  for (const chunkSize of [undefined, 7]) {
    const report = await tampered((l) => l, { chunkSize });
    ok(report.ok);
    strictEqual(report.records, 6);
    strictEqual(report.issue_count, 0);
    deepStrictEqual(report.segments.map((s) => [s.name, s.lines, s.records]), [[SEG, 6, 6]]);
  }
});

Deno.test("tamper: one flipped byte in a value is an HMAC mismatch on that line only", async () => {
  const report = await tampered((lines) => {
    lines[2] = lines[2].replace('"resource_id": "r2"', '"resource_id": "r3"');
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:3: audit.hmac_mismatch`]);
  hasWords(report.issues, "HMAC mismatch");
  strictEqual(report.records, 5);
});

Deno.test("tamper: a flipped byte that breaks UTF-8 is reported, not replaced", async () => {
  return await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const path = await onlySegment(fx);
    const bytes = await Deno.readFile(path);
    const second = bytes.indexOf(0x0a) + 5;
    bytes[second] = 0xc3;
    await Deno.writeFile(path, bytes);
    const report = await verifyAuditLog(fx.dir, fx.key);
    // An unparseable line hides the hmac the next record names, so that link is reported too.
    deepStrictEqual(brief(report.issues), [
      `${SEG}:2: audit.invalid_json`,
      `${SEG}:3: audit.prev_hmac_mismatch`,
    ]);
    hasWords(report.issues, "UTF-8");
  });
});

Deno.test("tamper: reordered keys are non-canonical line bytes", async () => {
  const report = await tampered((lines) => {
    const parsed = JSON.parse(lines[1]);
    const { actor, ...rest } = parsed;
    const reordered = JSON.stringify({ ...rest, actor }, null, 0)
      .replaceAll('","', '", "').replaceAll('":', '": ').replaceAll("},", "}, ");
    lines[1] = reordered;
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:2: audit.non_canonical`]);
  hasWords(report.issues, "non-canonical line bytes");
});

Deno.test("tamper: added whitespace is non-canonical line bytes", async () => {
  const report = await tampered((lines) => {
    lines[4] = lines[4].replace('"actor": ', '"actor":  ');
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:5: audit.non_canonical`]);
});

Deno.test("tamper: a stripped final newline is reported at the last line with the torn tail", async () => {
  const report = await tampered((lines) => lines.slice(0, -1));
  deepStrictEqual(brief(report.issues), [`${SEG}:6: audit.missing_newline`]);
  hasWords(report.issues, "missing trailing newline");
  strictEqual(report.torn_tail?.segment, SEG);
  strictEqual(report.torn_tail?.bytes, 0);
});

Deno.test("tamper: a \\r before the newline is non-canonical line bytes", async () => {
  const report = await tampered((lines) => {
    lines[3] += "\r";
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:4: audit.non_canonical`]);
});

Deno.test("tamper: two swapped lines break the chain where they sit", async () => {
  const report = await tampered((lines) => {
    [lines[2], lines[3]] = [lines[3], lines[2]];
    return lines;
  });
  deepStrictEqual(brief(report.issues), [
    `${SEG}:3: audit.prev_hmac_mismatch`,
    `${SEG}:4: audit.prev_hmac_mismatch`,
    `${SEG}:5: audit.prev_hmac_mismatch`,
  ]);
  hasWords(report.issues, "prev_hmac mismatch");
});

Deno.test("tamper: a deleted line is a prev_hmac mismatch on the line after it", async () => {
  const report = await tampered((lines) => lines.filter((_, i) => i !== 2));
  deepStrictEqual(brief(report.issues), [`${SEG}:3: audit.prev_hmac_mismatch`]);
});

Deno.test("tamper: deleting the first line breaks the link to genesis", async () => {
  const report = await tampered((lines) => lines.slice(1));
  deepStrictEqual(brief(report.issues), [`${SEG}:1: audit.prev_hmac_mismatch`]);
});

Deno.test("tamper: a wrong key fails every record with HMAC mismatch", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 4);
    const other = await ensureAuditKey(`${root}/other.key`, new SeededRandom(99));
    const report = await verifyAuditLog(fx.dir, other);
    deepStrictEqual(
      brief(report.issues),
      [1, 2, 3, 4].map((n) => `${SEG}:${n}: audit.hmac_mismatch`),
    );
    strictEqual(report.records, 0);
  });
});

Deno.test("tamper: a garbage line inserted mid-chain is reported and the chain continues", async () => {
  const report = await tampered((lines) => {
    lines.splice(3, 0, "garbage");
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:4: audit.invalid_json`]);
  strictEqual(report.records, 6);
});

Deno.test("tamper: a replayed valid record breaks the chain at the copy", async () => {
  const report = await tampered((lines) => {
    lines.splice(4, 0, lines[1]);
    return lines;
  });
  deepStrictEqual(brief(report.issues), [
    `${SEG}:5: audit.prev_hmac_mismatch`,
    `${SEG}:6: audit.prev_hmac_mismatch`,
  ]);
});

function legacyLine(keys: AuditChainKeys, prev: string, i: number): string {
  const body =
    `{"actor": "py", "details": {"i": ${i}}, "event_type": "legacy", "prev_hmac": "${prev}", ` +
    `"resource_id": "r${i}", "resource_type": "task", "timestamp": "2025-06-01T00:00:0${i}.000001+00:00"}`;
  const hmac = createHmac("sha256", keys.legacy).update(prev + body).digest("hex");
  return body.replace('"prev_hmac"', `"hmac": "${hmac}", "prev_hmac"`);
}

Deno.test("legacy records verify with K and the chain continues into scheme 2", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const keys = auditChainKeys(fx.key);
    const l1 = legacyLine(keys, GENESIS_HMAC, 1);
    const l2 = legacyLine(keys, JSON.parse(l1).hmac, 2);
    await Deno.mkdir(fx.dir, { recursive: true });
    await Deno.writeTextFile(`${fx.dir}/2025-06-01.jsonl`, `${l1}\n${l2}\n`);
    await writeEvents(fx, 2);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.records, 4);
    strictEqual(report.legacy_records, 2);
    // A legacy record altered after the fact fails like any other.
    await Deno.writeTextFile(
      `${fx.dir}/2025-06-01.jsonl`,
      `${l1.replace('"i": 1', '"i": 9')}\n${l2}\n`,
    );
    const bad = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(brief(bad.issues), ["2025-06-01.jsonl:1: audit.hmac_mismatch"]);
  });
});

Deno.test("a false predecessor claim with a valid HMAC is rejected", async () => {
  const report = await tampered((lines, fx) => {
    const prev = JSON.parse(lines[5]).hmac;
    const { line } = buildRecord({
      actor: "x",
      event_type: "multimodal.attach",
      resource_type: "task",
      resource_id: "t",
      details: { prev_chain_digest: "a".repeat(64) },
    }, { prevHmac: prev, timestamp: "2026-01-01T11:00:00.000000Z", keys: auditChainKeys(fx.key) });
    lines.splice(6, 0, new TextDecoder().decode(line).trimEnd());
    return lines;
  });
  deepStrictEqual(brief(report.issues), [`${SEG}:7: audit.false_predecessor_claim`]);
  hasWords(report.issues, "false predecessor claim");
});

Deno.test("a seal that does not match the torn bytes is a seal mismatch", async () => {
  const report = await tampered((lines, fx) => {
    const prev = JSON.parse(lines[5]).hmac;
    lines.splice(6, 0, '{"torn": ');
    const offset = lines.slice(0, 7).join("\n").length;
    const { line } = buildRecord({
      actor: "bernstein",
      event_type: "chain.torn_record",
      resource_type: "audit_segment",
      resource_id: SEG,
      details: { segment: SEG, byte_offset: offset, torn_bytes_sha256: "b".repeat(64) },
    }, { prevHmac: prev, timestamp: "2026-01-01T11:00:00.000000Z", keys: auditChainKeys(fx.key) });
    lines.splice(7, 0, new TextDecoder().decode(line).trimEnd());
    return lines;
  });
  deepStrictEqual(brief(report.issues), [
    `${SEG}:7: audit.invalid_json`,
    `${SEG}:8: audit.seal_mismatch`,
  ]);
  strictEqual(report.tears.length, 0);
});

Deno.test("a symlinked segment is reported and not read", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    await Deno.writeTextFile(`${root}/elsewhere`, "x\n");
    await Deno.symlink(`${root}/elsewhere`, `${fx.dir}/2026-01-02.jsonl`);
    const report = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(brief(report.issues), ["2026-01-02.jsonl:null: audit.segment_unreadable"]);
  });
});

Deno.test("issues beyond maxIssues are counted but not kept", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 5);
    const other = await ensureAuditKey(`${root}/other.key`, new SeededRandom(5));
    const report = await verifyAuditLog(fx.dir, other, { maxIssues: 2 });
    strictEqual(report.issues.length, 2);
    strictEqual(report.issue_count, 5);
  });
});

Deno.test("an empty or missing audit folder verifies as an empty chain", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok);
    strictEqual(report.records, 0);
    strictEqual(report.tip, GENESIS_HMAC);
  });
});
