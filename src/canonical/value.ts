/**
 * A float whose value is integral (`1.0`, `1e+20`). JavaScript numbers cannot tell `1.0`
 * from `1`, but Python's `json.dumps` can, so such floats are wrapped to keep their bytes.
 */
export class JsonFloat {
  /** The float's value. */
  readonly value: number;

  constructor(value: number) {
    this.value = value;
  }
}

/** Marks a number as a float so it serialises like Python's `repr(float)` even when integral. */
export function jsonFloat(value: number): JsonFloat {
  return new JsonFloat(value);
}

/**
 * A JSON value as the canonical serializer sees it. Integers are `number` (when safe) or
 * `bigint`; non-integral floats are `number`; integral floats are {@linkcode JsonFloat}.
 */
export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | JsonFloat
  | JsonValue[]
  | JsonObject;

/** A JSON object. Properties whose value is `undefined` are omitted when serialising. */
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

/**
 * True for a plain JSON object (not an array, not null, not a {@linkcode JsonFloat} or other
 * class instance).
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(isJsonObject({ a: 1 }), true);
 * equal(isJsonObject([1]), false);
 * equal(isJsonObject(jsonFloat(1)), false);
 * ```
 */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The JSON shape `T` must fit, field by field: {@linkcode JsonValue} where `T` is one, `never`
 * where it holds something else (a function, a Map, a Date, a class instance with methods,
 * `unknown`). The serialisers take `T & JsonShaped<T>`, so a typed record or an interface (which,
 * having no index signature, is not a {@linkcode JsonObject}) needs no cast, while a value JSON
 * cannot hold stays a type error.
 */
export type JsonShaped<T> = T extends JsonValue ? JsonValue
  : T extends undefined ? undefined
  : T extends readonly (infer U)[] ? readonly Exclude<JsonShaped<U>, undefined>[]
  : T extends (...args: never[]) => unknown ? never
  : T extends object ? { [K in keyof T]: JsonShaped<T[K]> }
  : never;

/**
 * A typed record as the {@linkcode JsonValue} it is. The type parameter is the check: only a
 * value made of JSON values type-checks (see {@linkcode JsonShaped}).
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * interface Row { name: string; tags: string[]; size?: number }
 * const row: Row = { name: "a", tags: ["x"] };
 * const value = jsonValueOf(row);
 * equal(typeof value, "object");
 * ```
 */
export function jsonValueOf<T>(value: T & JsonShaped<T>): JsonValue {
  // Sound by the constraint: T is made of JSON values, field by field.
  const json: unknown = value;
  return json as JsonValue;
}

/** The three byte profiles of FORMATS.md §1. */
export type CanonicalProfile = "canon" | "canon-ascii" | "py-default";
