// `${var:NAME}` references in plan steps and prompts (pure): which names a text reads, and the
// text with each reference replaced by the value it was pinned to.
import { FleetError } from "./errors.ts";
import { isFleetName } from "./names.ts";

const REFERENCE = /\$\{var:([^}]*)\}/g;

/**
 * The variable names a text references, in first-use order, without repeats. A reference whose
 * name is not a fleet name is `fleet.bad_reference` (naming `where`).
 *
 * @example
 * ```ts
 * variableReferences("limit ${var:threshold} of ${var:mode}", "step 1"); // ["threshold", "mode"]
 * ```
 */
export function variableReferences(text: string, where: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const name = m[1];
    if (!isFleetName(name)) {
      throw new FleetError(
        "fleet.bad_reference",
        `${where}: '\${var:${name}}' does not name a variable ([a-z0-9][a-z0-9._-]*)`,
      );
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** `text` with every `${var:NAME}` replaced by `values[NAME]` (every name must be there). */
export function substituteVariables(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(REFERENCE, (whole, name: string) => values.get(name) ?? whole);
}
