// Reads plain values parsed from YAML, recording every problem with its field path and the
// file:line:col of the offending node. Nothing is coerced: a number where a string is
// expected is an error, not a string.
import { closestMatch, type ErrorCode } from "../errors/mod.ts";
import { checkRelativePath } from "../io/mod.ts";
import type { PlanProblem } from "./errors.ts";

/** A path into the parsed document. */
export type FieldPath = readonly (string | number)[];

/** Finds `file:line:col` of a path (the key node when `key` is true). */
export type Locator = (path: FieldPath, key?: boolean) => string | undefined;

/** `stages[0].steps[1].attachments[0]`. */
export function fieldText(path: FieldPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

/** JSON-ish name of a value's type, for messages. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  if (typeof value === "boolean") return "a boolean";
  return typeof value;
}

/** Options of {@linkcode FieldReader.problem}. */
export interface ProblemOptions {
  /** Point at the key instead of the value. */
  key?: boolean;
  /** Suggestion shown after the message. */
  hint?: string;
  /** Warning instead of error. */
  warning?: boolean;
  /** Field path printed in the message, when it differs from the located path. */
  shown?: FieldPath;
}

/** Reads fields out of one parsed document and collects problems. */
export class FieldReader {
  readonly problems: PlanProblem[] = [];
  readonly #locate: Locator;
  readonly #file: string;
  readonly #prefix: FieldPath;

  /** `prefix` is prepended to every shown field path (the document's place in a bigger one). */
  constructor(locate: Locator, file: string, prefix: FieldPath = []) {
    this.#locate = locate;
    this.#file = file;
    this.#prefix = prefix;
  }

  /** Records a problem at `path`; an absent node is located at its nearest present parent. */
  problem(path: FieldPath, code: ErrorCode, message: string, options: ProblemOptions = {}): void {
    let location = this.#locate(path, options.key);
    for (
      let up = path.length - 1;
      (location === undefined || location === this.#file) && up >= 0;
      up--
    ) {
      location = this.#locate(path.slice(0, up), options.key);
    }
    const field = fieldText([...this.#prefix, ...(options.shown ?? path)]);
    this.problems.push({
      severity: options.warning ? "warning" : "error",
      code,
      message: field === "" ? message : `${field}: ${message}`,
      location: location ?? this.#file,
      hint: options.hint,
      field: field === "" ? undefined : field,
    });
  }

  /**
   * Reads a mapping, reporting unknown keys with the closest known one (or an alias). Returns
   * undefined (after recording a problem) when the value is not a mapping.
   */
  mapping(
    value: unknown,
    path: FieldPath,
    known: readonly string[],
    aliases: Readonly<Record<string, string>> = {},
    what = "a mapping",
  ): Record<string, unknown> | undefined {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.problem(path, "plan.invalid_type", `expected ${what}, got ${typeName(value)}`);
      return undefined;
    }
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const near = closestMatch(key, known, { aliases });
      this.problem([...path, key], "plan.unknown_key", `unknown key '${key}'`, {
        key: true,
        hint: near ? `did you mean '${near}'?` : `known keys: ${known.join(", ")}`,
      });
    }
    return obj;
  }

  /** A string field; `required` reports a missing one, empty strings are refused. */
  string(
    obj: Record<string, unknown>,
    key: string,
    path: FieldPath,
    options: { required?: boolean; pattern?: RegExp; patternText?: string } = {},
  ): string | undefined {
    const value = obj[key];
    const at = [...path, key];
    if (value === undefined || value === null) {
      if (options.required) this.problem(at, "plan.missing_field", `'${key}' is required`);
      return undefined;
    }
    if (typeof value !== "string") {
      this.problem(at, "plan.invalid_type", `expected a string, got ${typeName(value)}`);
      return undefined;
    }
    if (value.trim() === "") {
      this.problem(at, "plan.invalid_value", "must not be empty");
      return undefined;
    }
    if (options.pattern && !options.pattern.test(value)) {
      this.problem(at, "plan.invalid_value", `'${value}' is not ${options.patternText}`);
      return undefined;
    }
    return value;
  }

  /** A value from a fixed list; a bad one lists the accepted values. */
  oneOf<T extends string | number>(
    obj: Record<string, unknown>,
    key: string,
    path: FieldPath,
    accepted: readonly T[],
    describe: (v: T) => string = String,
  ): T | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if ((accepted as readonly unknown[]).includes(value)) return value as T;
    const list = accepted.map(describe).join(", ");
    const near = typeof value === "string" ? closestMatch(value, accepted.map(String)) : undefined;
    this.problem(
      [...path, key],
      "plan.invalid_value",
      `${
        typeof value === "string"
          ? `'${value}'`
          : typeName(value) === "an integer"
          ? String(value)
          : typeName(value)
      } is not one of: ${list}`,
      { hint: near ? `did you mean '${near}'?` : undefined },
    );
    return undefined;
  }

  /** A positive integer. */
  positiveInt(obj: Record<string, unknown>, key: string, path: FieldPath): number | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      this.problem(
        [...path, key],
        "plan.invalid_value",
        `expected a positive integer, got ${
          typeof value === "number" ? String(value) : typeName(value)
        }`,
      );
      return undefined;
    }
    return value;
  }

  /**
   * A list of strings. Null or absent means empty; a scalar is an error (with `scalarHint`);
   * every non-string item is an error of its own. Returns the valid items.
   */
  stringList(
    obj: Record<string, unknown>,
    key: string,
    path: FieldPath,
    options: {
      code?: ErrorCode;
      what?: string;
      scalarHint?: string;
      check?: (item: string) => string | undefined;
    } = {},
  ): string[] {
    const value = obj[key];
    const at = [...path, key];
    const code = options.code ?? "plan.invalid_type";
    const what = options.what ?? "strings";
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problem(at, code, `must be a list of ${what}, got ${typeName(value)}`, {
        hint: options.scalarHint ??
          (typeof value === "string" ? `write '${key}: [${value}]'` : undefined),
      });
      return [];
    }
    const out: string[] = [];
    value.forEach((item, i) => {
      if (typeof item !== "string") {
        this.problem([...at, i], code, `expected a string, got ${typeName(item)}`);
        return;
      }
      if (item === "") {
        this.problem([...at, i], code, "must not be empty");
        return;
      }
      const bad = options.check?.(item);
      if (bad !== undefined) {
        this.problem([...at, i], code, bad);
        return;
      }
      out.push(item);
    });
    return out;
  }
}

/** Why a relative path from a plan is refused, or undefined when it is acceptable. */
export function relativePathProblem(path: string): string | undefined {
  try {
    checkRelativePath(path);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function position(problem: PlanProblem): [number, number] {
  const m = /:(\d+):(\d+)$/.exec(problem.location ?? "");
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Problems ordered by line and column (stable), so output follows the file. */
export function sortByLocation(problems: readonly PlanProblem[]): PlanProblem[] {
  return [...problems].sort((a, b) => {
    const [la, ca] = position(a);
    const [lb, cb] = position(b);
    return la - lb || ca - cb;
  });
}
