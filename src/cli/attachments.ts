// `bernstein attachments export`: a run's attachments for an auditor (FORMATS.md §7.1), checked
// offline with `bernstein-verify attachments DIR`.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg, stringFlag } from "./spec.ts";
import { sddFolder } from "../io/mod.ts";

async function exportCommand(ctx: CommandContext): Promise<number> {
  const { resolve, relative } = await import("node:path");
  const { findProject } = await import("../config/mod.ts");
  const audit = await import("../audit/mod.ts");
  const { CasStore } = await import("../cas/mod.ts");
  const io = await import("../io/mod.ts");
  const attachments = await import("../attachments/mod.ts");
  const runId = io.checkRunId(stringArg(ctx, "run-id") ?? "");
  const outFlag = stringFlag(ctx, "out");
  if (outFlag === undefined) {
    const { UsageError } = await import("../errors/mod.ts");
    throw new UsageError(
      "cli.missing_flag",
      "attachments export needs --out DIR (a new or empty folder)",
    );
  }
  const out = resolve(ctx.cwd, outFlag);
  const paths = await findProject(ctx.cwd);
  const auditKey = await audit.readAuditKey(audit.resolveAuditKeyPath(ctx.env).path);
  const summary = await attachments.exportRunAttachments({
    sdd: paths.sdd,
    runId,
    auditKey,
    cas: new CasStore(sddFolder(paths.sdd, "cas")),
    out,
  });
  if (ctx.json) {
    ctx.out.json({ out, ...summary });
    return 0;
  }
  ctx.out.line(
    `exported run ${runId} to ${relative(ctx.cwd, out) || "."}: ${summary.items} attested ` +
      `byte string(s), ${summary.events} attach event(s), ${summary.spawns} spawn(s), ` +
      `${summary.lineage_entries} lineage entr${summary.lineage_entries === 1 ? "y" : "ies"}`,
  );
  ctx.out.line(`check it offline: bernstein-verify attachments ${relative(ctx.cwd, out) || "."}`);
  return 0;
}

/** `bernstein attachments …`. */
export const ATTACHMENTS_COMMANDS: CommandSpec[] = [
  {
    path: ["attachments", "export"],
    summary: "Export what each agent of a run was shown: attach events, bytes, manifest.",
    description:
      "Writes into --out (new or empty): manifest.json (each spawn's blocks in prompt order,\n" +
      "the report rows), bytes/<sha256> (the attested bytes from CAS, re-hashed on read),\n" +
      "events.jsonl (the run's multimodal.attach audit records, read through the authenticated\n" +
      "scan) and lineage.jsonl (lineage entries carrying the digests). FORMATS.md §7.1.\n" +
      "bernstein-verify attachments DIR checks it offline.\n" +
      "JSON: {out, items, events, spawns, lineage_entries}.",
    args: [{ name: "run-id", required: true, help: "Run id, e.g. brave-otter-3fa9c2." }],
    flags: [{
      name: "out",
      type: "string",
      valueName: "DIR",
      help: "Folder to write (absent or empty).",
    }],
    json: true,
    examples: ["bernstein attachments export brave-otter-3fa9c2 --out audit/attachments"],
    run: exportCommand,
  },
];
