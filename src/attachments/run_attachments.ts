// The attachments of one `bernstein run`: `--attach` files checked when the command line is
// parsed, the up-front gate (policy, limits, capabilities) before any worktree or process, and
// the per-spawn provider (read, screen, store, attest, stamp) with worktree-pinned resume.
import { join, resolve } from "node:path";
import type { AdapterSettingsMap } from "../adapters/mod.ts";
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import { CasStore } from "../cas/mod.ts";
import type { Warning } from "../errors/mod.ts";
import { type Clock, type Random, resolveInside } from "../io/mod.ts";
import type { StampAttachmentsOptions, Task, TaskDraft } from "../tasks/mod.ts";
import { attestAttachment, readInstallIdSig, worktreeIdOf } from "./attest.ts";
import { AttachmentError, AttachmentUnreadableError } from "./errors.ts";
import { checkAdapterTakesImage, checkAttachmentCount, MAX_ATTACHMENTS } from "./limits.ts";
import {
  type AttachmentRow,
  emptyRecord,
  loadRecord,
  type RunAttachmentRecord,
  type RunWideEntry,
  saveRecord,
  type SpawnEntry,
} from "./record.ts";
import { AttachmentResolver } from "./resolver.ts";
import { screenAttachment, type Screened } from "./screen.ts";
import { checkReadable, DEFAULT_DENY, locateSource, readSource } from "./source.ts";
import { refuseNonDirectSpawn } from "./spawn_path.ts";
import { type AttachmentSpec, parseAttachmentSpec } from "./spec.ts";
import { composePrompt, type WireAttachment } from "./wire.ts";

/** The parts of the configuration attachments read. */
export interface AttachmentConfig {
  /** `adapters.<name>` settings (the scripted test agent's `test_multimodal`). */
  adapters?: AdapterSettingsMap;
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

/** What the up-front gate sees: the planned tasks and their adapters, before anything starts. */
export interface AttachmentGateInput {
  /** Project paths. */
  project: AttachmentProject;
  /** Effective configuration. */
  config: AttachmentConfig;
  /** The tasks to be created. */
  drafts: readonly TaskDraft[];
  /** Adapter name per draft (id, or title when it has no id). */
  adapters: Readonly<Record<string, string>>;
  /** How agents will be started. */
  spawnPath: string;
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
  /** The prompt with the blocks at its head (FORMATS.md §7). */
  compose(body: string): string;
}

/** One declaration: where it came from and what was asked for. */
interface Declared {
  field: string;
  path: string;
  spec: AttachmentSpec;
}

/** A declaration read and screened, ready to attest. */
interface Item {
  field: string;
  path: string;
  key: string;
  wire: WireAttachment;
  kind: "image" | "text";
  outcome: "attached" | "partial";
  reason: string | null;
}

function rangeKey(spec: AttachmentSpec): string {
  return spec.fromLine === undefined ? "" : `${spec.fromLine}-${spec.toLine ?? spec.fromLine}`;
}

function wireOf(screened: Screened, label: string): WireAttachment {
  const wire: WireAttachment = {
    mime: screened.mime,
    sha256: screened.sha256,
    bytes: screened.bytes,
  };
  if (screened.kind === "text") wire.path = label;
  if (screened.firstLine !== undefined) wire.firstLine = screened.firstLine;
  return wire;
}

function itemRow(taskId: string | null, item: Item): AttachmentRow {
  return {
    task_id: taskId,
    field: item.field,
    path: item.path,
    kind: item.kind,
    mime: item.wire.mime,
    sha256: item.wire.sha256,
    size: item.wire.bytes.length,
    outcome: item.outcome,
    reason: item.reason,
  };
}

function notAttachedRow(
  taskId: string | null,
  d: { field: string; path: string },
  reason: string,
): AttachmentRow {
  return {
    task_id: taskId,
    field: d.field,
    path: d.path,
    kind: null,
    mime: null,
    sha256: null,
    size: null,
    outcome: "not_attached",
    reason,
  };
}

/** Field path of a task's own attachment list (`stages[0].steps[1].attachments`). */
function taskField(
  task: { id?: string; title: string; metadata?: Record<string, unknown> },
): string {
  const field = task.metadata?.field;
  return typeof field === "string" && field !== ""
    ? `${field}.attachments`
    : `task ${task.id ?? task.title}: attachments`;
}

/** A run-wide declaration and, unless it was refused, its item. */
interface RunWideItem {
  entry: RunWideEntry;
  item?: Item;
}

/** The run-wide items a task gets (each file once) and their report rows, in declaration order. */
function runWideFor(
  taskId: string,
  runWide: readonly RunWideItem[],
): { items: Item[]; rows: AttachmentRow[] } {
  const items: Item[] = [];
  const rows: AttachmentRow[] = [];
  for (const { entry, item } of runWide) {
    if (item === undefined) {
      rows.push(notAttachedRow(taskId, entry, entry.reason ?? "not attached"));
      continue;
    }
    const same = items.find((x) => x.key === item.key);
    if (same !== undefined) {
      rows.push({
        ...itemRow(taskId, same),
        field: item.field,
        path: item.path,
        reason: `also declared as ${same.field}; attached once`,
      });
      continue;
    }
    items.push(item);
    rows.push(itemRow(taskId, item));
  }
  return { items, rows };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The attachments of one run. The CLI builds it from the `--attach` flags (checked at once),
 * hands {@linkcode RunAttachments.gate} and {@linkcode RunAttachments.provider} to the run, and
 * prints {@linkcode RunAttachments.rows} with the summary.
 *
 * @example
 * ```ts
 * const attachments = await RunAttachments.fromCommandLine(["design.png"], { cwd, warn });
 * await attachments.gate({ project, config, drafts, adapters, spawnPath: "direct-subprocess" });
 * const provider = await attachments.provider(parts); // run loop: provider.forSpawn(task, spawn)
 * ```
 */
export class RunAttachments {
  readonly #cwd: string;
  readonly #declared: readonly Declared[];
  readonly #warn: (warning: Warning) => void;
  /** Run-wide items frozen by the gate (fresh run) or loaded from the record (resume). */
  #runWide: RunWideItem[] = [];
  #gateRows: AttachmentRow[] = [];
  #gated = false;
  #record: RunAttachmentRecord | undefined;
  #sdd: string | undefined;
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(cwd: string, declared: Declared[], warn: (warning: Warning) => void) {
    this.#cwd = cwd;
    this.#declared = declared;
    this.#warn = warn;
  }

  /**
   * Parses `--attach PATH[:FROM-TO]` values and checks each file exists and is readable, the
   * moment the command line is parsed. Errors name the flag: `run.attach[2]: …`.
   */
  static async fromCommandLine(
    values: readonly string[],
    options: { cwd: string; warn: (warning: Warning) => void },
  ): Promise<RunAttachments> {
    if (values.length > MAX_ATTACHMENTS) {
      throw new AttachmentError(
        `${values.length} --attach values; at most ${MAX_ATTACHMENTS} attachments per task`,
        { location: `run.attach[${MAX_ATTACHMENTS}]` },
      );
    }
    const declared: Declared[] = [];
    for (const [i, text] of values.entries()) {
      const field = `run.attach[${i}]`;
      const spec = parseAttachmentSpec(text, field);
      const problem = await checkReadable(resolve(options.cwd, spec.path));
      if (problem !== undefined) {
        throw new AttachmentError(`${spec.path}: ${problem}`, { location: field });
      }
      declared.push({ field, path: spec.path, spec });
    }
    return new RunAttachments(options.cwd, declared, options.warn);
  }

  /** `--attach` values as given (field paths `run.attach[i]`). */
  get declaredCount(): number {
    return this.#declared.length;
  }

  /** Every report row so far: the gate's (dry run) or the spawns' (a run). */
  rows(): AttachmentRow[] {
    const rows = this.#record?.rows ?? this.#gateRows;
    return rows.map((r) => ({ ...r }));
  }

  async #screenDeclared(
    d: Declared,
    options: { root: string; base: string; deny: readonly string[] },
  ): Promise<{ item?: Item; denied?: string; unreadable?: string; real?: string }> {
    const found = await locateSource(d.spec.path, options);
    if (found.status === "unreadable") return { unreadable: found.reason };
    if (found.status === "denied") return { denied: found.reason };
    const bytes = await readSource(found.real, d.field);
    const screened = screenAttachment(bytes, d.spec, { field: d.field, shownPath: found.rel });
    return {
      real: found.real,
      item: {
        field: d.field,
        path: d.path,
        key: `${found.real}\0${rangeKey(d.spec)}`,
        wire: wireOf(screened, found.rel),
        kind: screened.kind,
        outcome: screened.outcome,
        reason: screened.reason,
      },
    };
  }

  /**
   * The up-front gate, before any worktree or process exists: freezes the `--attach` files
   * (policy, screening), screens the readable step attachments, and refuses an image for an
   * adapter that cannot take it, too many attachments for a task, or a non-direct spawn path.
   */
  async gate(input: AttachmentGateInput): Promise<void> {
    const root = input.project.root;
    const deny = input.config.attachments?.deny ?? DEFAULT_DENY;
    const settings = input.config.adapters ?? {};
    this.#runWide = [];
    this.#gateRows = [];
    for (const d of this.#declared) {
      const got = await this.#screenDeclared(d, { root, base: this.#cwd, deny });
      if (got.unreadable !== undefined) {
        throw new AttachmentError(`${d.path}: ${got.unreadable}`, { location: d.field });
      }
      if (got.denied !== undefined) {
        this.#warn({
          code: "attach.not_attached",
          message: `${d.path} is not attached: ${got.denied}`,
          location: d.field,
        });
        this.#runWide.push({ entry: this.#entryOf(d, undefined, got.denied) });
        continue;
      }
      const item = got.item as Item;
      this.#runWide.push({ entry: this.#entryOf(d, item, null, got.real), item });
    }
    this.#gated = true;
    for (const draft of input.drafts) {
      const taskId = draft.id ?? draft.title;
      const adapter = input.adapters[taskId] ?? "generic";
      const own = draft.attachments ?? [];
      const { items, rows } = runWideFor(taskId, this.#runWide);
      refuseNonDirectSpawn(input.spawnPath, items.length + own.length);
      const field = taskField(
        draft as { id?: string; title: string; metadata?: Record<string, unknown> },
      );
      for (const [i, text] of own.entries()) {
        const spec = parseAttachmentSpec(text, `${field}[${i}]`);
        const d: Declared = { field: `${field}[${i}]`, path: spec.path, spec };
        const got = await this.#screenDeclared(d, { root, base: root, deny });
        // Unreadable step files are checked again when the worker spawns (and abort it then).
        if (got.unreadable !== undefined) continue;
        if (got.denied !== undefined) {
          rows.push(notAttachedRow(taskId, d, got.denied));
          continue;
        }
        const item = got.item as Item;
        const same = items.find((x) => x.key === item.key);
        if (same !== undefined) {
          rows.push({
            ...itemRow(taskId, same),
            field: d.field,
            path: d.path,
            reason: `also declared as ${same.field}; attached once`,
          });
          continue;
        }
        items.push(item);
        rows.push(itemRow(taskId, item));
      }
      checkAttachmentCount(items.length, field, taskId);
      for (const item of items) {
        if (item.kind !== "image") continue;
        checkAdapterTakesImage({ mime: item.wire.mime, size: item.wire.bytes.length }, {
          field: item.field,
          path: item.path,
          taskId,
          adapter,
          settings,
        });
      }
      this.#gateRows.push(...rows);
    }
  }

  #entryOf(
    d: Declared,
    item: Item | undefined,
    reason: string | null,
    real?: string,
  ): RunWideEntry {
    return {
      field: d.field,
      path: d.path,
      real: real ?? null,
      range: rangeKey(d.spec),
      label: item?.wire.path ?? null,
      kind: item?.kind ?? null,
      mime: item?.wire.mime ?? null,
      sha256: item?.wire.sha256 ?? null,
      size: item?.wire.bytes.length ?? null,
      first_line: item?.wire.firstLine ?? null,
      outcome: item?.outcome ?? "not_attached",
      reason: item?.reason ?? reason,
    };
  }

  /**
   * Builds the per-spawn provider once the run's stores exist. A fresh run stores the frozen
   * `--attach` bytes in CAS and starts the record; a resumed run takes its run-wide attachments
   * from the record and CAS (never from the operator's files) and ignores new `--attach` values.
   */
  async provider(parts: AttachmentProviderParts): Promise<SpawnAttachmentProvider> {
    const sdd = parts.project.sdd;
    this.#sdd = sdd;
    const cas = new CasStore(join(sdd, "cas"), { clock: parts.clock, random: parts.random });
    const previous = parts.resumed ? await loadRecord(sdd, parts.runId) : undefined;
    if (parts.resumed) {
      if (this.#declared.length > 0) {
        this.#warn({
          code: "attach.ignored_on_resume",
          message:
            `--attach is ignored: run ${parts.runId} resumes with the attachments it started with`,
        });
      }
      this.#record = previous ?? emptyRecord(parts.runId);
      this.#runWide = [];
      for (const entry of this.#record.run_wide) {
        if (entry.sha256 === null || entry.kind === null || entry.mime === null) {
          this.#runWide.push({ entry });
          continue;
        }
        const bytes = await cas.read(entry.sha256);
        const wire: WireAttachment = { mime: entry.mime, sha256: entry.sha256, bytes };
        if (entry.label !== null && entry.kind === "text") wire.path = entry.label;
        if (entry.first_line !== null) wire.firstLine = entry.first_line;
        this.#runWide.push({
          entry,
          item: {
            field: entry.field,
            path: entry.path,
            key: `${entry.real ?? entry.path}\0${entry.range}`,
            wire,
            kind: entry.kind,
            outcome: entry.outcome === "partial" ? "partial" : "attached",
            reason: entry.reason,
          },
        });
      }
    } else {
      if (!this.#gated && this.#declared.length > 0) {
        throw new Error("internal: the attachment gate did not run before the run started");
      }
      this.#record = emptyRecord(parts.runId);
      for (const { entry, item } of this.#runWide) {
        // Stored once, when the run starts: every spawn and a resume read these exact bytes.
        if (item !== undefined) await cas.put(item.wire.bytes, { contentType: item.wire.mime });
        this.#record.run_wide.push(entry);
      }
      // A run without attachments leaves no record behind.
      if (this.#record.run_wide.length > 0) await saveRecord(sdd, this.#record);
    }
    return new SpawnAttachmentProvider({
      parts,
      cas,
      installIdSig: await readInstallIdSig(sdd),
      resolver: new AttachmentResolver({
        auditDir: join(sdd, "audit"),
        auditKey: parts.auditKey,
        cas,
      }),
      runWide: this.#runWide,
      record: this.#record,
      save: () => this.#save(),
      warn: this.#warn,
      serialize: <T>(fn: () => Promise<T>) => this.#serialize(fn),
    });
  }

  #serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  async #save(): Promise<void> {
    if (this.#record !== undefined && this.#sdd !== undefined) {
      await saveRecord(this.#sdd, this.#record);
    }
  }
}

interface ProviderInit {
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

  async #fresh(task: Task): Promise<{ items: Item[]; rows: AttachmentRow[] }> {
    const { parts } = this.#init;
    const root = parts.project.root;
    const deny = parts.config.attachments?.deny ?? DEFAULT_DENY;
    const { items, rows } = runWideFor(task.id, this.#init.runWide);
    const field = taskField(
      task as unknown as { id: string; title: string; metadata?: Record<string, unknown> },
    );
    const unreadable: string[] = [];
    for (const [i, text] of task.attachments.entries()) {
      const f = `${field}[${i}]`;
      const spec = parseAttachmentSpec(text, f);
      const d: Declared = { field: f, path: spec.path, spec };
      const found = await locateSource(spec.path, { root, base: root, deny });
      if (found.status === "unreadable") {
        unreadable.push(`${f}: ${spec.path} (${found.reason})`);
        continue;
      }
      if (found.status === "denied") {
        this.#init.warn({
          code: "attach.not_attached",
          message: `${spec.path} is not attached to task ${task.id}: ${found.reason}`,
          location: f,
        });
        rows.push(notAttachedRow(task.id, d, found.reason));
        continue;
      }
      const bytes = await readSource(found.real, f).catch((error) => {
        unreadable.push(`${f}: ${spec.path} (${(error as Error).message})`);
        return undefined;
      });
      if (bytes === undefined) continue;
      const screened = screenAttachment(bytes, spec, { field: f, shownPath: found.rel });
      const item: Item = {
        field: f,
        path: spec.path,
        key: `${found.real}\0${rangeKey(spec)}`,
        wire: wireOf(screened, found.rel),
        kind: screened.kind,
        outcome: screened.outcome,
        reason: screened.reason,
      };
      const same = items.find((x) => x.key === item.key);
      if (same !== undefined) {
        rows.push({
          ...itemRow(task.id, same),
          field: f,
          path: spec.path,
          reason: `also declared as ${same.field}; attached once`,
        });
        continue;
      }
      items.push(item);
      rows.push(itemRow(task.id, item));
    }
    if (unreadable.length > 0) {
      throw new AttachmentUnreadableError(
        `task ${task.id}: ${unreadable.length} attachment(s) cannot be read, so the agent is not ` +
          `started without them: ${unreadable.join("; ")}`,
      );
    }
    return { items, rows };
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
    const worktree = await resolveInside(parts.project.root, spawn.worktreeRelative);
    const worktreeId = worktreeIdOf(worktree);
    let items: Item[];
    if (prior !== undefined && prior.blocks.length > 0) {
      // Never the operator's files again: the earlier spawn's attested bytes, from CAS.
      const resolved = await this.#init.resolver.spawnAttachments(prior.session, {
        worktreePath: prior.worktree,
        turnSeq: prior.turn_seq,
        expected: prior.blocks,
      });
      items = resolved.map((r, i) => ({
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
        kind: r.mime.startsWith("image/") ? "image" : "text",
        outcome: "attached",
        reason: null,
      }));
    } else {
      const fresh = await this.#fresh(task);
      items = fresh.items;
      record.rows = [...record.rows.filter((r) => r.task_id !== task.id), ...fresh.rows];
    }
    if (items.length === 0) {
      if (record.rows.some((r) => r.task_id === task.id)) await this.#init.save();
      return undefined;
    }
    checkAttachmentCount(
      items.length,
      taskField(task as unknown as { id: string; title: string }),
      task.id,
    );
    for (const item of items) {
      if (item.kind !== "image") continue;
      checkAdapterTakesImage({ mime: item.wire.mime, size: item.wire.bytes.length }, {
        field: item.field,
        path: item.path,
        taskId: task.id,
        adapter: spawn.adapter,
        settings: parts.config.adapters,
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
      });
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
    return { digests, compose: (body: string) => composePrompt(wires, body) };
  }
}
