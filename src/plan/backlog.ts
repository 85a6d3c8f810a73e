// The backlog: one task per file in `.sdd/backlog/open/`, YAML or Markdown with YAML front
// matter, loaded in file-name order with the same error quality as plan files.
import { compareCodePoints } from "../canonical/mod.ts";
import { fileProblemAs, parseYamlLayer, readConfigFile } from "../config/mod.ts";
import { closestMatch } from "../errors/mod.ts";
import { backlogFolder, resolveInside } from "../io/mod.ts";
import { PlanLoadError, type PlanProblem } from "./errors.ts";
import { FieldReader, sortByLocation } from "./_reader.ts";
import { readStepFields, STEP_KEY_ALIASES, STEP_KEYS } from "./_step_fields.ts";
import { matchesTaskFilter, parseTaskFilter, unmatchedPatterns } from "./task_filter.ts";
import type { PlanGraph, PlanStep, StepFields } from "./types.ts";

/** File extensions a backlog item may have. */
export const BACKLOG_EXTENSIONS: readonly string[] = [".yaml", ".yml", ".md"];

/** Keys of a backlog item (front matter or YAML file). */
export const BACKLOG_KEYS: readonly string[] = [...STEP_KEYS, "depends_on"];

const BACKLOG_KEY_ALIASES: Readonly<Record<string, string>> = {
  ...STEP_KEY_ALIASES,
  depends: "depends_on",
  deps: "depends_on",
  needs: "depends_on",
  after: "depends_on",
};

/** What a backlog item's id (its file stem) may look like. */
export const BACKLOG_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** One backlog file: its name inside the folder and its text. */
export interface BacklogFile {
  /** File name (`fix-login.md`). */
  name: string;
  /** File content. */
  text: string;
}

/** One backlog item after loading. */
export interface BacklogItem {
  /** The id: the file name without its extension. */
  id: string;
  /** File as shown in messages. */
  file: string;
  /** Selected by the task filter. */
  selected: boolean;
}

/** Options of {@linkcode checkBacklog}. */
export interface BacklogOptions {
  /** `BERNSTEIN_TASK_FILTER` (comma-separated ids or globs); unset or blank runs everything. */
  filter?: string;
  /** Ids of closed items (`.sdd/backlog/closed/`): depending on one is already satisfied. */
  closedIds?: readonly string[];
  /** Folder shown in locations (default `.sdd/backlog/open`). */
  shownDir?: string;
}

/** Result of loading a backlog. */
export interface BacklogCheck {
  /** The selected items as a one-stage graph (`backlog`), present when nothing is an error. */
  graph?: PlanGraph;
  /** Every item found, in load order, with whether the filter selected it. */
  items: BacklogItem[];
  /** Errors and warnings, file by file. */
  problems: PlanProblem[];
}

/** Splits a backlog file name into id and extension; undefined when it is not an item. */
export function backlogId(name: string): { id: string; ext: string } | undefined {
  const ext = BACKLOG_EXTENSIONS.find((e) => name.endsWith(e));
  if (ext === undefined) return undefined;
  return { id: name.slice(0, -ext.length), ext };
}

interface FrontMatter {
  yaml: string;
  body: string;
  problem?: string;
}

/**
 * Splits Markdown into YAML front matter and body. The YAML text keeps the file's line
 * numbers (the opening `---` line becomes an empty line), so locations point into the file.
 */
export function splitFrontMatter(text: string): FrontMatter {
  const source = text.startsWith("\ufeff") ? text.slice(1) : text;
  const lines = source.split("\n");
  if (lines[0].replace(/\r$/, "").trimEnd() !== "---") return { yaml: "", body: source };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "").trimEnd();
    if (line === "---" || line === "...") {
      return { yaml: "\n" + lines.slice(1, i).join("\n"), body: lines.slice(i + 1).join("\n") };
    }
  }
  return {
    yaml: "",
    body: "",
    problem: "the front matter opened on line 1 is not closed by a '---' line",
  };
}

function firstHeading(body: string): string | undefined {
  for (const line of body.split("\n")) {
    if (line.trim() === "") continue;
    const m = /^#\s+(.+?)\s*#*\s*$/.exec(line.trim());
    return m ? m[1] : undefined;
  }
  return undefined;
}

interface ParsedItem {
  id: string;
  file: string;
  reader: FieldReader;
  fields?: StepFields;
  depends: string[];
}

function parseItem(file: BacklogFile, shownDir: string): ParsedItem | PlanProblem[] {
  const split = backlogId(file.name) as { id: string; ext: string };
  const shown = `${shownDir}/${file.name}`;
  const markdown = split.ext === ".md";
  let yamlText = file.text;
  let body = "";
  if (markdown) {
    const fm = splitFrontMatter(file.text);
    if (fm.problem !== undefined) {
      return [{
        severity: "error",
        code: "backlog.front_matter",
        message: fm.problem,
        location: `${shown}:1:1`,
      }];
    }
    yamlText = fm.yaml;
    body = fm.body.trim();
  }
  const parsed = parseYamlLayer(yamlText, shown, shown);
  if (parsed.problems.length > 0) {
    return parsed.problems.map((p) => ({
      ...fileProblemAs(p, "backlog"),
      message: p.code === "config.not_a_mapping"
        ? (markdown
          ? "the front matter must be a mapping (title, role, priority, …)"
          : "a backlog item must be a mapping (title, description, role, priority, …)")
        : p.message,
    }));
  }
  const reader = new FieldReader(parsed.layer.locate, shown);
  const raw = parsed.layer.raw;
  if ("id" in raw) {
    reader.problem(["id"], "plan.unknown_key", "unknown key 'id'", {
      key: true,
      hint: `an item's id is its file name ('${split.id}')`,
    });
  }
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => k !== "id"));
  reader.mapping(rest, [], BACKLOG_KEYS, BACKLOG_KEY_ALIASES);
  let title: string | undefined;
  let description: string | undefined;
  if (markdown) {
    if (body !== "" && raw.description !== undefined) {
      reader.problem(
        ["description"],
        "backlog.description_twice",
        "the description is given both here and as the Markdown body",
        { key: true },
      );
    } else if (body !== "") description = body;
    if (raw.title === undefined) {
      title = firstHeading(body);
      if (title === undefined) {
        reader.problem(
          [],
          "plan.missing_field",
          "'title' is required (in the front matter, or as a '# heading' opening the body)",
        );
      }
    }
  }
  const depends = reader.stringList(raw, "depends_on", [], { what: "backlog item ids" });
  // A Markdown item without any title was reported above; "" stands in so the other fields
  // are still checked.
  const headingTitle = markdown && raw.title === undefined ? (title ?? "") : undefined;
  const fields = readStepFields(reader, rest, [], {
    ...(headingTitle !== undefined ? { title: headingTitle } : {}),
    ...(description !== undefined ? { description } : {}),
  });
  if (!BACKLOG_ID_PATTERN.test(split.id)) {
    reader.problem(
      [],
      "backlog.bad_id",
      `the file name gives the id '${split.id}', which is not a safe id (letters, digits, '.', '_', '-'; starting with a letter or digit)`,
    );
  }
  return { id: split.id, file: shown, reader, fields, depends };
}

function findCycle(
  ids: readonly string[],
  deps: ReadonlyMap<string, readonly string[]>,
): string[] | undefined {
  const state = new Map<string, number>();
  const stack: string[] = [];
  let found: string[] | undefined;
  function visit(id: string): void {
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (found) return;
      if (state.get(d) === 1) {
        found = [...stack.slice(stack.indexOf(d)), d];
        return;
      }
      if (!state.has(d) && deps.has(d)) visit(d);
    }
    stack.pop();
    state.set(id, 2);
  }
  for (const id of ids) {
    if (!state.has(id)) visit(id);
    if (found) return found;
  }
  return undefined;
}

/**
 * Loads backlog files (pure): parses each, applies `BERNSTEIN_TASK_FILTER`, resolves
 * `depends_on` (open items must be selected too; closed ones count as done), refuses cycles,
 * and returns the selected items as a one-stage graph in file-name order.
 *
 * @example
 * ```ts
 * const { graph, problems } = checkBacklog(
 *   [{ name: "fix-login.md", text: "---\npriority: 1\n---\n# Fix the login\n" }],
 *   { filter: "fix-*" },
 * );
 * ```
 */
export function checkBacklog(
  files: readonly BacklogFile[],
  options: BacklogOptions = {},
): BacklogCheck {
  const shownDir = options.shownDir ?? ".sdd/backlog/open";
  const filter = parseTaskFilter(options.filter);
  const closed = new Set(options.closedIds ?? []);
  const problems: PlanProblem[] = [];
  // Per file, in load order: either its parse problems or the parsed item.
  const perFile: (ParsedItem | PlanProblem[])[] = [];
  const parsed: ParsedItem[] = [];
  const byId = new Map<string, ParsedItem>();
  const sorted = [...files].filter((f) => backlogId(f.name) !== undefined)
    .sort((a, b) => compareCodePoints(a.name, b.name));
  for (const file of sorted) {
    const item = parseItem(file, shownDir);
    if (Array.isArray(item)) {
      perFile.push(item);
      continue;
    }
    const twin = byId.get(item.id);
    if (twin !== undefined) {
      item.reader.problem(
        [],
        "backlog.duplicate_id",
        `'${item.id}' is already the id of ${twin.file}`,
      );
    } else byId.set(item.id, item);
    parsed.push(item);
    perFile.push(item);
  }
  const selected = (id: string) => matchesTaskFilter(filter, id);
  const items: BacklogItem[] = parsed.map((p) => ({
    id: p.id,
    file: p.file,
    selected: selected(p.id),
  }));
  const allIds = [...byId.keys()];
  for (const item of parsed) {
    if (!selected(item.id)) continue;
    item.depends.forEach((d, i) => {
      if (byId.has(d)) {
        if (!selected(d)) {
          item.reader.problem(
            ["depends_on", i],
            "backlog.filtered_dependency",
            `depends on '${d}', which BERNSTEIN_TASK_FILTER leaves out`,
            {
              hint:
                `add '${d}' to BERNSTEIN_TASK_FILTER, or close it (move it to .sdd/backlog/closed/)`,
            },
          );
        }
        return;
      }
      if (closed.has(d)) return;
      const near = closestMatch(d, allIds);
      item.reader.problem(
        ["depends_on", i],
        "backlog.unknown_dependency",
        `unknown backlog item '${d}' (not in open/ or closed/)`,
        {
          hint: near ? `did you mean '${near}'?` : undefined,
        },
      );
    });
  }
  const selectedItems = parsed.filter((p) => selected(p.id) && byId.get(p.id) === p);
  const deps = new Map(
    selectedItems.map((p) => [p.id, p.depends.filter((d) => byId.has(d) && selected(d))]),
  );
  const cycle = findCycle(selectedItems.map((p) => p.id), deps);
  if (cycle !== undefined) {
    const head = byId.get(cycle[0]) as ParsedItem;
    head.reader.problem(
      ["depends_on"],
      "backlog.dependency_cycle",
      `backlog items form a cycle: ${cycle.join(" → ")}`,
    );
  }
  for (const entry of perFile) {
    problems.push(...(Array.isArray(entry) ? entry : sortByLocation(entry.reader.problems)));
  }
  if (filter !== undefined) {
    for (const pattern of unmatchedPatterns(filter, allIds)) {
      const near = closestMatch(pattern, allIds);
      problems.push({
        severity: "warning",
        code: "backlog.filter_unmatched",
        message: `BERNSTEIN_TASK_FILTER pattern '${pattern}' selects no backlog item`,
        hint: near ? `did you mean '${near}'?` : undefined,
      });
    }
  }
  if (problems.some((p) => p.severity === "error")) return { items, problems };
  const steps: PlanStep[] = selectedItems.map((p) => ({
    id: p.id,
    stage: "backlog",
    ...(p.fields as StepFields),
    depends_on: (deps.get(p.id) ?? []).filter((d, i, all) => all.indexOf(d) === i),
    field: `backlog[${p.id}]`,
    location: `${p.file}:1:1`,
  }));
  const graph: PlanGraph = {
    name: "backlog",
    description: "",
    source: shownDir,
    stages: [{ name: "backlog", depends_on: [], step_ids: steps.map((s) => s.id) }],
    steps,
  };
  return { graph, items, problems };
}

async function listNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.startsWith(".")) continue;
      if ((entry.isFile || entry.isSymlink) && backlogId(entry.name) !== undefined) {
        names.push(entry.name);
      }
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort(compareCodePoints);
}

/**
 * Reads `<sdd>/backlog/open/` (and the ids in `closed/`) and loads it with
 * {@linkcode checkBacklog}. A file that leaves the folder through a symlink is refused.
 */
export async function readBacklog(
  sdd: string,
  options: Omit<BacklogOptions, "closedIds"> = {},
): Promise<BacklogCheck> {
  const openDir = backlogFolder(sdd, "open");
  const shownDir = options.shownDir ?? ".sdd/backlog/open";
  const files: BacklogFile[] = [];
  const refused: PlanProblem[] = [];
  for (const name of await listNames(openDir)) {
    try {
      const real = await resolveInside(openDir, name);
      const read = await readConfigFile(real, `${shownDir}/${name}`);
      if (read === undefined) continue; // removed since the listing
      if ("problem" in read) {
        refused.push(fileProblemAs(read.problem, "backlog"));
      } else files.push({ name, text: read.text });
    } catch (error) {
      refused.push({
        severity: "error",
        code: "backlog.unreadable",
        message: (error as Error).message,
        location: `${shownDir}/${name}`,
      });
    }
  }
  const closedIds = (await listNames(backlogFolder(sdd, "closed")))
    .map((n) => (backlogId(n) as { id: string }).id);
  const result = checkBacklog(files, { ...options, shownDir, closedIds });
  if (refused.length === 0) return result;
  return { items: result.items, problems: [...refused, ...result.problems] };
}

/** Like {@linkcode readBacklog}, but throws a {@linkcode PlanLoadError} when any item is bad. */
export async function loadBacklog(
  sdd: string,
  options: Omit<BacklogOptions, "closedIds"> = {},
): Promise<BacklogCheck & { graph: PlanGraph }> {
  const result = await readBacklog(sdd, options);
  if (result.graph === undefined) throw new PlanLoadError(result.problems);
  return result as BacklogCheck & { graph: PlanGraph };
}
