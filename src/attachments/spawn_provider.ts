// The run loop's attachment provider: for each spawn, the run-wide attachments plus the task's
// own (read and checked at that moment), or — for a task that already had a spawn with
// attachments in this run (a retry, a crash resume) — exactly that spawn's blocks, rebuilt from
// CAS through the worktree-pinned resolver. Every block is stored in CAS and attested to the
// worker and its worktree; the digests are stamped on the task.
import { type AttachmentChannel, capabilitiesFor } from "../adapters/mod.ts";
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import type { CasStore } from "../cas/mod.ts";
import { BernsteinError, type Warning } from "../errors/mod.ts";
import { type Clock, type Random, resolveInside } from "../io/mod.ts";
import type { StampAttachmentsOptions, Task } from "../tasks/mod.ts";
import {
  type Declared,
  hostItem,
  type Item,
  runWideFor,
  type RunWideItem,
  screenDeclared,
  taskDeclarations,
  taskField,
  type TaskItems,
} from "./_declared.ts";
import { attestAttachment, type Delivery, worktreeIdOf } from "./attest.ts";
import { AttachmentUnreadableError, throwProblems } from "./errors.ts";
import { checkAdapterTakesMedia, checkAttachmentCount } from "./limits.ts";
import type { AttachmentRow, RunAttachmentRecord, SpawnEntry } from "./record.ts";
import type { AttachmentResolver } from "./resolver.ts";
import { DEFAULT_DENY } from "./source.ts";
import { refuseNonDirectSpawn } from "./spawn_path.ts";
import { parseAttachmentSpec } from "./spec.ts";
import { type ComposedPrompt, composeForChannel, copyPathOf } from "./delivery.ts";
import type { WireAttachment } from "./wire.ts";

/** The parts of the configuration attachments read. */
export interface AttachmentConfig {
  /** `attachments.deny`: repo-relative globs never attached. */
  attachments?: { deny: string[] };
}

/** Project paths. */
export interface AttachmentProject {
  /** Repository root. */
  root: string;
  /** `.sdd/`. */
  sdd: string;
}

/** What the per-spawn provider is built from, once the run's stores exist. */
export interface AttachmentProviderParts {
  /** Project paths. */
  project: AttachmentProject;
  /** Effective configuration. */
  config: AttachmentConfig;
  /** Audit chain (attestations are appended here). */
  audit: AuditSink;
  /** The audit key (the resolver authenticates the chain with it). */
  auditKey: AuditKey;
  /** Task store (digests are stamped on the task). */
  store: { stampAttachments(id: string, options: StampAttachmentsOptions): Promise<unknown> };
  /** Run id. */
  runId: string;
  /** The run is being resumed after a crash. */
  resumed: boolean;
  /** Adapter of a task when the spawn does not say. */
  adapterOf: (task: Task) => Promise<string>;
  /** Clock of CAS sidecars. */
  clock?: Clock;
  /** Randomness of CAS temp names. */
  random?: Random;
}

/** One spawn, as the run loop describes it. */
export interface SpawnInfo {
  /** Session id: the worker id of the attestations. */
  session: string;
  /** Worktree path relative to the root (it does not exist yet). */
  worktreeRelative: string;
  /** The folder `worktreeRelative` is relative to instead (`workspace.worktrees_dir`). */
  worktreesDir?: string;
  /** Turn (0 at spawn). */
  turnSeq: number;
  /** Adapter the spawn uses. */
  adapter: string;
  /** How the agent is started (only `direct-subprocess` carries attachments). */
  spawnPath: string;
}

/** A spawn's attachments: stored, attested and ready for the prompt. */
export interface SpawnAttachmentSet {
  /** Distinct digests in prompt order. */
  digests: string[];
  /** The prompt for the spawn's CLI: blocks, outcome list and body, and the channel's media. */
  compose(body: string): ComposedPrompt;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** What a provider is built from (RunAttachments.provider). */
export interface ProviderInit {
  parts: AttachmentProviderParts;
  cas: CasStore;
  installIdSig: string;
  resolver: AttachmentResolver;
  runWide: RunWideItem[];
  record: RunAttachmentRecord;
  save: () => Promise<void>;
  warn: (warning: Warning) => void;
  serialize: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * The run loop's attachment provider: for each spawn, the run-wide attachments plus the
 * task's own (read and checked now), or — for a task that already had a spawn with
 * attachments in this run (a retry, a crash resume) — exactly that spawn's blocks, rebuilt
 * from CAS through the worktree-pinned resolver. Every block is stored in CAS and attested to
 * the worker and its worktree; the digests are stamped on the task.
 */
export class SpawnAttachmentProvider {
  readonly #init: ProviderInit;

  constructor(init: ProviderInit) {
    this.#init = init;
  }

  /** The attachments of one spawn; undefined when it carries none. */
  forSpawn(task: Task, spawn: SpawnInfo): Promise<SpawnAttachmentSet | undefined> {
    return this.#init.serialize(() => this.#forSpawn(task, spawn));
  }

  #lastSpawn(taskId: string): SpawnEntry | undefined {
    return this.#init.record.spawns.filter((s) => s.task_id === taskId).at(-1);
  }

  async #fresh(task: Task): Promise<TaskItems> {
    const { parts } = this.#init;
    const root = parts.project.root;
    const deny = parts.config.attachments?.deny ?? DEFAULT_DENY;
    const items = runWideFor(task.id, this.#init.runWide);
    const field = taskField(task);
    const unreadable: string[] = [];
    const { declarations, problems } = taskDeclarations(field, task.attachments);
    throwProblems(problems);
    for (const [i, declared] of declarations.entries()) {
      const f = `${field}[${i}]`;
      if (typeof declared !== "string") {
        items.add(hostItem(f, declared));
        continue;
      }
      const spec = parseAttachmentSpec(declared, f);
      const d: Declared = { field: f, path: spec.path, spec };
      const got = await screenDeclared(d, { root, base: root, deny }).catch((error) => {
        // A file that vanished or changed between the check and the read.
        if (error instanceof BernsteinError) throw error;
        return { status: "unreadable" as const, reason: (error as Error).message };
      });
      if (got.status === "unreadable") {
        unreadable.push(`${f}: ${spec.path} (${got.reason})`);
        continue;
      }
      if (got.status === "denied") {
        this.#init.warn({
          code: "attach.not_attached",
          message: `${spec.path} is not attached to task ${task.id}: ${got.reason}`,
          location: f,
        });
        items.withhold(d, got.reason);
        continue;
      }
      items.add(got.item);
    }
    if (unreadable.length > 0) {
      throw new AttachmentUnreadableError(
        `task ${task.id}: ${unreadable.length} attachment(s) cannot be read, so the agent is not ` +
          `started without them: ${unreadable.join("; ")}`,
      );
    }
    return items;
  }

  async #forSpawn(task: Task, spawn: SpawnInfo): Promise<SpawnAttachmentSet | undefined> {
    const { parts, record } = this.#init;
    const prior = this.#lastSpawn(task.id);
    refuseNonDirectSpawn(
      spawn.spawnPath,
      prior !== undefined
        ? prior.blocks.length
        : this.#init.runWide.filter((r) => r.item).length + task.attachments.length,
    );
    const worktree = await resolveInside(
      spawn.worktreesDir ?? parts.project.root,
      spawn.worktreeRelative,
    );
    const worktreeId = worktreeIdOf(worktree);
    let items: Item[];
    if (prior !== undefined && prior.blocks.length > 0) {
      items = await this.#again(prior);
      // The task's report rows: what was attached before is re-sent byte for byte.
      record.rows = record.rows.map((r) => r.task_id === task.id ? unchangedRow(r, prior) : r);
    } else {
      const fresh = await this.#fresh(task);
      items = fresh.items;
      record.rows = [...record.rows.filter((r) => r.task_id !== task.id), ...fresh.rows];
    }
    const rows = record.rows.filter((r) => r.task_id === task.id);
    const outcomes = rows.map((r) => ({ path: r.path, outcome: r.outcome, reason: r.reason }));
    const channel = capabilitiesFor(spawn.adapter).attachment_channel;
    if (items.length === 0) {
      if (rows.length === 0) return undefined;
      // Every declaration was withheld: no block, but the agent is told what and why.
      await this.#init.save();
      return { digests: [], compose: (body) => composeForChannel([], body, { channel, outcomes }) };
    }
    checkAttachmentCount(items.length, taskField(task), task.id);
    for (const item of items) {
      if (item.kind === "text") continue;
      checkAdapterTakesMedia({ mime: item.wire.mime, size: item.wire.bytes.length }, {
        field: item.field,
        path: item.path,
        taskId: task.id,
        adapter: spawn.adapter,
      });
    }
    for (const item of items) {
      await attestAttachment(item.wire, {
        cas: this.#init.cas,
        audit: parts.audit,
        installIdSig: this.#init.installIdSig,
        workerId: spawn.session,
        turnSeq: spawn.turnSeq,
        worktreeId,
      }, deliveryOf(item.wire, channel));
    }
    const blocks = items.map((i) => i.wire.sha256);
    record.spawns.push({
      task_id: task.id,
      session: spawn.session,
      worktree,
      worktree_id: worktreeId,
      turn_seq: spawn.turnSeq,
      blocks,
    });
    await this.#init.save();
    const digests = unique(blocks);
    await parts.store.stampAttachments(task.id, {
      actor: "orchestrator",
      session: spawn.session,
      digests,
    });
    const wires = items.map((i) => i.wire);
    return { digests, compose: (body) => composeForChannel(wires, body, { channel, outcomes }) };
  }

  /** An earlier spawn's blocks, from CAS through the resolver pinned to its worktree. */
  async #again(prior: SpawnEntry): Promise<Item[]> {
    // Never the operator's files again: the earlier spawn's attested bytes.
    const resolved = await this.#init.resolver.spawnAttachments(prior.session, {
      worktreePath: prior.worktree,
      turnSeq: prior.turn_seq,
      expected: prior.blocks,
    });
    return resolved.map((r, i) => ({
      field: `${prior.session}[${i}]`,
      path: r.path ?? r.sha256,
      key: `${r.sha256}\0${i}`,
      wire: {
        mime: r.mime,
        sha256: r.sha256,
        bytes: r.bytes,
        path: r.path,
        firstLine: r.firstLine,
      },
      kind: kindOfMime(r.mime),
      outcome: "attached",
      reason: null,
    }));
  }
}

/** The kind of attested bytes, from their MIME type (text, image or document). */
function kindOfMime(mime: string): Item["kind"] {
  if (mime.startsWith("image/")) return "image";
  return mime.startsWith("text/") ? "text" : "document";
}

/** A report row of a re-spawn: the same bytes as the earlier spawn (`unchanged`). */
function unchangedRow(row: AttachmentRow, prior: SpawnEntry): AttachmentRow {
  if (row.outcome === "not_attached" || row.sha256 === null) return row;
  if (row.outcome === "unchanged") return { ...row, reason: sameBytesAs(prior, row.reason) };
  const was = row.outcome === "partial" && row.reason ? `; partial: ${row.reason}` : "";
  return { ...row, outcome: "unchanged", reason: `same bytes as spawn ${prior.session}${was}` };
}

/** The reason of an `unchanged` row pointing at the latest earlier spawn. */
function sameBytesAs(prior: SpawnEntry, reason: string | null): string {
  const rest = reason?.replace(/^same bytes as spawn \S+/, "") ?? "";
  return `same bytes as spawn ${prior.session}${rest}`;
}

/** How an item travels: media on the CLI's channel, text always in the prompt. */
function deliveryOf(wire: WireAttachment, channel: AttachmentChannel): Delivery | undefined {
  if (wire.mime.startsWith("text/") || channel === "prompt-text") return undefined;
  return channel === "content-block" ? { channel } : { channel, path: copyPathOf(wire) };
}
