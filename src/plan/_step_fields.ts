// The fields a plan step and a backlog item share, read with precise errors.
import { EFFORTS } from "../config/mod.ts";
import { closestMatch } from "../errors/mod.ts";
import { readConnectionRequests } from "./connections.ts";
import { compileGlob } from "./glob.ts";
import { type AttachmentDeclaration, checkDeclarations } from "./host_attachment.ts";
import { type FieldPath, FieldReader, relativePathProblem, typeName } from "./_reader.ts";
import {
  type CompletionSignal,
  COMPLEXITIES,
  PRIORITIES,
  type Priority,
  PRIORITY_NAMES,
  SCOPES,
  SIGNAL_KINDS,
  STEP_FIELDS,
  type StepFields,
} from "./types.ts";

/** Most attachments one task may carry (issue: attachments, limits). */
export const MAX_ATTACHMENTS_PER_TASK = 20;

/** Keys of a plan step (its {@linkcode STEP_FIELDS}). */
export const STEP_KEYS: readonly string[] = STEP_FIELDS;

/** Common misnamings of step keys. */
export const STEP_KEY_ALIASES: Readonly<Record<string, string>> = {
  name: "title",
  prompt: "description",
  body: "description",
  adapter: "cli",
  agent: "cli",
  owned_files: "files",
  signals: "completion_signals",
  done_when: "completion_signals",
  attach: "attachments",
  images: "attachments",
  reasoning_effort: "effort",
};

const ROLE_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

function checkSignalPath(reader: FieldReader, path: FieldPath, value: string): boolean {
  const bad = relativePathProblem(value);
  if (bad !== undefined) {
    reader.problem(path, "plan.path_invalid", bad);
    return false;
  }
  return true;
}

function requireString(
  reader: FieldReader,
  value: unknown,
  path: FieldPath,
  what: string,
): string | undefined {
  if (typeof value !== "string") {
    reader.problem(path, "plan.invalid_type", `expected ${what}, got ${typeName(value)}`);
    return undefined;
  }
  if (value === "") {
    reader.problem(path, "plan.invalid_value", "must not be empty");
    return undefined;
  }
  return value;
}

function readCommand(reader: FieldReader, value: unknown, path: FieldPath): string[] | undefined {
  if (typeof value === "string") {
    reader.problem(
      path,
      "plan.invalid_type",
      "must be an argv list (commands never go through a shell)",
      {
        hint: `write [${value.split(/\s+/).filter(Boolean).join(", ")}]`,
      },
    );
    return undefined;
  }
  if (!Array.isArray(value) || value.length === 0) {
    reader.problem(
      path,
      "plan.invalid_type",
      `expected a non-empty argv list, got ${typeName(value)}`,
    );
    return undefined;
  }
  let ok = true;
  value.forEach((arg, i) => {
    if (typeof arg !== "string") {
      reader.problem([...path, i], "plan.invalid_type", `expected a string, got ${typeName(arg)}`);
      ok = false;
    }
  });
  if (ok && value[0] === "") {
    reader.problem([...path, 0], "plan.invalid_value", "the program must not be empty");
    ok = false;
  }
  return ok ? (value as string[]) : undefined;
}

function readSignal(
  reader: FieldReader,
  item: unknown,
  path: FieldPath,
): CompletionSignal | undefined {
  const entry = signalEntry(reader, item, path);
  if (entry === undefined) return undefined;
  const { kind, value } = entry;
  const at = [...path, kind];
  switch (kind) {
    case "path_exists": {
      const p = requireString(reader, value, at, "a relative path");
      return p !== undefined && checkSignalPath(reader, at, p) ? { kind, path: p } : undefined;
    }
    case "glob_exists":
      return readGlobSignal(reader, value, at);
    case "file_contains":
      return readFileContainsSignal(reader, value, at);
    case "test_passes":
      return readTestPassesSignal(reader, value, at);
    default: {
      const near = closestMatch(kind, SIGNAL_KINDS);
      reader.problem(
        at,
        "plan.invalid_value",
        `unknown signal '${kind}'; accepted: ${SIGNAL_KINDS.join(", ")}`,
        { key: true, hint: near ? `did you mean '${near}'?` : undefined },
      );
      return undefined;
    }
  }
}

/** A signal's one key and its value (a problem when it is not a mapping with one key). */
function signalEntry(
  reader: FieldReader,
  item: unknown,
  path: FieldPath,
): { kind: string; value: unknown } | undefined {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    reader.problem(
      path,
      "plan.invalid_type",
      `expected a mapping with one key (${SIGNAL_KINDS.join(", ")}), got ${typeName(item)}`,
      { hint: typeof item === "string" ? `write '- path_exists: ${item}'` : undefined },
    );
    return undefined;
  }
  const entries = Object.entries(item);
  if (entries.length !== 1) {
    const keys = entries.map(([key]) => key);
    const type = entries.find(([key]) => key === "type")?.[1];
    reader.problem(
      path,
      "plan.invalid_value",
      `a signal has exactly one key (${SIGNAL_KINDS.join(", ")}), got ${
        keys.length === 0 ? "none" : keys.join(", ")
      }`,
      {
        hint: keys.includes("type")
          ? `write '- ${String(type)}: …' (one key per signal)`
          : undefined,
      },
    );
    return undefined;
  }
  const [[kind, value]] = entries;
  return { kind, value };
}

function readGlobSignal(
  reader: FieldReader,
  value: unknown,
  at: FieldPath,
): CompletionSignal | undefined {
  const g = requireString(reader, value, at, "a glob relative to the worktree");
  if (g === undefined || !checkSignalPath(reader, at, g)) return undefined;
  try {
    compileGlob(g);
  } catch (error) {
    reader.problem(at, "plan.invalid_value", (error as Error).message);
    return undefined;
  }
  return { kind: "glob_exists", glob: g };
}

function readFileContainsSignal(
  reader: FieldReader,
  value: unknown,
  at: FieldPath,
): CompletionSignal | undefined {
  const spec = reader.mapping(value, at, ["path", "contains", "regex"], {
    text: "contains",
    pattern: "regex",
  }, "a mapping {path, contains} or {path, regex}");
  if (spec === undefined) return undefined;
  const p = reader.string(spec, "path", at, { required: true });
  const okPath = p !== undefined && checkSignalPath(reader, [...at, "path"], p);
  const hasContains = spec.contains !== undefined;
  if (hasContains === (spec.regex !== undefined)) {
    reader.problem(
      at,
      "plan.invalid_value",
      "give exactly one of 'contains' (a substring) or 'regex'",
    );
    return undefined;
  }
  if (hasContains) {
    const c = reader.string(spec, "contains", at);
    return okPath && c !== undefined ? { kind: "file_contains", path: p, contains: c } : undefined;
  }
  const r = reader.string(spec, "regex", at);
  if (r === undefined) return undefined;
  try {
    new RegExp(r, "u");
  } catch (error) {
    reader.problem(
      [...at, "regex"],
      "plan.invalid_value",
      `invalid regular expression: ${(error as Error).message}`,
    );
    return undefined;
  }
  return okPath ? { kind: "file_contains", path: p, regex: r } : undefined;
}

/** `test_passes: [argv…]` or `test_passes: {command: [argv…], timeout_s}`. */
function readTestPassesSignal(
  reader: FieldReader,
  value: unknown,
  at: FieldPath,
): CompletionSignal | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const command = readCommand(reader, value, at);
    return command === undefined ? undefined : { kind: "test_passes", command };
  }
  const spec = reader.mapping(value, at, ["command", "timeout_s"], {
    argv: "command",
    timeout: "timeout_s",
  });
  if (spec === undefined) return undefined;
  if (spec.command === undefined) {
    reader.problem([...at, "command"], "plan.missing_field", "'command' is required");
    return undefined;
  }
  const command = readCommand(reader, spec.command, [...at, "command"]);
  const t = spec.timeout_s;
  if (t !== undefined && (typeof t !== "number" || !(t > 0) || !Number.isFinite(t))) {
    reader.problem(
      [...at, "timeout_s"],
      "plan.invalid_value",
      `expected a positive number of seconds, got ${
        typeof t === "number" ? String(t) : typeName(t)
      }`,
    );
    return undefined;
  }
  if (command === undefined) return undefined;
  return t === undefined
    ? { kind: "test_passes", command }
    : { kind: "test_passes", command, timeout_s: t };
}

function readAttachments(
  reader: FieldReader,
  obj: Record<string, unknown>,
  path: FieldPath,
  title: string | undefined,
): AttachmentDeclaration[] {
  const value = obj.attachments;
  const step = title === undefined ? "this step" : `step '${title}'`;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    reader.problem(
      [...path, "attachments"],
      "attach.invalid",
      `attachments of ${step} must be a list of file paths, got ${typeName(value)}`,
      { hint: typeof value === "string" ? `write 'attachments: [${value}]'` : undefined },
    );
    return [];
  }
  const checked = checkDeclarations(value, {
    pathProblem: relativePathProblem,
    max: MAX_ATTACHMENTS_PER_TASK,
  });
  for (const p of checked.problems) {
    const message = p.path.length === 0 ? `${step} ${p.message}` : p.message;
    reader.problem([...path, "attachments", ...p.path], "attach.invalid", message, {
      hint: p.hint,
    });
  }
  return checked.declarations;
}

/**
 * Reads the step fields of `obj` (already checked to be a mapping with known keys). Returns
 * undefined when a required field is missing or invalid; every problem is recorded.
 */
export function readStepFields(
  reader: FieldReader,
  obj: Record<string, unknown>,
  path: FieldPath,
  options: { title?: string; description?: string } = {},
): StepFields | undefined {
  const before = reader.problems.filter((p) => p.severity === "error").length;
  const title = options.title ?? reader.string(obj, "title", path, { required: true });
  let description = options.description ?? "";
  if (
    options.description === undefined && obj.description !== undefined && obj.description !== null
  ) {
    if (typeof obj.description === "string") description = obj.description;
    else {reader.problem(
        [...path, "description"],
        "plan.invalid_type",
        `expected a string, got ${typeName(obj.description)}`,
      );}
  }
  const role = reader.string(obj, "role", path, {
    pattern: ROLE_PATTERN,
    patternText: "a role name (lowercase letters, digits, '-' or '_')",
  }) ?? "backend";
  const priority = reader.oneOf<Priority>(
    obj,
    "priority",
    path,
    PRIORITIES,
    (p) => `${p} (${PRIORITY_NAMES[p]})`,
  ) ?? 2;
  const scope = reader.oneOf(obj, "scope", path, SCOPES) ?? "medium";
  const complexity = reader.oneOf(obj, "complexity", path, COMPLEXITIES) ?? "medium";
  const cli = reader.string(obj, "cli", path);
  const model = reader.string(obj, "model", path);
  const effort = reader.oneOf(obj, "effort", path, EFFORTS);
  const files = reader.stringList(obj, "files", path, {
    what: "relative paths",
    check: relativePathProblem,
  });
  const completion_signals: CompletionSignal[] = [];
  const signals = obj.completion_signals;
  if (signals !== undefined && signals !== null) {
    if (!Array.isArray(signals)) {
      reader.problem(
        [...path, "completion_signals"],
        "plan.invalid_type",
        `must be a list of signals, got ${typeName(signals)}`,
      );
    } else {
      signals.forEach((item, i) => {
        const s = readSignal(reader, item, [...path, "completion_signals", i]);
        if (s !== undefined) completion_signals.push(s);
      });
    }
  }
  const attachments = readAttachments(reader, obj, path, title);
  const connections = readConnectionRequests(obj.connections);
  for (const p of connections.problems) {
    const at = p.index === undefined ? [...path, "connections"] : [...path, "connections", p.index];
    reader.problem(at, "plan.invalid_value", p.message, {
      hint: "connections: [prod-github] or [{name: prod-github, env: GITHUB_TOKEN}]",
    });
  }
  const after = reader.problems.filter((p) => p.severity === "error").length;
  if (after > before || title === undefined) return undefined;
  return {
    title,
    description,
    role,
    priority,
    scope,
    complexity,
    ...(cli !== undefined ? { cli } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(effort !== undefined ? { effort } : {}),
    files,
    completion_signals,
    attachments,
    ...(connections.requests.length > 0 ? { connections: connections.requests } : {}),
  };
}
