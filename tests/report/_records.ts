// Synthetic run records for the report tests: a small run written as audit events.
import type { JsonObject } from "../../src/canonical/mod.ts";
import {
  type RunEventRecord,
  type RunHeader,
  type RunRecords,
  tasksFromEvents,
  UNCHECKED,
} from "../../src/report/mod.ts";

const BASE = Date.UTC(2026, 0, 5, 10, 0, 0);

/** An audit timestamp `ms` after the run's start. */
export function at(ms: number): string {
  return new Date(BASE + ms).toISOString().replace("Z", "000Z");
}

/** One event. */
export function ev(
  ms: number,
  event_type: string,
  resource_type: string,
  resource_id: string,
  details: JsonObject = {},
  actor = "orchestrator",
): RunEventRecord {
  return { timestamp: at(ms), actor, event_type, resource_type, resource_id, details };
}

/** A task creation. */
export function created(
  ms: number,
  id: string,
  title: string,
  depends_on: string[] = [],
): RunEventRecord {
  return ev(ms, "task.created", "task", id, {
    title,
    role: "backend",
    to: "open",
    ...(depends_on.length > 0 ? { depends_on } : {}),
  });
}

/** A transition. */
export function moved(
  ms: number,
  id: string,
  from: string,
  to: string,
  reason = "",
): RunEventRecord {
  return ev(ms, "task.transition", "task", id, { from, to, reason });
}

/** The events of one attempt that merges: claim, spawn, exit, gate, merge. */
export function mergedAttempt(
  start: number,
  task: string,
  session: string,
  options: { attempt?: number; model?: string | null; cost?: number } = {},
): RunEventRecord[] {
  return [
    ev(start, "scheduler.claim", "task", task, {
      session,
      attempt: options.attempt ?? 1,
      adapter: "scripted",
    }),
    ev(start + 50, "agent.spawned", "agent", session, {
      task_id: task,
      adapter: "scripted",
      model: options.model ?? null,
      attachment_digests: [],
    }),
    ev(start + 1000, "agent.exited", "agent", session, {
      task_id: task,
      ok: true,
      exit_code: 0,
      turns: 2,
      tokens_in: 100,
      tokens_out: 20,
      cost_usd: options.cost ?? 0.01,
    }),
    moved(start + 1000, task, "in_progress", "done", "agent reported completion"),
    ev(start + 1200, "gate.result", "task", task, {
      gate: "run_config",
      ok: true,
      reason: "1 changed path(s), none protected",
      session,
    }),
    moved(start + 1400, task, "done", "closed", "merged abc"),
    ev(start + 1400, "merge.completed", "task", task, {
      session,
      sha: "a".repeat(40),
      files: ["src/x.ts"],
      branch: `agent/${session}`,
    }),
  ];
}

/** Records of a run from its events. */
export function recordsOf(
  events: RunEventRecord[],
  header: Partial<RunHeader> = {},
): RunRecords {
  return {
    header: {
      run_id: "brave-otter-3fa9c2",
      branch: "feature/x",
      goal: null,
      source: { kind: "plan", detail: "plan.yaml" },
      host: "test",
      started_at: at(0),
      max_agents: 2,
      state: "finished",
      ...header,
    },
    events,
    tasks: tasksFromEvents(events),
    summary: null,
    logTails: {},
    verification: UNCHECKED,
  };
}
