// The parts the report and the dashboard share: headline, verification, tasks, cost, gates,
// refused merges, attachments and notices. Each takes the run model and returns HTML in which
// every value is escaped.
import { badge, clip, clockTime, esc, num, stateStyle, table, usd } from "./_html.ts";
import type { RunModel } from "./model.ts";
import { formatDuration } from "./timeline.ts";

function sourceText(model: RunModel): string {
  const { goal, source } = model.run;
  if (goal) return `goal: ${goal}`;
  if (source === null) return "source unknown";
  return source.kind === "plan" ? `plan ${source.detail}` : `${source.kind} ${source.detail}`;
}

/** The run's headline: id, state, health, where the work came from, counts, time, cost. */
export function headline(model: RunModel): string {
  const r = model.run;
  const c = model.counts;
  const state = r.state === "running"
    ? `<span class="badge b-run">running</span>`
    : r.state === "interrupted"
    ? `<span class="badge b-warn">interrupted</span>`
    : `<span class="badge b-idle">finished</span>`;
  const health = `<span class="badge ${r.health === "HEALTHY" ? "b-ok" : "b-bad"}">${
    esc(r.health.toLowerCase())
  }</span>`;
  const stat = (value: string, label: string, cls = "") =>
    `<div class="stat${cls ? " " + cls : ""}"><dt>${esc(label)}</dt><dd>${value}</dd></div>`;
  const elapsed = r.state === "running" && r.started_at
    ? `<span data-since="${esc(r.started_at)}">${esc(formatDuration(r.elapsed_s * 1000))}</span>`
    : esc(formatDuration(r.elapsed_s * 1000));
  return `<div class="headline"><h1><span class="muted">run</span> ${
    esc(r.run_id)
  } ${state} ${health}</h1>
<p class="lede">${esc(clip(sourceText(model), 400))}${
    r.branch ? ` → <code>${esc(r.branch)}</code>` : ""
  } · ${esc(r.reason)}</p>
<dl class="stats">
${stat(num(c.tasks), "tasks")}
${stat(num(c.merged), "merged", "s-ok")}
${stat(num(c.refused), "refused", c.refused > 0 ? "s-bad" : "")}
${stat(num(c.failed), "failed", c.failed > 0 ? "s-bad" : "")}
${stat(num(c.running), "agents running", c.running > 0 ? "s-run" : "")}
${stat(elapsed, "elapsed")}
${stat(model.cost.reported ? esc(usd(model.cost.total_usd)) : "not reported", "cost so far")}
</dl></div>`;
}

/** The verification done at report time. */
export function verificationList(model: RunModel): string {
  const v = model.verification;
  const row = (name: string, check: { status: string; detail: string }) => {
    const cls = check.status === "pass" ? "ok" : check.status === "fail" ? "bad" : "idle";
    return `<li><span class="badge b-${cls}">${esc(check.status)}</span> <strong>${
      esc(name)
    }</strong> ${esc(check.detail)}</li>`;
  };
  return `<ul class="checks">${row("audit chain", v.audit)}${row("lineage gate", v.lineage)}${
    row("scorecard", v.scorecard)
  }</ul>`;
}

/** Every task with its state, attempts and what they cost. */
export function tasksTable(model: RunModel, options: { anchors?: boolean } = {}): string {
  const rows = model.tasks.map((t) => [
    `<code${options.anchors ? ` id="row-${esc(t.id)}"` : ""}>${esc(t.id)}</code>`,
    esc(clip(t.title, 80)),
    badge(t.status),
    esc(t.stage ?? "—"),
    num(t.attempts),
    esc(t.adapter ? `${t.adapter}${t.model ? "/" + t.model : ""}` : "—"),
    num(t.turns),
    t.tokens_in === null && t.tokens_out === null
      ? "—"
      : `${num(t.tokens_in)} / ${num(t.tokens_out)}`,
    esc(usd(t.cost_usd)),
    t.merged_sha
      ? `<code>${esc(t.merged_sha.slice(0, 12))}</code> ${esc(num(t.files.length))} file(s)`
      : esc(clip(t.terminal_reason ?? "", 120)),
  ]);
  return table(
    "Tasks",
    [
      "task",
      "title",
      "state",
      "stage",
      "attempts",
      "adapter",
      "turns",
      "tokens in / out",
      "cost",
      "merge / reason",
    ],
    rows,
    "No task yet.",
  );
}

/** Cost and tokens per adapter and model. */
export function costTable(model: RunModel): string {
  const rows = model.cost.by_adapter.map((c) => [
    esc(c.adapter),
    esc(c.model),
    num(c.runs),
    num(c.turns),
    num(c.tokens_in),
    num(c.tokens_out),
    esc(usd(c.cost_usd)),
  ]);
  if (rows.length > 0) {
    rows.push([
      "<strong>total</strong>",
      "",
      num(model.cost.by_adapter.reduce((s, c) => s + c.runs, 0)),
      "",
      "",
      "",
      `<strong>${esc(model.cost.reported ? usd(model.cost.total_usd) : "not reported")}</strong>`,
    ]);
  }
  return table(
    "Cost per adapter",
    ["adapter", "model", "runs", "turns", "tokens in", "tokens out", "cost"],
    rows,
    "No agent has finished yet.",
  );
}

/** Every quality gate result. */
export function gatesTable(model: RunModel): string {
  const rows = model.gates.map((g) => [
    `<code>${esc(g.task_id)}</code>`,
    esc(g.gate),
    `<span class="badge b-${g.ok ? "ok" : "bad"}">${g.ok ? "pass" : "fail"}</span>`,
    esc(clip(g.reason, 200)) +
    (g.output_tail
      ? `<details><summary>output</summary><pre>${esc(g.output_tail)}</pre></details>`
      : ""),
    esc(clockTime(g.at)),
  ]);
  return table(
    "Gate results",
    ["task", "gate", "result", "reason", "at (UTC)"],
    rows,
    "No gate ran.",
  );
}

/** Refused merges with their reasons; the work stays on the named branch. */
export function refusedList(model: RunModel): string {
  if (model.refused_merges.length === 0) {
    return `<p class="empty">No merge was refused.</p>`;
  }
  const items = model.refused_merges.map((r) => {
    const [first, ...rest] = r.detail.split("\n");
    const more = rest.join("\n").trim();
    return `<li class="refused" data-task="${esc(r.task_id)}"><p><code>${esc(r.task_id)}</code> ` +
      `<span class="badge b-bad">${esc(r.reason)}</span> <span class="reason">${
        esc(clip(first, 400))
      }</span></p><p class="muted">work kept on <code>${esc(r.branch)}</code> · ${
        esc(clockTime(r.at))
      } UTC</p>${
        more
          ? `<details><summary>details</summary><pre>${esc(clip(more, 4000))}</pre></details>`
          : ""
      }</li>`;
  });
  return `<ul class="refused-list">${items.join("\n")}</ul>`;
}

/** Attachments handed to agents, with their digests. */
export function attachmentsTable(model: RunModel): string {
  const rows = model.attachments.map((a) => [
    `<code>${esc(a.task_id ?? "—")}</code>`,
    esc(a.path ?? "(image)"),
    esc(a.mime),
    `<code class="digest">${esc(a.sha256)}</code>`,
    `<code>${esc(a.session)}</code>`,
  ]);
  return table(
    "Attachments",
    ["task", "path", "type", "sha256", "session"],
    rows,
    "No attachment was handed to an agent.",
  );
}

/** Every attempt in text: the accessible twin of the timeline. */
export function attemptsTable(model: RunModel): string {
  const rows = model.attempts.map((a) => {
    const duration = (a.phases.at(-1)?.end_ms ?? 0) - (a.phases[0]?.start_ms ?? 0);
    const flags = [a.retry ? "retry" : "", a.escalated ? "escalated" : ""].filter(Boolean).join(
      ", ",
    );
    return [
      `<code id="attempt-${esc(a.session)}">${esc(a.session)}</code>`,
      `<code>${esc(a.task_id)}</code>`,
      `${num(a.attempt)}${flags ? ` <span class="muted">(${esc(flags)})</span>` : ""}`,
      esc(`${a.adapter}${a.model ? "/" + a.model : ""}`),
      `slot ${a.lane + 1}`,
      esc(clockTime(a.claimed_at)),
      esc(formatDuration(duration)),
      `${badge(a.outcome)}${a.reason ? ` ${esc(clip(a.reason, 160))}` : ""}`,
      a.last_progress ? esc(clip(a.last_progress, 160)) : "—",
    ];
  });
  return table(
    "Attempts",
    [
      "session",
      "task",
      "attempt",
      "adapter",
      "lane",
      "claimed (UTC)",
      "took",
      "outcome",
      "last progress",
    ],
    rows,
    "No agent was started in this run.",
  );
}

/** Stalls, failed spawns, stops, the backstop and notifications nobody received. */
export function noticesList(model: RunModel): string {
  if (model.notices.length === 0) return `<p class="empty">Nothing unusual happened.</p>`;
  return `<ul class="notices">${
    model.notices.map((n) =>
      `<li class="${n.level}"><span class="muted">${esc(clockTime(n.at))}</span> ${
        esc(clip(n.message, 400))
      }</li>`
    ).join("")
  }</ul>`;
}

/** A one-line text summary of a state (for tests and screen readers). */
export function stateLabel(state: string): string {
  return stateStyle(state).label;
}
