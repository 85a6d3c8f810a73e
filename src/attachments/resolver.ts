// The worktree-pinned resolver: digest → bytes, trusting only `multimodal.attach` events that
// the authenticated audit scan returned, and only for the worktree they were attested to.
import {
  type AuditKey,
  type AuditRecord,
  AuditScanner,
  type ScannedAuditRecord,
  verifyAuditLog,
} from "../audit/mod.ts";
import type { JsonValue } from "../canonical/mod.ts";
import type { CasStore } from "../cas/mod.ts";
import { ATTACH_EVENT, worktreeIdOf } from "./attest.ts";
import {
  AttachmentChainUnverified,
  AttachmentNotAttested,
  WorktreeAccessDenied,
} from "./errors.ts";
import type { WireAttachment } from "./wire.ts";

/** One authenticated `multimodal.attach` event. */
export interface AttachEvent {
  /** Hex SHA-256 of the attested bytes. */
  sha256: string;
  /** MIME type. */
  mime: string;
  /** Worker (session) it was attested to. */
  worker_id: string;
  /** Turn. */
  turn_seq: number;
  /** Worktree it was attested to. */
  worktree_id: string;
  /** Text label in the prompt, when any. */
  path?: string;
  /** First line of a text excerpt, when any. */
  first_line?: number;
  /** `segment:line` of the record. */
  at: string;
  /** The authenticated audit record itself. */
  record: AuditRecord;
}

/** Bytes handed back by the resolver, ready for the wire. */
export interface ResolvedAttachment extends WireAttachment {
  /** The authenticated event that attests them. */
  event: AttachEvent;
}

/** Options of {@linkcode AttachmentResolver}. */
export interface AttachmentResolverOptions {
  /** `.sdd/audit`. */
  auditDir: string;
  /** The audit key (K). */
  auditKey: AuditKey;
  /** The project's CAS. */
  cas: CasStore;
}

/** Where the bytes are wanted. */
export interface PinOptions {
  /** The resolved (real, absolute) path of the asking worker's worktree. */
  worktreePath: string;
}

function int(value: JsonValue | undefined): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}

function text(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function eventOf(scanned: ScannedAuditRecord): AttachEvent {
  const d = scanned.record.details;
  const at = `${scanned.segment}:${scanned.line}`;
  const sha256 = text(d.sha256);
  const mime = text(d.mime);
  const worker = text(d.worker_id);
  const turn = int(d.turn_seq);
  const worktree = text(d.worktree_id);
  if (
    sha256 === undefined || !/^[0-9a-f]{64}$/.test(sha256) || mime === undefined ||
    worker === undefined || turn === undefined || worktree === undefined
  ) {
    throw new AttachmentChainUnverified(
      `the ${ATTACH_EVENT} event at ${at} lacks sha256, mime, worker_id, turn_seq or worktree_id`,
    );
  }
  const event: AttachEvent = {
    sha256,
    mime,
    worker_id: worker,
    turn_seq: turn,
    worktree_id: worktree,
    at,
    record: scanned.record,
  };
  const path = text(d.path);
  if (path !== undefined) event.path = path;
  const first = int(d.first_line);
  if (first !== undefined) event.first_line = first;
  return event;
}

/**
 * Resolves attachment digests to bytes for a worktree. The events come only from the
 * authenticated scan ({@linkcode AuditScanner}); when the scan had to leave a line out and the
 * chain does not verify, every call fails with {@linkcode AttachmentChainUnverified}. Bytes
 * come from CAS, re-hashed on read.
 *
 * @example
 * ```ts ignore
 * const resolver = new AttachmentResolver({ auditDir: ".sdd/audit", auditKey, cas });
 * const a = await resolver.resolve(digest, { worktreePath: "/repo/.sdd/worktrees/t1-a1" });
 * // another worktree → WorktreeAccessDenied; a tampered chain → AttachmentChainUnverified
 * ```
 */
export class AttachmentResolver {
  readonly #options: AttachmentResolverOptions;
  readonly #scanner: AuditScanner;
  #events: AttachEvent[] = [];
  #broken: string | undefined;

  constructor(options: AttachmentResolverOptions) {
    this.#options = options;
    this.#scanner = new AuditScanner(options.auditDir, options.auditKey, {
      eventTypes: [ATTACH_EVENT],
    });
  }

  async #refresh(): Promise<AttachEvent[]> {
    const result = await this.#scanner.scan();
    if (result.rescanned) {
      this.#events = [];
      this.#broken = undefined;
    }
    if (result.skipped_count > 0 && this.#broken === undefined) {
      // A sealed tear is left out by the scan too; only a chain that fails verification counts.
      const report = await verifyAuditLog(this.#options.auditDir, this.#options.auditKey, {
        maxIssues: 1,
      });
      if (!report.ok) {
        const issue = report.issues[0];
        const skip = result.skipped[0];
        this.#broken = issue
          ? `${issue.segment}:${issue.line ?? "-"}: ${issue.message}`
          : `${skip.segment}:${skip.line}: ${skip.reason}`;
      }
    }
    if (this.#broken !== undefined) {
      throw new AttachmentChainUnverified(
        `the audit chain does not verify (${this.#broken}); attachments attested in it cannot be trusted`,
      );
    }
    for (const scanned of result.records) this.#events.push(eventOf(scanned));
    return this.#events;
  }

  async #bytes(event: AttachEvent): Promise<ResolvedAttachment> {
    const bytes = await this.#options.cas.read(event.sha256);
    const out: ResolvedAttachment = { mime: event.mime, sha256: event.sha256, bytes, event };
    if (event.path !== undefined) out.path = event.path;
    if (event.first_line !== undefined) out.firstLine = event.first_line;
    return out;
  }

  /**
   * The bytes of `digest` for the worktree at `pin.worktreePath`: refused with
   * {@linkcode WorktreeAccessDenied} when they were attested only to other worktrees, and with
   * {@linkcode AttachmentNotAttested} when no authenticated event names the digest.
   */
  /**
   * Every authenticated `multimodal.attach` event so far, in chain order (throws
   * `AttachmentChainUnverified` when the chain does not verify).
   */
  async events(): Promise<readonly AttachEvent[]> {
    return await this.#refresh();
  }

  async resolve(digest: string, pin: PinOptions): Promise<ResolvedAttachment> {
    const events = (await this.#refresh()).filter((e) => e.sha256 === digest);
    if (events.length === 0) {
      throw new AttachmentNotAttested(
        `no authenticated ${ATTACH_EVENT} event attests ${digest.slice(0, 16)}…`,
      );
    }
    const worktreeId = worktreeIdOf(pin.worktreePath);
    const mine = events.find((e) => e.worktree_id === worktreeId);
    if (mine === undefined) {
      throw new WorktreeAccessDenied(
        `attachment ${digest.slice(0, 16)}… was attested to worktree ${
          [...new Set(events.map((e) => e.worktree_id))].join(", ")
        }, not to ${pin.worktreePath} (worktree ${worktreeId})`,
      );
    }
    return await this.#bytes(mine);
  }

  /**
   * Every attachment attested to one worker's turn, in chain (= prompt) order, pinned to its
   * worktree: the way a resumed spawn gets back exactly the blocks the interrupted one had.
   * `expected`, when given, must be the digests of the worker's latest spawn, in that order.
   */
  async spawnAttachments(
    workerId: string,
    pin: PinOptions & { turnSeq?: number; expected?: readonly string[] },
  ): Promise<ResolvedAttachment[]> {
    const turn = pin.turnSeq ?? 0;
    let events = (await this.#refresh()).filter((e) =>
      e.worker_id === workerId && e.turn_seq === turn
    );
    // A spawn that failed after attesting is retried under the same worker id; each spawn
    // attests its blocks in one run, so the last `expected.length` events are the latest spawn's.
    if (pin.expected !== undefined && events.length > pin.expected.length) {
      events = events.slice(events.length - pin.expected.length);
    }
    if (events.length === 0) {
      throw new AttachmentNotAttested(
        `no authenticated ${ATTACH_EVENT} event for worker ${workerId} (turn ${turn})`,
      );
    }
    const worktreeId = worktreeIdOf(pin.worktreePath);
    const foreign = events.find((e) => e.worktree_id !== worktreeId);
    if (foreign !== undefined) {
      throw new WorktreeAccessDenied(
        `worker ${workerId}'s attachment ${foreign.sha256.slice(0, 16)}… (${foreign.at}) was ` +
          `attested to worktree ${foreign.worktree_id}, not to ${pin.worktreePath} (worktree ${worktreeId})`,
      );
    }
    const digests = events.map((e) => e.sha256);
    if (pin.expected !== undefined && digests.join(",") !== pin.expected.join(",")) {
      throw new AttachmentNotAttested(
        `worker ${workerId} carried ${pin.expected.length} attachment(s) by the run record, ` +
          `but the audit chain attests ${digests.length} different or reordered ones`,
      );
    }
    const out: ResolvedAttachment[] = [];
    for (const e of events) out.push(await this.#bytes(e));
    return out;
  }
}
