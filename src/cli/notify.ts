// `bernstein notify test`: send a test notification to the configured channels (or one) and
// say what each did — delivered, refused with the receiver's answer, or off and why.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringFlag } from "./spec.ts";

async function test(ctx: CommandContext): Promise<number> {
  const { UsageError } = await import("../errors/mod.ts");
  const { findProject, loadConfig } = await import("../config/mod.ts");
  const { CHANNEL_NAMES, sendTestNotification } = await import("../orchestrator/mod.ts");
  const { systemClock, systemRandom } = await import("../io/mod.ts");
  const channel = stringFlag(ctx, "channel");
  if (channel !== undefined && !(CHANNEL_NAMES as readonly string[]).includes(channel)) {
    throw new UsageError(
      "notify.unknown_channel",
      `--channel ${channel}: not a channel (${CHANNEL_NAMES.join(", ")})`,
    );
  }
  const project = await findProject(ctx.cwd);
  const loaded = await loadConfig({ cwd: ctx.cwd, env: ctx.env });
  if (loaded.config === undefined) {
    const first = loaded.problems.find((p) => p.severity === "error");
    throw new UsageError(
      "config.invalid",
      `the configuration does not validate: ${first?.location ?? ""} ${first?.message ?? ""}`
        .trim(),
      { hint: "bernstein config validate" },
    );
  }
  const report = await sendTestNotification({
    config: loaded.config,
    root: project.root,
    env: ctx.env,
    clock: systemClock,
    random: systemRandom,
    ...(channel === undefined ? {} : { channel }),
  });
  const delivered = report.results.filter((r) => r.outcome === "delivered").length;
  const ok = report.results.length > 0 && delivered === report.results.length;
  if (ctx.json) {
    ctx.out.json({
      ok,
      results: report.results.map((r) => ({ ...r })),
      off: report.off.map((w) => ({
        code: w.code,
        message: w.message,
        location: w.location ?? null,
      })),
    });
    return ok ? 0 : 1;
  }
  for (const r of report.results) {
    const why = [r.status, r.error].filter((x) => x !== null).join(": ");
    const mark = r.outcome === "delivered" ? ctx.out.style("green", "sent") : ctx.out.style(
      "red",
      r.outcome,
    );
    ctx.out.line(`${mark}  ${r.channel} → ${r.target}${why === "" ? "" : `  (${why})`}`);
  }
  for (const w of report.off) ctx.out.line(`${ctx.out.style("yellow", "off")}   ${w.message}`);
  if (report.results.length === 0 && report.off.length === 0) {
    ctx.out.line(
      channel === undefined
        ? "no notification channel is configured (notify.webhook, notify.email, notify.desktop)"
        : `notify.${channel} is not configured`,
    );
  }
  return ok ? 0 : 1;
}

/** `bernstein notify …`. */
export const NOTIFY_COMMANDS: CommandSpec[] = [
  {
    path: ["notify", "test"],
    summary: "Send a test notification to each configured channel and report what happened.",
    description:
      "Reads notify.* (and the variables its *_env keys name) as a run would, sends one\n" +
      "notify.test notification to every channel that is on (whatever its event filter), one\n" +
      "attempt each within tuning.notify.timeout_s, and prints each outcome with the\n" +
      "receiver's answer; channels that are off are listed with the reason. Nothing is\n" +
      "recorded. JSON: {ok, results: [{channel, target, id, event, outcome, attempts, status,\n" +
      "error}], off: [{code, message, location}]}. Exit codes: 0 every channel delivered ·\n" +
      "1 one failed, or none is on · 2 bad flag or configuration.",
    flags: [{
      name: "channel",
      type: "string",
      valueName: "C",
      help: "Only this channel: webhook, email or desktop.",
    }],
    json: true,
    examples: ["bernstein notify test", "bernstein notify test --channel email --json"],
    run: test,
  },
];
