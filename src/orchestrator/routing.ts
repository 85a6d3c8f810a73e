/**
 * Routing recovery steps (plan conditions): when the scheduler says a planned recovery step's
 * upstream has ended, its condition is evaluated against the upstream's outcome. When it holds,
 * the failure receipt (FORMATS.md §10) is written under its content hash, recorded on the run's
 * spine, stamped on the step (`metadata.recovery_receipt_hash`) and the step opens; otherwise the
 * step is skipped (cancelled, `metadata.skipped`). Receipts hold nothing that depends on the
 * wall clock or the run's random names: two runs over identical fixtures write identical bytes.
 */
import { type JsonObject, type JsonValue, jsonValueOf } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { runTag } from "../ledger/mod.ts";
import { type FailureReceipt, RECEIPT_SCHEMA } from "../lineage/mod.ts";
import { appendSpineEntry, type LineagePaths, writeReceipt } from "../lineage/store/mod.ts";
import { type ConditionContext, evaluateCondition, parseCondition } from "../plan/mod.ts";
import { DEAD_END_STATUSES, type Task, type TaskStore } from "../tasks/mod.ts";
import { type Recorder, recordsOf, type RunFact } from "./recorder.ts";
import { isSkipped } from "./scheduler.ts";

/** Events kept per task for a receipt's journal tail. */
export const JOURNAL_TAIL = 20;
/** Characters of a check's output kept in a receipt. */
const OUTPUT_TAIL = 2000;

/** What the router works with. */
export interface RouterDeps {
  /** Run id (and its tag, both left out of receipts). */
  runId: string;
  /** Project root (paths under it are written relative in receipts). */
  root: string;
  /** Task store. */
  store: TaskStore;
  /** Where facts are recorded (and observed, for the journal). */
  recorder: Recorder;
  /** The lineage folder (receipts, the run's spine). */
  lineage: LineagePaths;
  /** The audit key K (the spine's HMAC key is derived from it). */
  auditKey: () => Promise<Uint8Array>;
}

interface GateRow {
  gate: string;
  ok: boolean;
  reason: string;
  output_tail: string;
}

const DEAD_END: ReadonlySet<string> = new Set(DEAD_END_STATUSES);

/** The status of an ended task in the condition language's words. */
export function conditionStatus(t: Pick<Task, "status" | "metadata">): string {
  if (t.status === "closed") return "done";
  if (isSkipped(t)) return "skipped";
  if (t.status === "cancelled") return "cancelled";
  if (DEAD_END.has(t.status)) return "failed";
  return t.status;
}

// Which of an aggregated upstream (a stage's steps) a condition is about: the first failure,
// then the first cancellation, then the first skip, else the first step.
const PRECEDENCE = ["failed", "cancelled", "skipped", "done"];

/** Routes recovery steps and keeps, per task, what their receipts say. */
export class RecoveryRouter {
  readonly #deps: RouterDeps;
  readonly #journal = new Map<string, JsonObject[]>();
  readonly #gates = new Map<string, GateRow[]>();
  readonly #failure = new Map<string, { code: string; detail: string }>();
  readonly #scrub: (text: string) => string;

  constructor(deps: RouterDeps) {
    this.#deps = deps;
    const tag = runTag(deps.runId);
    const root = deps.root.replace(/\/+$/, "");
    this.#scrub = (text) =>
      text.split(root).join("<root>").split(deps.runId).join("<run>").replace(
        new RegExp(`${tag}(r\\d+)?`, "g"),
        "<run>",
      );
    deps.recorder.on((fact) => this.#observe(fact));
  }

  /** Keeps a fact's progress event (without run names) and its checks, per task. */
  #observe(fact: RunFact): void {
    const taskId = "taskId" in fact ? fact.taskId : undefined;
    if (taskId === undefined) return;
    if (fact.kind === "task.claimed") this.#gates.delete(taskId);
    if (fact.kind === "gate.result") {
      const rows = this.#gates.get(taskId) ?? [];
      rows.push({
        gate: fact.gate.gate,
        ok: fact.gate.ok,
        reason: this.#scrub(fact.gate.reason),
        output_tail: this.#scrub((fact.gate.output ?? "").slice(-OUTPUT_TAIL)),
      });
      this.#gates.set(taskId, rows);
    }
    if (fact.kind === "task.failed") {
      this.#failure.set(taskId, { code: fact.code, detail: this.#scrub(fact.detail) });
    }
    const progress = recordsOf(fact).progress;
    if (progress === undefined) return;
    const event = this.#clean(progress as JsonObject);
    const list = this.#journal.get(taskId) ?? [];
    list.push(event);
    if (list.length > JOURNAL_TAIL) list.splice(0, list.length - JOURNAL_TAIL);
    this.#journal.set(taskId, list);
  }

  /** An event without session names, commit ids or process ids, run names scrubbed. */
  #clean(event: JsonObject): JsonObject {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(event)) {
      if (v === undefined || ["session", "sha", "pid", "url", "worker"].includes(k)) continue;
      out[k] = this.#cleanValue(v);
    }
    return out;
  }

  #cleanValue(v: JsonValue): JsonValue {
    if (typeof v === "string") return this.#scrub(v);
    if (Array.isArray(v)) return v.map((x) => this.#cleanValue(x));
    if (v !== null && typeof v === "object") return this.#clean(v as JsonObject);
    return v;
  }

  /** What a condition reads about an ended task. */
  #context(t: Task): ConditionContext {
    const status = conditionStatus(t);
    const gates = this.#gates.get(t.id) ?? [];
    const failedGate = [...gates].reverse().find((g) => !g.ok);
    const result = this.#scrub(
      status === "done" ? t.result_summary ?? "" : t.terminal_reason ?? "",
    );
    const output = failedGate?.output_tail ||
      (status === "failed" ? this.#failure.get(t.id)?.detail ?? "" : "");
    return { status, result, output: output.slice(-OUTPUT_TAIL) };
  }

  /**
   * Routes one planned recovery step whose upstream ended: opens it with its receipt when the
   * condition holds, skips it otherwise.
   */
  async route(taskId: string, tasks: readonly Task[]): Promise<void> {
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const task = byId.get(taskId);
    if (task === undefined || task.status !== "planned") return;
    const meta = task.metadata.condition as JsonObject;
    const expr = String(meta.expr ?? "");
    const stage = typeof meta.stage === "string" ? meta.stage : null;
    const upstream = (meta.on as string[]).map((id) => byId.get(id));
    const missing = (meta.on as string[]).find((_, i) => upstream[i] === undefined);
    if (missing !== undefined) {
      await this.#skip(task, `condition not checked: upstream ${missing} does not exist`);
      return;
    }
    const ended = (upstream as Task[]).map((t) => ({ t, status: conditionStatus(t) }));
    const source = PRECEDENCE.map((s) => ended.find((e) => e.status === s)).find((e) => e) ??
      ended[0];
    const context = this.#context(source.t);
    const parsed = parseCondition(expr);
    if (!parsed.ok) {
      await this.#skip(task, `condition '${expr}' does not parse: ${parsed.problem}`);
      return;
    }
    const what = stage === null ? source.t.id : `stage ${stage} (${source.t.id})`;
    if (!evaluateCondition(parsed.condition, context)) {
      await this.#skip(task, `condition not met: ${expr} (${what} ended ${context.status})`);
      return;
    }
    const receipt: FailureReceipt = {
      schema: RECEIPT_SCHEMA,
      source_task: source.t.id,
      source_status: context.status,
      source_stage: stage,
      recovery_task: task.id,
      condition: expr,
      condition_context: context,
      gate_report: this.#gateReport(source.t),
      journal_tail: [...(this.#journal.get(source.t.id) ?? [])],
    };
    const written = await writeReceipt(this.#deps.lineage, receipt);
    const entry = await appendSpineEntry(this.#deps.lineage, this.#deps.runId, {
      artifact_path: written.repoPath,
      content_hash: `sha256:${written.hex}`,
      actor: "orchestrator",
      step_id: `failure-receipt:${task.id}`,
      model: "",
      // No wall clock: identical runs give identical entries (the audit log has the time).
      timestamp: 0,
    }, await this.#auditKey());
    await this.#deps.store.transition(task.id, "open", {
      actor: "orchestrator",
      reason: `recovers ${what}: ${expr}`,
      metadata: {
        recovery_receipt_hash: entry.entry_hash,
        recovery: {
          source_task: source.t.id,
          source_status: context.status,
          condition: expr,
          receipt: written.repoPath,
          result: context.result.slice(0, 2000),
          output: context.output,
        },
      },
    });
    await this.#deps.recorder.record({
      kind: "task.routed",
      taskId: task.id,
      source: source.t.id,
      sourceStatus: context.status,
      condition: expr,
      receiptHash: entry.entry_hash,
      receipt: written.repoPath,
    });
  }

  async #auditKey(): Promise<Uint8Array> {
    try {
      return await this.#deps.auditKey();
    } catch (error) {
      throw new BernsteinError(
        "run.receipt_key",
        `no audit key to record the failure receipt on the run's spine: ${
          (error as Error).message
        }`,
        { cause: error },
      );
    }
  }

  /** The failing attempt's checks: its gate results and how it failed. */
  #gateReport(t: Task): JsonValue {
    const gates = this.#gates.get(t.id) ?? [];
    const failure = this.#failure.get(t.id);
    if (gates.length === 0 && failure === undefined) return null;
    return jsonValueOf({
      gates,
      failure: failure === undefined ? null : { code: failure.code, detail: failure.detail },
    });
  }

  async #skip(task: Task, reason: string): Promise<void> {
    await this.#deps.store.transition(task.id, "cancelled", {
      actor: "orchestrator",
      reason: `skipped: ${reason}`,
      metadata: { skipped: true },
    });
    await this.#deps.recorder.record({ kind: "task.skipped", taskId: task.id, reason });
  }

  /** An open task whose dependency was skipped: skipped too. */
  async skipDependent(taskId: string, reason: string): Promise<void> {
    await this.#deps.store.transition(taskId, "cancelled", {
      actor: "orchestrator",
      reason: `skipped: ${reason}`,
      metadata: { skipped: true },
    });
    await this.#deps.recorder.record({ kind: "task.skipped", taskId, reason });
  }
}
