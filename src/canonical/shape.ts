// Checking the shape of a parsed JSON record read back from a file: one check per field of its
// type (the table must name every field, so a field added to the type without a check is a type
// error), the first field that fails named in the problem, and a type guard built on the same
// table, so a checked value needs no cast.

import { isJsonObject, type JsonObject, type JsonValue } from "./value.ts";

/** One check per field of `T` (optional fields included: their check sees `undefined`). */
export type FieldChecks<T> = {
  readonly [K in keyof T]-?: (value: JsonValue | undefined) => boolean;
};

/**
 * The first field of `value` that fails its check (`field 'values' is missing or malformed`),
 * or undefined when every field passes. Fields the table does not name are not looked at.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const checks = { name: (v: unknown) => typeof v === "string" };
 * equal(fieldProblem({ name: "a" }, checks), undefined);
 * equal(fieldProblem({ name: 1 }, checks), "field 'name' is missing or malformed");
 * equal(fieldProblem([], checks), "not a JSON object");
 * ```
 */
export function fieldProblem<T>(value: JsonValue, checks: FieldChecks<T>): string | undefined {
  if (!isJsonObject(value)) return "not a JSON object";
  for (const [key, check] of Object.entries<(value: JsonValue | undefined) => boolean>(checks)) {
    if (!check(value[key])) return `field '${key}' is missing or malformed`;
  }
  return undefined;
}

/** True when every field of `value` passes its check: `value` is then a `T`. */
export function hasFields<T>(value: JsonValue, checks: FieldChecks<T>): value is JsonObject & T {
  return fieldProblem(value, checks) === undefined;
}

/** A string. */
export const isString = (v: JsonValue | undefined): boolean => typeof v === "string";

/** A safe integer. */
export const isSafeInteger = (v: JsonValue | undefined): boolean => Number.isSafeInteger(v);

/** An object whose every member is a string. */
export const isStringRecord = (v: JsonValue | undefined): boolean =>
  isJsonObject(v) && Object.values(v).every((x) => typeof x === "string");
