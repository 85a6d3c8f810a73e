// Timeline lanes: attempts placed on agent slots. An attempt goes to the lowest lane that is
// free when it starts, so lanes read like the run's agent slots and overlapping attempts never
// share one.

/** A span of time (any unit; `end` ≥ `start`). */
export interface Interval {
  /** Start. */
  start: number;
  /** End. */
  end: number;
}

/** The lane of every interval, in input order, and how many lanes were used. */
export interface LaneAssignment {
  /** Lane of each interval (from 0). */
  lanes: number[];
  /** Lanes used. */
  count: number;
}

/**
 * Assigns lanes in input order (callers pass attempts in claim order): each interval takes the
 * lowest lane whose previous interval ended at or before its start.
 *
 * @example
 * ```ts
 * assignLanes([{ start: 0, end: 5 }, { start: 1, end: 2 }, { start: 5, end: 6 }]);
 * // { lanes: [0, 1, 0], count: 2 }
 * ```
 */
export function assignLanes(intervals: readonly Interval[]): LaneAssignment {
  const laneEnds: number[] = [];
  const lanes = intervals.map((iv) => {
    let lane = laneEnds.findIndex((endOfLane) => endOfLane <= iv.start);
    if (lane === -1) lane = laneEnds.length;
    laneEnds[lane] = Math.max(iv.end, iv.start);
    return lane;
  });
  return { lanes, count: laneEnds.length };
}

/** Ticks for an axis of `spanMs`: about `target` round steps (1, 2, 5 × 10^n ms). */
export function axisTicks(spanMs: number, target = 8): number[] {
  if (!(spanMs > 0)) return [0];
  const raw = spanMs / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = 0; t <= spanMs + step / 1000; t += step) ticks.push(Math.round(t));
  return ticks;
}

/** A duration for people: `850 ms`, `12.4 s`, `3 min 05 s`, `2 h 04 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const total = Math.round(s);
  const minutes = Math.floor(total / 60);
  if (minutes < 60) return `${minutes} min ${String(total % 60).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}
