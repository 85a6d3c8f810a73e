// `bernstein compliance …`: the EU AI Act Article 12 compliance pack an auditor verifies
// offline with `bernstein-verify pack`.
import type { Warning } from "../errors/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, stringFlag } from "./spec.ts";
import { sddFolder } from "../io/mod.ts";

const WARNINGS_PER_CODE = 10;

function printWarnings(ctx: CommandContext, warnings: readonly Warning[]): void {
  const byCode = new Map<Warning["code"], Warning[]>();
  for (const w of warnings) byCode.set(w.code, [...(byCode.get(w.code) ?? []), w]);
  for (const [code, list] of byCode) {
    for (const w of list.slice(0, WARNINGS_PER_CODE)) ctx.out.warn(w);
    if (list.length > WARNINGS_PER_CODE) {
      ctx.out.warn({ code, message: `… and ${list.length - WARNINGS_PER_CODE} more like these` });
    }
  }
}

/**
 * `--with-attachments`: the attachment exports (FORMATS.md §7.1) of every run that attested an
 * attachment in the period, as `attachments/<run>/…` pack members.
 */
async function attachmentMembers(
  ctx: CommandContext,
  sdd: string,
  since: string,
  until: string,
): Promise<{ members: Map<string, Uint8Array>; runs: string[] }> {
  const audit = await import("../audit/mod.ts");
  const { CasStore } = await import("../cas/mod.ts");
  const { collectPeriodAttachments } = await import("../attachments/mod.ts");
  const { attachmentMemberName } = await import("../pack_format/mod.ts");
  const auditKey = await audit.readAuditKey(audit.resolveAuditKeyPath(ctx.env).path);
  const exports = await collectPeriodAttachments({
    sdd,
    auditKey,
    cas: new CasStore(sddFolder(sdd, "cas")),
    since,
    until,
  });
  const members = new Map<string, Uint8Array>();
  for (const [runId, run] of exports) {
    for (const [file, bytes] of run.files) members.set(attachmentMemberName(runId, file), bytes);
  }
  return { members, runs: [...exports.keys()] };
}

async function pack(ctx: CommandContext): Promise<number> {
  const { resolve } = await import("node:path");
  const { UsageError } = await import("../errors/mod.ts");
  const { requireConfig } = await import("../config/mod.ts");
  const { openAtomicFile, systemRandom } = await import("../io/mod.ts");
  const { resolveBuildTime } = await import("../compliance/mod.ts");
  const store = await import("../compliance/project/mod.ts");
  const { packWindow } = await import("../pack_format/mod.ts");
  const { sha256Stream } = await import("../crypto/mod.ts");
  const { MAIN_BINARY, VERSION } = await import("../meta/mod.ts");

  const required = (name: string): string => {
    const v = stringFlag(ctx, name);
    if (v === undefined || v.trim() === "") {
      throw new UsageError("cli.missing_flag", `compliance pack: --${name} is required`, {
        hint: "bernstein compliance pack --since YYYY-MM-DD --until YYYY-MM-DD --org NAME " +
          "--output FILE.zip",
      });
    }
    return v;
  };
  const since = required("since");
  const until = required("until");
  const org = required("org").trim();
  const output = resolve(ctx.cwd, required("output"));
  if (packWindow(since, until) === undefined) {
    throw new UsageError(
      "compliance.bad_period",
      `--since ${since} --until ${until}: expected two real YYYY-MM-DD dates, since <= until`,
    );
  }
  const builtAt = resolveBuildTime({
    flag: stringFlag(ctx, "build-time"),
    sourceDateEpoch: ctx.env.get("SOURCE_DATE_EPOCH"),
    nowMs: Date.now(),
  });
  const info = await Deno.stat(output).catch(() => undefined);
  if (info !== undefined && !info.isFile) {
    throw new UsageError("compliance.bad_output", `--output ${output} exists and is not a file`);
  }
  const { config, loaded } = await requireConfig({ cwd: ctx.cwd, env: ctx.env });
  const sdd = loaded.project.sdd;
  const keyFlag = stringFlag(ctx, "operator-key");
  const key = keyFlag === undefined
    ? await store.ensureOperatorSigningKey(sdd, systemRandom)
    : await store.readOperatorSigningKey(resolve(ctx.cwd, keyFlag));
  const withAttachments = booleanFlag(ctx, "with-attachments")
    ? await attachmentMembers(ctx, sdd, since, until)
    : undefined;
  // The pack is written to a temp file as it is made and renamed over --output when whole.
  const out = await openAtomicFile(output, { mode: 0o644 });
  const hash = sha256Stream();
  const sink = bufferedSink((bytes) => {
    hash.update(bytes);
    out.write(bytes);
  });
  let built: import("../compliance/project/mod.ts").ProjectPackResult;
  try {
    built = await store.buildProjectPack({
      sdd,
      org,
      since,
      until,
      builtAt,
      builder: `${MAIN_BINARY} ${VERSION}`,
      compliance: config.compliance,
      signer: key.signer,
      env: ctx.env,
      ...(withAttachments ? { attachments: withAttachments.members } : {}),
      sink,
    });
    sink.flush();
    await out.commit();
  } catch (error) {
    await out.abort();
    throw error;
  }
  const bytes = built.bytes;
  const sha256 = hash.hexDigest();
  const { facts, warnings, externalParents, skipped } = built;
  // The self-check reads the file as written, as the auditor will.
  const check = await store.verifyWrittenPack(output, key.signer.publicKey);
  if (ctx.json) {
    ctx.out.json({
      output,
      bytes,
      sha256,
      entries: facts.entry_count,
      agents: facts.agents.length,
      artefacts: facts.artefact_count,
      period: { since, until },
      built_at: builtAt,
      operator: {
        key_path: key.path,
        created: key.created,
        kid: check.stats.operator_kid,
        fingerprint: key.fingerprint,
      },
      external_parents: externalParents.length,
      skipped_lines: skipped.length,
      ...(withAttachments ? { attachment_runs: withAttachments.runs } : {}),
      warnings: warnings.map((w) => ({ code: w.code, message: w.message })),
      self_check: {
        ok: check.ok,
        errors: check.errors.map((e) => ({ kind: e.kind, message: e.message })),
      },
    });
    return check.ok ? 0 : 1;
  }
  printWarnings(ctx, warnings);
  ctx.out.line(
    `wrote ${output} (${bytes} bytes): ${facts.entry_count} entries, ${facts.agents.length} agents, ${since}..${until}`,
  );
  if (withAttachments !== undefined) {
    const runs = withAttachments.runs;
    ctx.out.line(
      `attachments: ${runs.length} run export(s) under attachments/` +
        (runs.length > 0 ? ` (${runs.join(", ")})` : " (no run attached anything in the period)"),
    );
  }
  if (check.ok) {
    ctx.out.line("self-check: PASS (bernstein-verify pack passes on these bytes)");
  } else {
    const n = check.errors.length;
    ctx.out.line(`self-check: FAIL (${n} error${n === 1 ? "" : "s"}); the auditor will see:`);
    for (const e of check.errors.slice(0, 50)) ctx.out.line(`  ${e.message}`);
    if (check.errors.length > 50) ctx.out.line(`  … and ${check.errors.length - 50} more`);
  }
  ctx.out.line(`operator key: ${key.path}${key.created ? " (created now)" : ""}`);
  ctx.out.line(`operator key fingerprint (SHA-256): ${key.fingerprint}`);
  ctx.out.line(
    "hand the fingerprint to the auditor by another channel than the pack; they run:",
  );
  ctx.out.line(`  bernstein-verify pack <pack.zip> --operator-fingerprint ${key.fingerprint}`);
  return check.ok ? 0 : 1;
}

/** The `compliance` group. */
export const COMPLIANCE_COMMANDS: CommandSpec[] = [
  {
    path: ["compliance", "pack"],
    summary: "Build the signed Article 12 compliance pack (ZIP) for a period.",
    description:
      "Packs the lineage entries whose ts_ns falls in --since..--until (UTC days, both\n" +
      "included) with their signatures, the agents' cards, an evidence CSV, Article 12 facts,\n" +
      "a README and a guide for the auditor, and a manifest signed by the operator key\n" +
      "(.sdd/keys/operator.key, created on first use; or --operator-key). Both logs are\n" +
      "checkpointed first; the pack carries the lineage checkpoint and the proof that places\n" +
      "every entry in it. Same inputs and build time give the same bytes: built_at is the clock\n" +
      "unless --build-time or SOURCE_DATE_EPOCH fixes it (set one for reproducible builds).\n" +
      "The built pack is verified before the command ends: exit 0 when it passes,\n" +
      "1 when the auditor's verifier would fail it (the file is still written), 2 bad flags,\n" +
      "3 --operator-key file missing.\n" +
      "--with-attachments adds the attachment export (FORMATS.md §7.1) of every run that\n" +
      "attested an attachment in the period under attachments/<run>/ (listed in the signed\n" +
      "manifest; bernstein-verify pack checks bytes, events, spawns and lineage digests).\n" +
      "JSON: {output, bytes, sha256, entries, agents, artefacts, period: {since, until},\n" +
      "built_at, operator: {key_path, created, kid, fingerprint}, external_parents,\n" +
      "skipped_lines, attachment_runs (with --with-attachments), warnings: [{code, message}],\n" +
      "self_check: {ok, errors: [{kind, message}]}}.",
    flags: [
      { name: "since", type: "string", valueName: "YYYY-MM-DD", help: "First UTC day." },
      { name: "until", type: "string", valueName: "YYYY-MM-DD", help: "Last UTC day." },
      { name: "org", type: "string", valueName: "NAME", help: "Organisation named in the pack." },
      { name: "output", type: "string", valueName: "FILE.zip", help: "Where to write the pack." },
      {
        name: "operator-key",
        type: "string",
        valueName: "PEM",
        help: "Ed25519 PKCS#8 signing key (default .sdd/keys/operator.key).",
      },
      {
        name: "with-attachments",
        type: "boolean",
        help: "Carry the period's attachment exports (what each agent was shown).",
      },
      {
        name: "build-time",
        type: "string",
        valueName: "ISO",
        help: "Build time recorded in the pack (else SOURCE_DATE_EPOCH, else now).",
      },
    ],
    json: true,
    examples: [
      'bernstein compliance pack --since 2026-01-01 --until 2026-03-31 --org "Acme Bank" --output q1.zip',
    ],
    run: pack,
  },
];

/**
 * A pack sink that hands its bytes on in pieces of 256 KiB: the archive comes as three small
 * pieces per signature member (header, name, data), and one hash update and file write per
 * piece cost more than the copy.
 */
function bufferedSink(
  onBytes: (bytes: Uint8Array) => void,
): { write(bytes: Uint8Array): void; flush(): void } {
  const buffer = new Uint8Array(256 * 1024);
  let used = 0;
  const flush = () => {
    if (used > 0) onBytes(buffer.subarray(0, used));
    used = 0;
  };
  return {
    write(bytes) {
      if (used + bytes.length > buffer.length) flush();
      if (bytes.length >= buffer.length) onBytes(bytes);
      else {
        buffer.set(bytes, used);
        used += bytes.length;
      }
    },
    flush,
  };
}
