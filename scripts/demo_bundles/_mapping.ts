// The references article12-mapping.md makes into a compliance pack, and which of them the
// pack lacks. A reference is written `pack:MEMBER`, `pack:MEMBER:/json/pointer` (a field of
// a JSON member), `pack:lineage-log.jsonl?artefact_path=PATH` (an entry on that artefact) or
// `pack:article12-evidence.csv#COLUMN`; `<…>` in a member name stands for any value there.
import { memberKind } from "./_summary.ts";

const REFERENCE = /`pack:([^`]+)`/g;

/** Every `pack:…` reference of a Markdown text, in order, without the prefix. */
export function mappingReferences(markdown: string): string[] {
  return [...markdown.matchAll(REFERENCE)].map((m) => m[1]);
}

function jsonPointerExists(value: unknown, pointer: string): boolean {
  let here: unknown = value;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (here === null || typeof here !== "object" || !Object.hasOwn(here, key)) return false;
    here = (here as Record<string, unknown>)[key];
  }
  return true;
}

function exists(ref: string, members: ReadonlyMap<string, Uint8Array>): boolean {
  const at = ref.search(/:\/|\?|#/);
  const name = at < 0 ? ref : ref.slice(0, at);
  const rest = at < 0 ? "" : ref.slice(at);
  const found = name.includes("<")
    ? [...members.keys()].filter((m) => memberKind(m) === name)
    : members.has(name)
    ? [name]
    : [];
  if (found.length === 0) return false;
  if (rest === "") return true;
  const text = new TextDecoder().decode(members.get(found[0]));
  if (rest.startsWith(":/")) {
    try {
      return jsonPointerExists(JSON.parse(text), rest.slice(1));
    } catch {
      return false;
    }
  }
  if (rest.startsWith("?artefact_path=")) {
    const path = rest.slice("?artefact_path=".length);
    return text.split("\n").filter((l) => l !== "").some((l) =>
      (JSON.parse(l) as { artefact_path?: string }).artefact_path === path
    );
  }
  if (rest.startsWith("#")) return (text.split("\n")[0] ?? "").split(",").includes(rest.slice(1));
  return false;
}

/** The references of `markdown` that `members` (a pack's members by name) does not hold. */
export function missingReferences(
  markdown: string,
  members: ReadonlyMap<string, Uint8Array>,
): string[] {
  return mappingReferences(markdown).filter((ref) => !exists(ref, members));
}
