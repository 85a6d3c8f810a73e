// `bernstein audit …`: verify the HMAC-chained audit log and show its authenticated records.
import type { AuditSealedTear, ScannedAuditRecord } from "../audit/mod.ts";
import type { Warning } from "../errors/mod.ts";
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import { CHECKPOINT_FLAG, EXPORT_FLAGS, OPERATOR_KEY_FLAG } from "./_checkpoint.ts";
import type { CommandContext, CommandSpec, FlagSpec } from "./spec.ts";
import { numberFlag, stringFlag, stringsFlag } from "./spec.ts";

const DIR_FLAG: FlagSpec = {
  name: "dir",
  type: "string",
  valueName: "DIR",
  help: "Audit folder to read (default: .sdd/audit of the project around the cwd).",
};

async function auditDir(ctx: CommandContext): Promise<string> {
  const { resolve, join } = await import("node:path");
  const given = stringFlag(ctx, "dir");
  if (given !== undefined) return resolve(ctx.cwd, given);
  const { findProject } = await import("../config/mod.ts");
  return join((await findProject(ctx.cwd)).sdd, "audit");
}

async function loadKey(ctx: CommandContext) {
  const audit = await import("../audit/mod.ts");
  // Verification never creates a key: a missing one is exit 3.
  return await audit.readAuditKey(audit.resolveAuditKeyPath(ctx.env).path);
}

async function verify(ctx: CommandContext): Promise<number> {
  const audit = await import("../audit/mod.ts");
  const { BernsteinError } = await import("../errors/mod.ts");
  const { join } = await import("node:path");
  const verifyLib = await import("../verify/mod.ts");
  const checkpoints = await import("./_checkpoint.ts");
  const dir = await auditDir(ctx);
  const key = await loadKey(ctx);
  const operator = await checkpoints.verificationKey(ctx, join(dir, ".."));
  const external = (await checkpoints.externalCheckpointFiles(ctx)).map((e) =>
    verifyLib.externalCheckpoint(e, { log: "audit", operatorPublicKey: operator.publicKey })
  );
  const report = await audit.verifyAuditLog(dir, key, {
    checkpoints: {
      ...await audit.readAuditCheckpoints(dir, operator.publicKey),
      external: external.flatMap((e) => "checkpoint" in e ? [e.checkpoint] : []),
      externalProblems: external.flatMap((e) => "problem" in e ? [e.problem] : []),
    },
  });
  // The fleet pillar (docs/FLEET.md): the chain's fleet records checked as a family.
  const fleet = await (await import("../fleet/mod.ts")).verifyFleet(join(dir, ".."), key);
  const ok = report.ok && fleet.ok;
  if (ctx.json) {
    ctx.out.json(
      {
        dir,
        key_path: key.path,
        operator_key: operator.source,
        ...report,
        ok,
        fleet,
      },
    );
    return ok ? 0 : 1;
  }
  for (const v of fleet.violations) {
    ctx.out.error(new BernsteinError(v.code, v.message, { location: v.where }));
  }
  for (const issue of report.issues) {
    const location = issue.line === null ? issue.segment : `${issue.segment}:${issue.line}`;
    ctx.out.error(new BernsteinError(issue.code, issue.message, { location }));
  }
  if (report.issue_count > report.issues.length) {
    ctx.out.note(`… and ${report.issue_count - report.issues.length} more issues (see --json)`);
  }
  for (const tear of report.tears) ctx.out.warn(sealedTearWarning(tear));
  if (report.torn_tail !== null) {
    const t = report.torn_tail;
    ctx.out.note(
      `torn tail: ${t.segment} ends with ${t.bytes} unsealed byte(s) at offset ${t.byte_offset}; ` +
        "the next append seals it",
    );
  }
  if (report.truncated !== null) {
    const t = report.truncated;
    ctx.out.warn({
      code: "audit.truncated",
      location: t.segment,
      message: `${t.bytes_lost} acknowledged byte(s) cut off: the last append left the segment ` +
        `at ${t.acknowledged_size} bytes (tip ${t.acknowledged_tip.slice(0, 16)}…), it has ${
          t.size === 0 ? "gone" : `${t.size}`
        }; the next append seals the loss into the chain`,
    });
  }
  const hmacFailures = report.issues.filter((i) => i.code === "audit.hmac_mismatch").length;
  if (report.records === 0 && hmacFailures > 0) {
    ctx.out.note(
      `no record verified with the key at ${key.path}; is it the key that wrote this log?`,
    );
  }
  const legacy = report.legacy_records > 0 ? ` (${report.legacy_records} legacy)` : "";
  const summary = `${report.segments.length} segment(s), ${report.records} record(s)${legacy}`;
  ctx.out.line(
    report.ok
      ? `PASS ${dir}: ${summary}${tearSummary(report.tears)}`
      : `FAIL (${report.issue_count} issue${
        report.issue_count === 1 ? "" : "s"
      }) ${dir}: ${summary}`,
  );
  if (report.checkpoint !== null) {
    ctx.out.line(checkpoints.checkpointSummary({ ...report.checkpoint, file: "" }, operator));
  }
  if (fleet.records > 0 || !fleet.ok) {
    ctx.out.line(
      `${fleet.ok ? "PASS" : `FAIL (${fleet.violations.length})`} fleet: ${fleet.records} ` +
        `record(s), ${fleet.variables} variable(s), ${fleet.blobs_checked} value(s) re-hashed`,
    );
  }
  return ok ? 0 : 1;
}

/** One sealed tear as a warning: where, what was torn, and the acknowledged bytes lost. */
function sealedTearWarning(tear: AuditSealedTear): Warning {
  const lines = tear.first_line === null
    ? tear.torn_bytes === 0 ? "no torn bytes left" : "a missing final newline"
    : tear.first_line === tear.last_line
    ? `line ${tear.first_line}`
    : `lines ${tear.first_line}-${tear.last_line}`;
  const lost = tear.bytes_lost === null
    ? ""
    : `; ${tear.bytes_lost} acknowledged byte(s) were cut off before it (tip ${
      (tear.acknowledged_tip ?? "").slice(0, 16)
    }… is lost)`;
  return {
    code: "audit.sealed_tear",
    location: `${tear.segment}:${tear.sealed_by_line}`,
    message: `torn tail (${lines}, ${tear.torn_bytes} bytes${
      tear.tear_class ? `, ${tear.tear_class}` : ""
    }) sealed by this chain.torn_record; the torn record is lost${lost}`,
  };
}

/** `, N sealed tear(s)` with the bytes lost, for the PASS line ("" when there are none). */
function tearSummary(tears: readonly AuditSealedTear[]): string {
  if (tears.length === 0) return "";
  const torn = tears.reduce((n, t) => n + t.torn_bytes, 0);
  const cut = tears.reduce((n, t) => n + (t.bytes_lost ?? 0), 0);
  return `, ${tears.length} sealed tear(s): ${torn} torn byte(s)` +
    (cut > 0 ? `, ${cut} acknowledged byte(s) cut off` : "");
}

async function checkpoint(ctx: CommandContext): Promise<number> {
  const { join } = await import("node:path");
  const audit = await import("../audit/mod.ts");
  const { writeCheckpointCommand } = await import("./_checkpoint.ts");
  const dir = await auditDir(ctx);
  return await writeCheckpointCommand(ctx, {
    sdd: join(dir, ".."),
    dir,
    log: "audit",
    logName: "the audit log",
    write: (signer) => audit.checkpointAuditLog(dir, signer),
  });
}

async function sinceMicros(text: string): Promise<bigint> {
  const { auditTimestampMicros } = await import("../audit/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text)
    ? auditTimestampMicros(`${text}T00:00:00.000000Z`)
    : /^\d{4}-\d{2}-\d{2}T/.test(text)
    ? auditTimestampMicros(text)
    : undefined;
  if (value === undefined) {
    throw new UsageError(
      "cli.bad_flag",
      `--since expects YYYY-MM-DD or an ISO 8601 timestamp, got '${text}'`,
    );
  }
  return value;
}

function compact(details: JsonObject, canonicalize: (v: JsonValue) => string): string {
  const text = canonicalize(details);
  return text.length > 120 ? text.slice(0, 119) + "…" : text;
}

async function show(ctx: CommandContext): Promise<number> {
  const audit = await import("../audit/mod.ts");
  const { canonicalize } = await import("../canonical/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const { alignColumns } = await import("./output.ts");
  const sinceText = stringFlag(ctx, "since");
  const since = sinceText === undefined ? undefined : await sinceMicros(sinceText);
  const limit = numberFlag(ctx, "limit");
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new UsageError("cli.bad_flag", `--limit expects a positive integer, got ${limit}`);
  }
  const types = stringsFlag(ctx, "type");
  const dir = await auditDir(ctx);
  const key = await loadKey(ctx);
  // Records stream through a filter, so only the rows to print are held in memory.
  const rows: ScannedAuditRecord[] = [];
  const scan = await audit.scanAuditLog(dir, key, {
    eventTypes: types.length > 0 ? types : undefined,
    onRecord(r) {
      if (since !== undefined) {
        const t = audit.auditTimestampMicros(r.record.timestamp);
        if (t === undefined || t < since) return;
      }
      rows.push(r);
      if (limit !== undefined && rows.length > limit) rows.shift();
    },
  });
  if (ctx.json) {
    ctx.out.json({
      dir,
      records: rows.map((r) => ({
        segment: r.segment,
        line: r.line,
        record: r.record,
      })),
      skipped_count: scan.skipped_count,
      skipped: scan.skipped,
    });
  } else if (rows.length === 0) {
    ctx.out.line("no audit records match");
  } else {
    const table = rows.map((r) => [
      r.record.timestamp,
      r.record.event_type,
      r.record.actor,
      `${r.record.resource_type}:${r.record.resource_id}`,
      compact(r.record.details, (v) => canonicalize(v, "canon")),
    ]);
    for (const line of alignColumns(table)) ctx.out.line(line);
  }
  if (scan.skipped_count > 0) {
    const first = scan.skipped[0];
    ctx.out.warn({
      code: "audit.unauthenticated_lines",
      location: `${first.segment}:${first.line}`,
      message: `${scan.skipped_count} line(s) not shown because they did not authenticate ` +
        `in chain order (first: ${first.reason})`,
      hint: "run 'bernstein audit verify'",
    });
  }
  return 0;
}

/** The `audit` group. */
export const AUDIT_COMMANDS: CommandSpec[] = [
  {
    path: ["audit", "verify"],
    summary: "Verify every segment of the HMAC-chained audit log.",
    description:
      "Checks every line of every segment in name order: strict UTF-8, py-default byte binding\n" +
      "(`non-canonical line bytes`), `missing trailing newline`, `prev_hmac mismatch`, `HMAC\n" +
      "mismatch` and false predecessor claims (details.prev_chain_digest). Torn tails sealed by\n" +
      "a matching chain.torn_record are warnings, not failures, listed on every verify with\n" +
      "the acknowledged bytes cut off before them (the tip witness .sdd/audit/.tip); a cut\n" +
      "not sealed yet is warned about as audit.truncated. Then the signed checkpoints\n" +
      "(checkpoints.jsonl): a deleted, inserted, reordered or truncated line fails, naming the\n" +
      "checkpoint and the first differing leaf; lines after the latest are counted as not yet\n" +
      "checkpointed. Never creates a key.\n" +
      "Exit: 0 clean, 1 any issue, 3 audit key missing.\n" +
      "JSON: {ok, dir, key_path, operator_key, segments: [{name, lines, bytes, records}],\n" +
      "records, legacy_records, tip, issues: [{segment, line, code, message}], issue_count,\n" +
      "tears: [{segment, first_line, last_line, region_offset, byte_offset, torn_bytes,\n" +
      "tear_class, sealed_by_line, bytes_lost, acknowledged_tip}], torn_tail: {segment,\n" +
      "byte_offset, bytes} | null, truncated: {segment, acknowledged_size, size, bytes_lost,\n" +
      "acknowledged_tip} | null,\n" +
      "checkpoint: {checkpoints, verified_signatures, matched, external, latest: {where, size,\n" +
      "root, ts} | null, not_checkpointed}}.",
    flags: [DIR_FLAG, OPERATOR_KEY_FLAG, CHECKPOINT_FLAG],
    json: true,
    examples: ["bernstein audit verify", "bernstein audit verify --json"],
    run: verify,
  },
  {
    path: ["audit", "checkpoint"],
    summary: "Sign a checkpoint of the audit log (RFC 9162 root of every line).",
    description:
      "Appends {log, root, size, ts}, signed by the operator key (.sdd/keys/operator.key,\n" +
      "created when missing), to .sdd/audit/checkpoints.jsonl and the covered line digests to\n" +
      "checkpoint-leaves.bin, under the chain lock. Nothing is written when the log has not\n" +
      "grown. --out / --from as for 'bernstein lineage checkpoint'.\n" +
      "JSON: {log, created, line, checkpoint: {log, root, size, ts, signature},\n" +
      "operator_fingerprint, out, consistency_from: [size]}.",
    flags: [...EXPORT_FLAGS, DIR_FLAG],
    json: true,
    examples: ["bernstein audit checkpoint --out audit-now.json"],
    run: checkpoint,
  },
  {
    path: ["audit", "show"],
    summary: "List the audit records that authenticate in chain order.",
    description:
      "Only records whose HMAC verifies and that link to the previous shown record are listed;\n" +
      "a warning counts the lines left out. Needs the audit key (exit 3 when missing).\n" +
      "JSON: {dir, records: [{segment, line, record}], skipped_count,\n" +
      "skipped: [{segment, line, reason}]}.",
    flags: [
      {
        name: "type",
        type: "string",
        multiple: true,
        valueName: "EVENT_TYPE",
        help: "Only this event type.",
      },
      {
        name: "since",
        type: "string",
        valueName: "WHEN",
        help: "Only records at or after YYYY-MM-DD (UTC) or an ISO 8601 timestamp.",
      },
      { name: "limit", type: "number", valueName: "N", help: "Only the last N matching records." },
      DIR_FLAG,
    ],
    json: true,
    examples: [
      "bernstein audit show --type task.transition --since 2026-01-01",
      "bernstein audit show --json --limit 20",
    ],
    run: show,
  },
];
