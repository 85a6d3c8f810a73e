// The pack's period (FORMATS.md §5): inclusive UTC days `since..until`, as `ts_ns` bounds, and
// the ISO form of a `ts_ns` the pack's documents and messages show. Pure.

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const NS_PER_DAY = 86_400_000_000_000n;

/** Epoch day number of a `YYYY-MM-DD` UTC date, or undefined when it is not a real date. */
export function utcDay(text: string): number | undefined {
  const m = DAY.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (new Date(ms).toISOString().slice(0, 10) !== text) return undefined;
  return ms / 86_400_000;
}

/** The inclusive `ts_ns` bounds of a window of UTC days. */
export interface PackWindow {
  /** First nanosecond of `since` (00:00:00 UTC). */
  startNs: bigint;
  /** Last nanosecond of `until` (23:59:59.999999999 UTC). */
  endNs: bigint;
  /** Days covered, both ends included. */
  days: number;
}

/** The window of `since`..`until` (inclusive UTC days); undefined when either is bad. */
export function packWindow(since: string, until: string): PackWindow | undefined {
  const a = utcDay(since);
  const b = utcDay(until);
  if (a === undefined || b === undefined || b < a) return undefined;
  return {
    startNs: BigInt(a) * NS_PER_DAY,
    endNs: BigInt(b + 1) * NS_PER_DAY - 1n,
    days: b - a + 1,
  };
}

/** ISO 8601 UTC time of a `ts_ns` (to the millisecond). */
export function isoOfNs(tsNs: bigint): string {
  return new Date(Number(tsNs / 1_000_000n)).toISOString();
}
