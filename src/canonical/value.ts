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

/** The three byte profiles of FORMATS.md §1. */
export type CanonicalProfile = "canon" | "canon-ascii" | "py-default";
