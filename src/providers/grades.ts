/**
 * Conformance grades of a model provider: `basic` < `advanced` < `expert`, the levels a
 * `provider_availability` chain element declares and a certification receipt records, plus
 * `none` for an endpoint that passed nothing useful. One ordering for every comparison.
 */
import { CONFORMANCE_LEVELS, type ConformanceLevel } from "../config/mod.ts";

export { CONFORMANCE_LEVELS, type ConformanceLevel };

/** What a certification can grade an endpoint: a conformance level, or `none`. */
export type Grade = ConformanceLevel | "none";

/** Every grade, weakest first. */
export const GRADES: readonly Grade[] = ["none", ...CONFORMANCE_LEVELS];

/** Position of a grade in {@linkcode GRADES} (none = 0). */
export function gradeRank(grade: Grade): number {
  return GRADES.indexOf(grade);
}

/**
 * True when `grade` is at least `floor`.
 *
 * @example
 * ```ts
 * atLeast("expert", "advanced"); // true
 * atLeast("basic", "advanced"); // false
 * ```
 */
export function atLeast(grade: Grade, floor: ConformanceLevel): boolean {
  return gradeRank(grade) >= gradeRank(floor);
}

/** True when a string names a grade. */
export function isGrade(value: string): value is Grade {
  return (GRADES as readonly string[]).includes(value);
}
