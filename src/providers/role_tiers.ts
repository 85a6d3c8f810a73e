/**
 * Role tiers of local endpoints: the low-stakes roles run on any endpoint profile; every other
 * role is merge-critical (the gate fails closed: a role never seen before is gated) and needs a
 * signed certification receipt of at least {@linkcode GATED_MIN_GRADE}. Also the exact command
 * that certifies a profile, which `config validate` prints.
 */
import type { ConformanceLevel } from "./grades.ts";

/** Roles that run on any endpoint profile without certification. */
export const LOW_STAKES_ROLES: readonly string[] = [
  "linter",
  "test_writer",
  "triage",
  "doc_sweeper",
];

/**
 * The grade a receipt needs for a merge-critical role: `advanced` (tool calling with a forced
 * tool and a JSON-only answer work), because those agents edit code that gets merged.
 */
export const GATED_MIN_GRADE: ConformanceLevel = "advanced";

/**
 * True when a role needs a certified endpoint profile.
 *
 * @example
 * ```ts
 * isMergeCritical("linter"); // false
 * isMergeCritical("backend"); // true
 * ```
 */
export function isMergeCritical(role: string): boolean {
  return !LOW_STAKES_ROLES.includes(role);
}

/** What the certification command needs of a profile. */
export interface CertifiableProfile {
  /** Profile name (`local_endpoints.<name>`). */
  name: string;
  /** Base URL. */
  base_url: string;
  /** Model, when the profile names one. */
  model?: string;
  /** Wire API, when the profile names one. */
  api?: string;
}

/** The exact command that certifies a profile (its receipt lands under `.sdd/endpoints/`). */
export function certifyCommand(profile: CertifiableProfile): string {
  return `bernstein doctor --endpoint ${profile.name}`;
}
