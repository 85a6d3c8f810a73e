// Names of variables, connections and contexts: `[a-z0-9][a-z0-9._-]*`, at most 128 bytes, so
// a name is a safe file name on every platform and one spelling everywhere.
import { FleetError } from "./errors.ts";

/** The grammar every fleet name follows. */
export const FLEET_NAME_PATTERN: RegExp = /^[a-z0-9][a-z0-9._-]*$/;

/** The longest name accepted. */
export const FLEET_NAME_MAX = 128;

/** The kinds of named things in the fleet plane. */
export type FleetKind = "variable" | "connection" | "context";

/** True for a well-formed name. */
export function isFleetName(name: string): boolean {
  return name.length <= FLEET_NAME_MAX && FLEET_NAME_PATTERN.test(name);
}

/**
 * Returns `name` when it is well formed; otherwise a `fleet.bad_name` error naming the rule.
 *
 * @example
 * ```ts
 * checkFleetName("threshold", "variable"); // "threshold"
 * ```
 */
export function checkFleetName(name: string, kind: FleetKind): string {
  if (isFleetName(name)) return name;
  const why = name.length > FLEET_NAME_MAX
    ? `longer than ${FLEET_NAME_MAX} characters`
    : "not [a-z0-9][a-z0-9._-]*";
  throw new FleetError("fleet.bad_name", `${kind} name '${name}' is ${why}`, {
    hint: "use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit",
  });
}
