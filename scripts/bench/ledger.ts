// Work ledger: cost per appended row (lock + canon-ascii + SHA-256 + fsync) — the run loop
// pays it several times per task — and verification / scorecard derivation of a long ledger.
import { join } from "node:path";
import { FakeClock } from "../../src/io/mod.ts";
import {
  deriveScorecard,
  ledgerPath,
  LedgerWriter,
  verifyLedgerBytes,
} from "../../src/ledger/mod.ts";
import { peakRssMiB, report } from "./_report.ts";

const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-ledger-" });
try {
  const sdd = join(dir, ".sdd");
  const clock = new FakeClock();
  const ledger = await LedgerWriter.open(sdd, "bench-run-000001", { clock });
  await ledger.append({ kind: "run.open", payload: { branch: "feature", host: "bench" } });
  const appends = 2000;
  const t0 = performance.now();
  for (let i = 0; i < appends; i++) {
    clock.advance(7);
    const id = `task-${Math.floor(i / 4)}`;
    const kind = (["task.scheduled", "task.started", "task.completed", "task.completed"] as const)[
      i % 4
    ];
    await ledger.append({
      kind,
      task_id: id,
      payload: { title: `Step ${i}`, merged: true, cost_usd: 0.01, files: ["src/a.ts"] },
    });
  }
  const appendMs = (performance.now() - t0) / appends;
  await ledger.append({ kind: "run.closed", payload: { reason: "quiescent" } });
  const bytes = await Deno.readFile(ledgerPath(sdd, "bench-run-000001"));
  const t1 = performance.now();
  const check = verifyLedgerBytes(bytes);
  const verifyMs = performance.now() - t1;
  if (!check.ok) throw new Error(`bench ledger does not verify: ${check.broken?.reason}`);
  const t2 = performance.now();
  deriveScorecard("bench-run-000001", check.rows);
  const deriveMs = performance.now() - t2;
  report("ledger", "append (lock+hash+fsync)", appendMs * 1000, `µs/row (${appends} rows)`);
  report(
    "ledger",
    "verify",
    (verifyMs / check.rows.length) * 1000,
    `µs/row (${check.rows.length} rows)`,
  );
  report("ledger", "derive scorecard", deriveMs, `ms (${check.rows.length} rows)`);
  report("ledger", "peak RSS", peakRssMiB(), "MiB");
} finally {
  await Deno.remove(dir, { recursive: true });
}
