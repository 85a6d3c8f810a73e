// `bernstein lineage verify RUN_ID --receipt-hash sha256:…` (FORMATS.md §10): does a recovery
// step's failure receipt resolve on the run's intact spine? Reads only; the audit key is read,
// never created. Exit 0 yes, 2 no, 3 no audit key.
import type { CommandContext } from "./spec.ts";
import { stringArg, stringFlag } from "./spec.ts";
import { sddFolder } from "../io/mod.ts";

/** `lineage verify`. */
export async function verifyReceiptCommand(ctx: CommandContext): Promise<number> {
  const { join, resolve } = await import("node:path");
  const { findProject } = await import("../config/mod.ts");
  const { readAuditKey, resolveAuditKeyPath } = await import("../audit/mod.ts");
  const store = await import("../lineage/store/mod.ts");
  const runId = stringArg(ctx, "run") as string;
  const receiptHash = stringFlag(ctx, "receipt-hash");
  if (receiptHash === undefined) {
    const { UsageError } = await import("../errors/mod.ts");
    throw new UsageError("cli.missing_flag", "--receipt-hash sha256:<entry hash> is required", {
      hint: "the recovery task's metadata.recovery_receipt_hash ('bernstein task show ID')",
    });
  }
  const receiptFlag = stringFlag(ctx, "receipt-file");
  const keyFlag = stringFlag(ctx, "key-path");
  const project = await findProject(ctx.cwd);
  const fail = (message: string, extra: Record<string, unknown> = {}) => {
    if (ctx.json) {
      ctx.out.json({
        ok: false,
        run_id: runId,
        receipt_hash: receiptHash,
        ...extra,
        problems: [{ where: "", message }],
      });
    } else {
      ctx.out.line(message);
      ctx.out.line("FAIL: the receipt does not resolve");
    }
    return 2;
  };
  if (!/^sha256:[0-9a-f]{64}$/.test(receiptHash)) {
    return fail(`--receipt-hash must be sha256:<64 lowercase hex>, got '${receiptHash}'`);
  }
  try {
    store.checkSpineRunId(runId);
  } catch (error) {
    return fail((error as Error).message);
  }
  // Missing key: exit 3 (KeyMissingError), and nothing is created.
  const keyPath = keyFlag === undefined
    ? resolveAuditKeyPath(ctx.env).path
    : resolve(ctx.cwd, keyFlag);
  const key = await readAuditKey(keyPath);
  const r = await store.verifyRecoveryReceipt({
    paths: store.lineagePaths(project.sdd),
    runId,
    receiptHash,
    receiptFile: receiptFlag === undefined ? undefined : resolve(ctx.cwd, receiptFlag),
    auditKey: key.bytes,
  });
  const spine = join(sddFolder(project.sdd, "lineage"), runId, "spine.jsonl");
  if (ctx.json) {
    ctx.out.json({
      ok: r.ok,
      run_id: runId,
      receipt_hash: receiptHash,
      spine,
      entries: r.count,
      line: r.entry?.line ?? null,
      content_hash: r.entry?.content_hash ?? null,
      receipt_file: r.receiptFile ?? null,
      receipt: r.receipt ?? null,
      problems: r.problems,
    });
    return r.ok ? 0 : 2;
  }
  for (const p of r.problems) ctx.out.line(`${p.where}: ${p.message}`);
  if (!r.ok) {
    ctx.out.line(`FAIL: ${receiptHash} does not resolve on run ${runId}'s spine`);
    return 2;
  }
  const receipt = r.receipt as NonNullable<typeof r.receipt>;
  const entry = r.entry as NonNullable<typeof r.entry>;
  ctx.out.line(
    `${spine}: ${r.count} entr${r.count === 1 ? "y" : "ies"} chained and authenticated; ` +
      `entry ${entry.line} anchors ${entry.content_hash}`,
  );
  ctx.out.line(
    `receipt ${r.receiptFile}: ${receipt.recovery_task} recovers ${receipt.source_task} ` +
      `(${receipt.source_status}; ${receipt.condition})`,
  );
  ctx.out.line(`PASS: the receipt resolves on an intact chain`);
  return 0;
}
