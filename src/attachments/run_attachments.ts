// The attachments of one `bernstein run`: `--attach` files checked when the command line is
// parsed, the up-front gate (policy, limits, capabilities) before any worktree or process, and
// the per-spawn provider (read, screen, store, attest, stamp) with worktree-pinned resume.
import { resolve } from "node:path";
import { CasStore } from "../cas/mod.ts";
import { BernsteinError, type Warning } from "../errors/mod.ts";
import type { TaskDraft } from "../tasks/mod.ts";
import {
  type Declared,
  type Item,
  rangeKey,
  type RunWideItem,
  screenDeclared,
  type ScreenResult,
} from "./_declared.ts";
import { readInstallIdSig } from "./attest.ts";
import { AttachmentError, throwProblems } from "./errors.ts";
import { gateDrafts } from "./gate.ts";
import { MAX_ATTACHMENTS } from "./limits.ts";
import {
  type AttachmentRow,
  emptyRecord,
  loadRecord,
  type RunAttachmentRecord,
  type RunWideEntry,
  saveRecord,
} from "./record.ts";
import { AttachmentResolver } from "./resolver.ts";
import { checkReadable, DEFAULT_DENY } from "./source.ts";
import {
  type AttachmentConfig,
  type AttachmentProject,
  type AttachmentProviderParts,
  SpawnAttachmentProvider,
} from "./spawn_provider.ts";
import { parseAttachmentSpec } from "./spec.ts";
import type { WireAttachment } from "./wire.ts";
import { sddFolder } from "../io/mod.ts";

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

/**
 * The attachments of one run. The CLI builds it from the `--attach` flags (checked at once),
 * hands {@linkcode RunAttachments.gate} and {@linkcode RunAttachments.provider} to the run, and
 * prints {@linkcode RunAttachments.rows} with the summary.
 *
 * @example
 * ```ts ignore
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

  /**
   * The up-front gate, before any worktree or process exists: freezes the `--attach` files
   * (policy, screening), then checks every planned task's attachments as its spawn will
   * (gate.ts). Every problem is listed at once (exit 2); withheld files are warnings.
   */
  async gate(input: AttachmentGateInput): Promise<void> {
    const root = input.project.root;
    const deny = input.config.attachments?.deny ?? DEFAULT_DENY;
    this.#runWide = [];
    this.#gateRows = [];
    const problems: BernsteinError[] = [];
    for (const d of this.#declared) {
      let got: ScreenResult;
      try {
        got = await screenDeclared(d, { root, base: this.#cwd, deny });
      } catch (error) {
        if (!(error instanceof BernsteinError)) throw error;
        problems.push(error);
        continue;
      }
      if (got.status === "unreadable") {
        problems.push(new AttachmentError(`${d.path}: ${got.reason}`, { location: d.field }));
        continue;
      }
      if (got.status === "denied") {
        this.#warn({
          code: "attach.not_attached",
          message: `${d.path} is not attached: ${got.reason}`,
          location: d.field,
        });
        this.#runWide.push({ entry: this.#entryOf(d, undefined, got.reason) });
        continue;
      }
      this.#runWide.push({ entry: this.#entryOf(d, got.item, null, got.real), item: got.item });
    }
    // A run-wide file that cannot be read is refused on its own: the tasks would repeat it.
    throwProblems(problems);
    this.#gated = true;
    const outcome = await gateDrafts(input.drafts, {
      root,
      deny,
      runWide: this.#runWide,
      adapters: input.adapters,
      spawnPath: input.spawnPath,
      warn: this.#warn,
    });
    this.#gateRows = outcome.rows;
    throwProblems(outcome.problems);
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
    const cas = new CasStore(sddFolder(sdd, "cas"), { clock: parts.clock, random: parts.random });
    const previous = parts.resumed ? await loadRecord(sdd, parts.runId) : undefined;
    if (parts.resumed) {
      // The run refuses --attach on a resume before anything starts (attach.on_resume).
      if (this.#declared.length > 0) {
        throw new Error(`internal: --attach reached the resume of run ${parts.runId}`);
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
        auditDir: sddFolder(sdd, "audit"),
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
