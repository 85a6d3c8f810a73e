// `bernstein audit verify|show` as a real subprocess under the binary's permission set.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import { FakeClock, pathExists, SeededRandom } from "../../src/io/mod.ts";
import { runBernstein } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function project(root: string): Promise<{ keyPath: string; segment: string }> {
  const keyPath = join(root, "keys", "audit.key");
  const key = await ensureAuditKey(keyPath, new SeededRandom(11));
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 9, 0, 0));
  const log = new AuditLog(join(root, ".sdd", "audit"), key, { clock });
  const types = ["run.start", "task.transition", "task.transition", "run.end"];
  for (let i = 0; i < types.length; i++) {
    await log.append({
      actor: "orchestrator",
      event_type: types[i],
      resource_type: "task",
      resource_id: `t${i}`,
      details: { i },
    });
    clock.advance(3600_000 * 8); // 09:00, 17:00, 01:00 next day, 09:00
  }
  await log.close();
  return { keyPath, segment: join(root, ".sdd", "audit", "2026-01-01.jsonl") };
}

Deno.test("audit verify passes a clean log and prints JSON on request", async () => {
  await withTempDir(async (root) => {
    const { keyPath } = await project(root);
    const env = { BERNSTEIN_AUDIT_KEY_PATH: keyPath };
    const run = await runBernstein(["audit", "verify"], { cwd: root, env });
    strictEqual(run.code, 0, run.stderr);
    ok(run.stdout.startsWith("PASS "), run.stdout);
    ok(run.stdout.includes("2 segment(s), 4 record(s)"), run.stdout);
    const json = await runBernstein(["audit", "verify", "--json"], { cwd: root, env });
    strictEqual(json.code, 0);
    const report = JSON.parse(json.stdout);
    strictEqual(report.ok, true);
    strictEqual(report.records, 4);
    strictEqual(report.key_path, keyPath);
    deepStrictEqual(report.segments.map((s: { name: string }) => s.name), [
      "2026-01-01.jsonl",
      "2026-01-02.jsonl",
    ]);
  });
});

Deno.test("audit verify fails a tampered log with segment:line and exit 1", async () => {
  await withTempDir(async (root) => {
    const { keyPath, segment } = await project(root);
    const text = await Deno.readTextFile(segment);
    await Deno.writeTextFile(segment, text.replace('"i": 1', '"i": 7'));
    const run = await runBernstein(["audit", "verify"], {
      cwd: root,
      env: { BERNSTEIN_AUDIT_KEY_PATH: keyPath },
    });
    strictEqual(run.code, 1);
    ok(
      run.stderr.includes("error[audit.hmac_mismatch]: 2026-01-01.jsonl:2: HMAC mismatch"),
      run.stderr,
    );
    ok(run.stdout.startsWith("FAIL (1 issue)"), run.stdout);
  });
});

Deno.test("audit verify reports a sealed tear as a warning and passes", async () => {
  await withTempDir(async (root) => {
    const { keyPath } = await project(root);
    const seg2 = join(root, ".sdd", "audit", "2026-01-02.jsonl");
    const bytes = await Deno.readFile(seg2);
    await Deno.writeFile(seg2, bytes.subarray(0, bytes.length - 25));
    const env = { BERNSTEIN_AUDIT_KEY_PATH: keyPath };
    const torn = await runBernstein(["audit", "verify"], { cwd: root, env });
    strictEqual(torn.code, 1);
    ok(torn.stderr.includes("2026-01-02.jsonl:2: missing trailing newline"), torn.stderr);
    ok(torn.stderr.includes("torn tail: 2026-01-02.jsonl ends with"), torn.stderr);
    const key = await ensureAuditKey(keyPath, new SeededRandom(0));
    const log = new AuditLog(join(root, ".sdd", "audit"), key, {
      clock: new FakeClock(Date.UTC(2026, 0, 2, 12)),
    });
    await log.append({ actor: "a", event_type: "later", resource_type: "x", resource_id: "y" });
    await log.close();
    const sealed = await runBernstein(["audit", "verify"], { cwd: root, env });
    strictEqual(sealed.code, 0, sealed.stderr);
    ok(sealed.stderr.includes("warning[audit.sealed_tear]: 2026-01-02.jsonl:3:"), sealed.stderr);
    ok(sealed.stdout.includes("1 sealed tear(s)"), sealed.stdout);
  });
});

Deno.test("an acknowledged run.end cut off whole: verify warns with the bytes lost; sealed, it stays in the output and JSON", async () => {
  await withTempDir(async (root) => {
    const { keyPath } = await project(root);
    const seg2 = join(root, ".sdd", "audit", "2026-01-02.jsonl");
    const bytes = await Deno.readFile(seg2);
    const cut = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    await Deno.writeFile(seg2, bytes.subarray(0, cut));
    const lost = bytes.length - cut;
    const env = { BERNSTEIN_AUDIT_KEY_PATH: keyPath };
    const pending = await runBernstein(["audit", "verify"], { cwd: root, env });
    strictEqual(pending.code, 0, pending.stderr);
    ok(
      pending.stderr.includes(
        `warning[audit.truncated]: 2026-01-02.jsonl: ${lost} acknowledged byte(s) cut off`,
      ),
      pending.stderr,
    );
    const key = await ensureAuditKey(keyPath, new SeededRandom(0));
    const log = new AuditLog(join(root, ".sdd", "audit"), key, {
      clock: new FakeClock(Date.UTC(2026, 0, 2, 12)),
    });
    await log.append({ actor: "a", event_type: "later", resource_type: "x", resource_id: "y" });
    await log.close();
    const sealed = await runBernstein(["audit", "verify"], { cwd: root, env });
    strictEqual(sealed.code, 0, sealed.stderr);
    ok(
      sealed.stderr.includes(
        "warning[audit.sealed_tear]: 2026-01-02.jsonl:2: torn tail (no torn bytes left, 0 bytes, " +
          `truncated) sealed by this chain.torn_record; the torn record is lost; ${lost} ` +
          "acknowledged byte(s) were cut off before it",
      ),
      sealed.stderr,
    );
    ok(!sealed.stderr.includes("audit.truncated"), sealed.stderr);
    ok(
      sealed.stdout.includes(
        `1 sealed tear(s): 0 torn byte(s), ${lost} acknowledged byte(s) cut off`,
      ),
      sealed.stdout,
    );
    const json = JSON.parse(
      (await runBernstein(["audit", "verify", "--json"], { cwd: root, env })).stdout,
    );
    strictEqual(json.ok, true);
    strictEqual(json.truncated, null);
    deepStrictEqual(
      json.tears.map((t: Record<string, unknown>) => [t.tear_class, t.bytes_lost]),
      [["truncated", lost]],
    );
  });
});

Deno.test("audit verify with no key exits 3 and creates no key", async () => {
  await withTempDir(async (root) => {
    await project(root);
    const home = join(root, "home");
    await Deno.mkdir(home);
    const run = await runBernstein(["audit", "verify"], { cwd: root, env: { HOME: home } });
    strictEqual(run.code, 3);
    ok(run.stderr.includes("error[audit.key_missing]"), run.stderr);
    strictEqual(await pathExists(join(home, ".local")), false, "verify created key material");
    const explicit = join(root, "missing.key");
    const run2 = await runBernstein(["audit", "show"], {
      cwd: root,
      env: { BERNSTEIN_AUDIT_KEY_PATH: explicit },
    });
    strictEqual(run2.code, 3);
    strictEqual(await pathExists(explicit), false);
  });
});

Deno.test("audit verify refuses a key readable by others", async () => {
  await withTempDir(async (root) => {
    const { keyPath } = await project(root);
    await Deno.chmod(keyPath, 0o644);
    const run = await runBernstein(["audit", "verify"], {
      cwd: root,
      env: { BERNSTEIN_AUDIT_KEY_PATH: keyPath },
    });
    strictEqual(run.code, 1);
    ok(run.stderr.includes("error[secret.permissions]"), run.stderr);
    strictEqual(((await Deno.stat(keyPath)).mode ?? -1) & 0o777, 0o644);
  });
});

Deno.test("audit show filters by type and date and prints JSON", async () => {
  await withTempDir(async (root) => {
    const { keyPath } = await project(root);
    const env = { BERNSTEIN_AUDIT_KEY_PATH: keyPath };
    const human = await runBernstein(["audit", "show", "--type", "task.transition"], {
      cwd: root,
      env,
    });
    strictEqual(human.code, 0, human.stderr);
    const lines = human.stdout.trim().split("\n");
    strictEqual(lines.length, 2);
    ok(lines[0].startsWith("2026-01-01T17:00:00.000000Z  task.transition  orchestrator  task:t1"));
    const since = await runBernstein(["audit", "show", "--since", "2026-01-02", "--json"], {
      cwd: root,
      env,
    });
    strictEqual(since.code, 0, since.stderr);
    const doc = JSON.parse(since.stdout);
    deepStrictEqual(
      doc.records.map((r: { record: { resource_id: string } }) => r.record.resource_id),
      [
        "t2",
        "t3",
      ],
    );
    deepStrictEqual([doc.records[0].segment, doc.records[0].line], ["2026-01-02.jsonl", 1]);
    strictEqual(doc.skipped_count, 0);
    const iso = await runBernstein(
      ["audit", "show", "--since", "2026-01-02T09:00:00Z", "--limit", "1", "--json"],
      { cwd: root, env },
    );
    deepStrictEqual(JSON.parse(iso.stdout).records.map((r: { line: number }) => r.line), [2]);
    const bad = await runBernstein(["audit", "show", "--since", "last week"], { cwd: root, env });
    strictEqual(bad.code, 2);
    ok(bad.stderr.includes("--since expects"), bad.stderr);
  });
});

Deno.test("audit show leaves out lines that do not authenticate and says so", async () => {
  await withTempDir(async (root) => {
    const { keyPath, segment } = await project(root);
    const text = await Deno.readTextFile(segment);
    await Deno.writeTextFile(segment, text.replace('"i": 0', '"i": 5'));
    const run = await runBernstein(["audit", "show"], {
      cwd: root,
      env: { BERNSTEIN_AUDIT_KEY_PATH: keyPath },
    });
    strictEqual(run.code, 0);
    strictEqual(run.stdout.trim(), "no audit records match");
    ok(
      run.stderr.includes("warning[audit.unauthenticated_lines]: 2026-01-01.jsonl:1:"),
      run.stderr,
    );
  });
});
