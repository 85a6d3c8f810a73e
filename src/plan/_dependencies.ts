// `depends_on` of a stage or a step: names (plain dependencies) or `{stage|step: NAME,
// condition: EXPR}` mappings (conditional dependencies: the recovery pattern), read with
// precise errors. References are resolved by the loader, which knows every stage and step.
import { parseCondition } from "./condition.ts";
import { type FieldPath, FieldReader, typeName } from "./_reader.ts";

/** One `depends_on` entry as written. */
export interface RawDependency {
  /** The stage name, or the step id or title, it names. */
  ref: string;
  /** The condition, when the entry is conditional. */
  condition?: string;
  /** Where it is (`…depends_on[i]`). */
  path: FieldPath;
}

/** Reads `obj.depends_on` of a stage (`kind` "stage") or a step ("step"). */
export function readDependencies(
  reader: FieldReader,
  obj: Record<string, unknown>,
  path: FieldPath,
  kind: "stage" | "step",
): RawDependency[] {
  const value = obj.depends_on;
  const at = [...path, "depends_on"];
  if (value === undefined || value === null) return [];
  const what = kind === "stage" ? "stage names" : "step ids or titles";
  if (!Array.isArray(value)) {
    reader.problem(at, "plan.invalid_type", `must be a list of ${what}, got ${typeName(value)}`, {
      hint: typeof value === "string" ? `write 'depends_on: [${value}]'` : undefined,
    });
    return [];
  }
  const out: RawDependency[] = [];
  value.forEach((item, i) => {
    const itemPath = [...at, i];
    if (typeof item === "string") {
      if (item.trim() === "") reader.problem(itemPath, "plan.invalid_value", "must not be empty");
      else out.push({ ref: item, path: itemPath });
      return;
    }
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      reader.problem(
        itemPath,
        "plan.invalid_type",
        `expected a ${kind} name or {${kind}, condition}, got ${typeName(item)}`,
      );
      return;
    }
    const entry = reader.mapping(
      item,
      itemPath,
      [kind, "condition"],
      { source: kind, on: kind, if: "condition", when: "condition" },
      `{${kind}, condition}`,
    );
    if (entry === undefined) return;
    const ref = reader.string(entry, kind, itemPath, { required: true });
    const condition = reader.string(entry, "condition", itemPath);
    if (ref === undefined) return;
    if (condition !== undefined) {
      const parsed = parseCondition(condition);
      if (!parsed.ok) {
        reader.problem(
          [...itemPath, "condition"],
          "plan.invalid_condition",
          `${parsed.problem} (column ${parsed.column} of the condition)`,
          {
            hint:
              "a condition compares status, result or output with ==, !=, in, not in or contains, joined by and, or, not: status == 'failed'",
          },
        );
        return;
      }
    }
    out.push({ ref, ...(condition === undefined ? {} : { condition }), path: itemPath });
  });
  const conditional = out.filter((d) => d.condition !== undefined);
  for (const extra of conditional.slice(1)) {
    reader.problem(
      extra.path,
      "plan.conditional_twice",
      `a ${kind} has at most one conditional dependency (the failure it recovers from)`,
    );
  }
  return out;
}
