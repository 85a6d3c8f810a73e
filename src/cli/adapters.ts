// `bernstein adapters …`: which agent CLIs are registered, installed, and still honour the
// flags their adapters rely on.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg } from "./spec.ts";

interface Setup {
  adapters: typeof import("../adapters/mod.ts");
  options: import("../adapters/mod.ts").InspectOptions;
}

async function setup(ctx: CommandContext): Promise<Setup> {
  const adapters = await import("../adapters/mod.ts");
  const cfg = await import("../config/mod.ts");
  const loaded = await cfg.loadConfig({ cwd: ctx.cwd, env: ctx.env });
  for (const p of loaded.problems) {
    if (p.severity === "error") {
      ctx.out.warn({
        code: p.code,
        message: `${p.message} (adapter settings from the configuration are not used)`,
        location: p.location,
      });
    }
  }
  const tuning = loaded.config?.tuning ?? cfg.DEFAULT_TUNING;
  return {
    adapters,
    options: {
      lookup: adapters.systemPathLookup(ctx.env, ctx.cwd),
      settings: loaded.config?.adapters ?? {},
      env: ctx.env,
      timeoutMs: tuning.agent.probe_timeout_s * 1000,
    },
  };
}

function yesNo(v: boolean): string {
  return v ? "yes" : "no";
}

async function list(ctx: CommandContext): Promise<number> {
  const { adapters, options } = await setup(ctx);
  const reports = await adapters.inspectAdapters(options);
  const auto = adapters.AUTO_PREFERENCE.find((n) => reports.find((r) => r.name === n)?.available);
  if (ctx.json) {
    const seat = await import("../attachments/mod.ts");
    // The attachment seat's descriptor: the kinds each adapter takes (with its channel, image
    // and document types and sizes in its capabilities), and the limits for every adapter.
    const withKinds = reports.map((r) => ({
      ...r,
      capabilities: { ...r.capabilities, attachment_kinds: seat.attachmentKinds(r.capabilities) },
    }));
    ctx.out.json({
      adapters: withKinds,
      attachments: seat.seatDescriptor(),
      auto_preference: [...adapters.AUTO_PREFERENCE],
      auto: auto ?? null,
    });
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const rows = [["ADAPTER", "FOUND", "VERSION", "MULTIMODAL", "RESUME", "COST", "PROMPT"]];
  for (const r of reports) {
    rows.push([
      r.name,
      r.available ? "yes" : "no",
      r.version ?? (r.available ? `? (${r.version_error ?? "unknown"})` : "-"),
      yesNo(r.capabilities.multimodal),
      yesNo(r.capabilities.resume),
      yesNo(r.capabilities.cost_reporting),
      r.prompt,
    ]);
  }
  for (const row of alignColumns(rows)) ctx.out.line(row);
  ctx.out.line();
  ctx.out.line(
    `cli: auto → ${auto ?? "none available"} (order: ${adapters.AUTO_PREFERENCE.join(", ")})`,
  );
  return 0;
}

async function check(ctx: CommandContext): Promise<number> {
  const name = stringArg(ctx, "name") ?? "";
  const { adapters, options } = await setup(ctx);
  if (!adapters.isAdapterName(name)) {
    const { UsageError, closestMatch } = await import("../errors/mod.ts");
    const near = closestMatch(name, adapters.ADAPTER_NAMES);
    throw new UsageError("adapter.unknown", `unknown adapter '${name}'`, {
      hint: `${near ? `did you mean '${near}'? ` : ""}registered: ${
        adapters.ADAPTER_NAMES.join(", ")
      }`,
    });
  }
  const result = await adapters.checkAdapter(name, options);
  if (ctx.json) {
    ctx.out.json(result);
    return result.ok ? 0 : 1;
  }
  if (!result.available) {
    ctx.out.error(
      new adapters.AdapterError("adapter.unavailable", `${name}: ${result.reason}`),
    );
    return 1;
  }
  ctx.out.line(`${name}: ${result.path}`);
  ctx.out.line(
    result.version !== null
      ? `  version  ${result.version}`
      : `  version  FAILED: ${result.version_error}`,
  );
  for (const f of result.flags) {
    const mark = f.present ? "ok     " : "MISSING";
    const detail = f.detail ? ` (${f.detail})` : "";
    ctx.out.line(`  ${mark}  ${f.flag}  via '${f.via}'${detail}`);
  }
  if (result.flags.length === 0) ctx.out.line("  (this adapter declares no flags)");
  if (result.missing.length > 0) {
    ctx.out.error(
      new adapters.AdapterError(
        "adapter.flag_drift",
        `${name} ${result.version ?? ""}: flag(s) vanished: ${result.missing.join(", ")}`,
        { hint: "the installed CLI changed; pin a known version or update the adapter" },
      ),
    );
  }
  ctx.out.line(result.ok ? "contract OK" : "contract FAILED");
  return result.ok ? 0 : 1;
}

/** `bernstein adapters list|check`. */
export const ADAPTERS_COMMANDS: CommandSpec[] = [
  {
    path: ["adapters", "list"],
    summary: "List every registered agent adapter: found on PATH, version, capabilities.",
    description: "Versions are probed under tuning.agent.probe_timeout_s in a throwaway HOME.\n" +
      "JSON: {adapters: [{name, summary, binary, available, path, reason, version,\n" +
      "version_error, prompt, capabilities: {multimodal, attachment_channel,\n" +
      "max_attachment_bytes, image_types, document_types, max_document_bytes, resume,\n" +
      "cost_reporting, token_reporting, turn_reporting, max_turns, endpoints,\n" +
      "attachment_kinds}}],\n" +
      "attachments: {kinds, max_per_task, max_text_chars, max_read_bytes, held: {image_types,\n" +
      "max_name_chars, max_text_bytes, max_bytes_per_task}}, auto_preference: [name],\n" +
      "auto: name|null}.",
    json: true,
    run: list,
  },
  {
    path: ["adapters", "check"],
    summary: "Check one adapter's CLI: binary on PATH, version probe, every relied-on flag.",
    description:
      "Resolves the binary on PATH, runs its version probe under a deadline and checks that\n" +
      "every flag the adapter relies on still appears in the installed CLI's help (subcommand\n" +
      "help where the flags live, e.g. 'codex exec --help'). Exit 1 when the binary is missing,\n" +
      "the version probe fails or any flag vanished (named in the output); exit 2 for an\n" +
      "unknown adapter name.\n" +
      "JSON: {name, available, path, reason, version, version_error, flags: [{flag, present,\n" +
      "via, detail}], missing: [flag], ok, summary, binary, prompt, capabilities}.",
    args: [{ name: "name", required: true, help: "adapter name (see 'bernstein adapters list')" }],
    json: true,
    examples: ["bernstein adapters check claude", "bernstein adapters check codex --json"],
    run: check,
  },
];
