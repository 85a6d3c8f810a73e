// A tool call as the policy sees it: the CLI's own tool name and input, the family the tool
// belongs to across CLIs (Claude's `Bash`, gemini's `run_shell_command` and codex's
// `exec_command` are all `bash`), and the paths and text it touches, with paths made
// relative to the agent's worktree when they lie inside it — so one rule (`tool: bash`,
// `input_pattern: src/*`) means the same thing for every agent.
import { isAbsolute, normalize, relative, resolve } from "node:path";

/** Tool families shared by all CLIs. */
export const TOOL_FAMILIES = [
  "read",
  "write",
  "edit",
  "delete",
  "bash",
  "grep",
  "glob",
  "list",
  "fetch",
  "search",
  "agent",
  "other",
] as const;

/** One of {@linkcode TOOL_FAMILIES}. */
export type ToolFamily = typeof TOOL_FAMILIES[number];

const FAMILY_BY_NAME: Readonly<Record<string, ToolFamily>> = {
  read: "read",
  read_file: "read",
  read_many_files: "read",
  notebookread: "read",
  view: "read",
  write: "write",
  write_file: "write",
  create_file: "write",
  edit: "edit",
  multiedit: "edit",
  replace: "edit",
  notebookedit: "edit",
  apply_patch: "edit",
  patch: "edit",
  delete: "delete",
  bash: "bash",
  shell: "bash",
  run_shell_command: "bash",
  exec_command: "bash",
  local_shell: "bash",
  grep: "grep",
  rg: "grep",
  search_file_content: "grep",
  glob: "glob",
  ls: "list",
  list: "list",
  list_directory: "list",
  webfetch: "fetch",
  web_fetch: "fetch",
  fetch: "fetch",
  websearch: "search",
  web_search: "search",
  google_web_search: "search",
  task: "agent",
  agent: "agent",
};

/** The family of a tool name (case-insensitive); `other` when unknown. */
export function toolFamily(name: string): ToolFamily {
  return FAMILY_BY_NAME[name.toLowerCase()] ?? "other";
}

/** Input members that hold one path, in the order they are looked for. */
export const PATH_FIELDS = [
  "file_path",
  "filePath",
  "path",
  "absolute_path",
  "notebook_path",
  "dir_path",
  "directory",
] as const;
/** Input members that hold a shell command. */
export const COMMAND_FIELDS = ["command", "cmd"] as const;

/** A tool call to decide on. */
export interface ToolCall {
  /** The tool name as the CLI sent it. */
  tool: string;
  /** The tool input as the CLI sent it. */
  input: Record<string, unknown>;
}

/** Where the call happens; all paths absolute. */
export interface CallPlace {
  /** The agent's working directory (its worktree). */
  cwd: string;
  /** The agent's private HOME, when it has one (`~` in its shell text). */
  home?: string;
}

/** A string value of the input, with its member path. */
export interface InputString {
  /** `file_path`, `edits.0.new_string`, … */
  field: string;
  /** The value. */
  value: string;
}

/** Every string value in the input, depth first (arrays and objects followed, 10 levels). */
export function inputStrings(input: unknown, prefix = "", depth = 0): InputString[] {
  if (typeof input === "string") return [{ field: prefix, value: input }];
  if (depth > 10 || typeof input !== "object" || input === null) return [];
  const out: InputString[] = [];
  const entries = Array.isArray(input)
    ? input.map((v, i) => [String(i), v] as const)
    : Object.entries(input);
  for (const [k, v] of entries) {
    out.push(...inputStrings(v, prefix === "" ? k : `${prefix}.${k}`, depth + 1));
  }
  return out;
}

/** The call's full content: every string value, joined by newlines (for content_patterns). */
export function fullContent(call: ToolCall): string {
  return inputStrings(call.input).map((s) => s.value).join("\n");
}

/** An absolute, normalized path for a path value (relative values are relative to cwd). */
export function absolutePath(value: string, place: CallPlace): string {
  if (value.startsWith("~/") && place.home !== undefined) {
    return resolve(place.home, value.slice(2));
  }
  if (value === "~" && place.home !== undefined) return place.home;
  return isAbsolute(value) ? normalize(value) : resolve(place.cwd, value);
}

/**
 * The path as rules see it: relative to cwd when inside it (`.` for cwd itself), else
 * absolute; `..` segments resolved; a trailing `/` kept (a directory written as one).
 */
export function rulePath(value: string, place: CallPlace): string {
  const abs = absolutePath(value, place);
  const rel = relative(place.cwd, abs);
  const slash = value.endsWith("/") && value !== "/" ? "/" : "";
  if (rel === "") return "." + slash;
  const out = rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
  return out === "/" ? out : out + slash;
}

/** The path values of a call's input (one-path members, then `paths` lists). */
export function callPaths(call: ToolCall): string[] {
  const out: string[] = [];
  for (const f of PATH_FIELDS) {
    const v = call.input[f];
    if (typeof v === "string" && v !== "") out.push(v);
  }
  const list = call.input.paths;
  if (Array.isArray(list)) { for (const v of list) if (typeof v === "string") out.push(v); }
  if (toolFamily(call.tool) === "edit" && typeof call.input.input === "string") {
    out.push(...patchPaths(call.input.input));
  }
  if (typeof call.input.patch === "string") out.push(...patchPaths(call.input.patch));
  return out;
}

/** Files named by an apply_patch envelope (`*** Update File: path`, `*** Add File: …`). */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)) {
    out.push(m[1].trim());
  }
  for (const m of patch.matchAll(/^\*\*\* Move to: (.+)$/gm)) out.push(m[1].trim());
  return out;
}

/** The shell command of a call, when it has one. */
export function callCommand(call: ToolCall): string | undefined {
  for (const f of COMMAND_FIELDS) {
    const v = call.input[f];
    if (typeof v === "string") return v;
    // codex passes argv lists (`["bash", "-lc", "…"]`): the last element is the script.
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(" ");
  }
  return undefined;
}

/**
 * The value of `field` for rule matching: the member itself when present; else the alias
 * `path` (first path member) or `command` (first command member). Path values are in
 * rule form ({@linkcode rulePath}). Lists of paths give every element.
 */
export function fieldValues(call: ToolCall, field: string, place: CallPlace): string[] {
  const raw = call.input[field];
  const isPathField = (PATH_FIELDS as readonly string[]).includes(field) || field === "paths";
  if (typeof raw === "string") return [isPathField ? rulePath(raw, place) : raw];
  if (Array.isArray(raw) && raw.every((v) => typeof v === "string")) {
    return raw.map((v) => (isPathField ? rulePath(v, place) : v));
  }
  if (raw !== undefined) return [];
  if (field === "path") return callPaths(call).map((p) => rulePath(p, place));
  if (field === "command") {
    const c = callCommand(call);
    return c === undefined ? [] : [c];
  }
  return [];
}
