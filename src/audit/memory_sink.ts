// An in-memory AuditSink for tests of modules that record audit events.
import { type Clock, FakeClock } from "../io/mod.ts";
import type { AppendOptions, AuditSink } from "./log.ts";
import {
  type AuditChainKeys,
  type AuditEventInput,
  type AuditRecord,
  buildRecord,
  formatAuditTimestamp,
  GENESIS_HMAC,
} from "./record.ts";

/** Options of {@linkcode MemoryAuditSink}. */
export interface MemoryAuditSinkOptions {
  /** Timestamps. Default: a {@linkcode FakeClock} at 2026-01-01. */
  clock?: Clock;
  /** Chain keys. Default: fixed test keys (never use them for a real log). */
  keys?: AuditChainKeys;
}

const TEST_KEYS: AuditChainKeys = {
  legacy: new TextEncoder().encode("0".repeat(64)),
  v2: new Uint8Array(32),
};

/**
 * An {@linkcode AuditSink} that keeps a real HMAC chain in memory, so tests can assert what a
 * module recorded without touching disk.
 */
export class MemoryAuditSink implements AuditSink {
  /** Every record appended, in order. */
  readonly records: AuditRecord[] = [];
  readonly #clock: Clock;
  readonly #keys: AuditChainKeys;

  constructor(options: MemoryAuditSinkOptions = {}) {
    this.#clock = options.clock ?? new FakeClock();
    this.#keys = options.keys ?? TEST_KEYS;
  }

  /** Appends one event to the in-memory chain. */
  append(event: AuditEventInput, options: AppendOptions = {}): Promise<AuditRecord> {
    try {
      const prevHmac = this.records.at(-1)?.hmac ?? GENESIS_HMAC;
      const details = options.bindPrevChainDigest
        ? { ...event.details, prev_chain_digest: prevHmac }
        : event.details;
      const { record } = buildRecord({ ...event, details }, {
        prevHmac,
        timestamp: formatAuditTimestamp(this.#clock.nowNs()),
        keys: this.#keys,
      });
      this.records.push(record);
      return Promise.resolve(record);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Records of one event type. */
  ofType(eventType: string): AuditRecord[] {
    return this.records.filter((r) => r.event_type === eventType);
  }
}
