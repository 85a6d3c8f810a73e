// What the gate and the spawn provider share: a declaration (field path, path, range), the item
// it becomes once read and screened, the report rows, and the one place that adds an item to a
// task's list (a file declared twice is attached once).
import type { BernsteinError } from "../errors/mod.ts";
import type { AttachmentRow, RunWideEntry } from "./record.ts";
import {
  type AttachmentDeclaration,
  checkDeclarations,
  type HostAttachment,
  hostBytes,
} from "../plan/mod.ts";
import { AttachmentError } from "./errors.ts";
import { type AttachmentKind, screenAttachment, type Screened, screenText } from "./screen.ts";
import { listFolder } from "./folder.ts";
import { locateSource, readSource } from "./source.ts";
import { type AttachmentSpec, rangeText } from "./spec.ts";
import type { WireAttachment } from "./wire.ts";

/** One declaration: where it came from and what was asked for. */
export interface Declared {
  /** Field path (`run.attach[0]`, `stages[0].steps[1].attachments[2]`). */
  field: string;
  /** Path as declared. */
  path: string;
  /** Parsed declaration. */
  spec: AttachmentSpec;
}

/** A declaration read and screened, ready to attest. */
export interface Item {
  /** Field path of the declaration. */
  field: string;
  /** Path as declared. */
  path: string;
  /** De-duplication key: the real path and the range. */
  key: string;
  /** What goes into the prompt. */
  wire: WireAttachment;
  /** Kind of the attached bytes. */
  kind: AttachmentKind;
  /** Whole or partial. */
  outcome: "attached" | "partial";
  /** Why it is partial. */
  reason: string | null;
}

/** A run-wide declaration and, unless it was refused, its item. */
export interface RunWideItem {
  /** The record's entry. */
  entry: RunWideEntry;
  /** The item (absent when not attached). */
  item?: Item;
}

/** What reading one declaration gave. */
export type ScreenResult =
  | { status: "ok"; item: Item; real: string }
  | { status: "denied"; reason: string }
  | { status: "unreadable"; reason: string };

/** The range key of a spec (`40-80`, `120-`, "" for the whole file). */
export function rangeKey(spec: AttachmentSpec): string {
  return rangeText(spec);
}

function wireOf(screened: Screened, label: string): WireAttachment {
  const wire: WireAttachment = {
    mime: screened.mime,
    sha256: screened.sha256,
    bytes: screened.bytes,
  };
  if (screened.kind === "text") wire.path = label;
  if (screened.firstLine !== undefined) wire.firstLine = screened.firstLine;
  return wire;
}

/** How a folder is named in messages and its block's `path` (`docs/`, `./` for the root). */
function folderLabel(rel: string): string {
  return rel === "" ? "./" : `${rel}/`;
}

/** A folder as its listing, screened as text (a cut listing is partial, with the reason). */
async function screenFolder(
  real: string,
  rel: string,
  d: Declared,
  deny: readonly string[],
): Promise<Screened> {
  const listing = await listFolder(real, rel, deny);
  const shownPath = folderLabel(rel);
  const screened = screenAttachment(listing.bytes, d.spec, { field: d.field, shownPath });
  if (listing.reason === null) return screened;
  const reason = [listing.reason, screened.reason].filter((r) => r !== null).join("; ");
  return { ...screened, outcome: "partial", reason };
}

/**
 * Locates, reads and screens one declaration. The path policy gives `denied` or `unreadable`;
 * a file that cannot be attached at all (binary, over the read limit, a bad range) throws
 * `attach.invalid` with the field path.
 */
export async function screenDeclared(
  d: Declared,
  options: { root: string; base: string; deny: readonly string[] },
): Promise<ScreenResult> {
  const found = await locateSource(d.spec.path, options);
  if (found.status !== "ok") return found;
  const screened = found.folder
    ? await screenFolder(found.real, found.rel, d, options.deny)
    : screenAttachment(await readSource(found.real, d.field), d.spec, {
      field: d.field,
      shownPath: found.rel,
    });
  return {
    status: "ok",
    real: found.real,
    item: {
      field: d.field,
      path: d.path,
      key: `${found.real}\0${rangeKey(d.spec)}`,
      wire: wireOf(screened, found.folder ? folderLabel(found.rel) : found.rel),
      kind: screened.kind,
      outcome: screened.outcome,
      reason: screened.reason,
    },
  };
}

/**
 * An attachment held by value (checked at the door: name, MIME type against the bytes, sizes)
 * as its item: text screened as text (line-numbered, cut at whole lines past the limit, never
 * sniffed as anything else), an image whole. The name is its label.
 */
export function hostItem(field: string, held: HostAttachment): Item {
  const bytes = hostBytes(held);
  const screened: Screened = "text" in held
    ? screenText(bytes, { path: held.name }, { field, shownPath: held.name })
    : screenAttachment(bytes, { path: held.name }, { field, shownPath: held.name });
  if (!("text" in held) && screened.mime !== held.image.mime) {
    throw new AttachmentError(`declared ${held.image.mime}, but the bytes are ${screened.mime}`, {
      location: `${field}.image.mime`,
    });
  }
  return {
    field,
    path: held.name,
    key: `\0held\0${held.name}`,
    wire: wireOf(screened, held.name),
    kind: screened.kind,
    outcome: screened.outcome,
    reason: screened.reason,
  };
}

/**
 * A task's declaration list checked again with the door's rules (a task created before this
 * version, or a draft built in code): the valid declarations, and each problem as an
 * `attach.invalid` error at its field path.
 */
export function taskDeclarations(
  field: string,
  list: readonly unknown[],
): { declarations: AttachmentDeclaration[]; problems: AttachmentError[] } {
  // The count is checked after de-duplication, with the run-wide ones (checkAttachmentCount).
  const checked = checkDeclarations(list, { max: Number.MAX_SAFE_INTEGER });
  const problems = checked.problems.map((p) =>
    new AttachmentError(p.message, {
      location: field + p.path.map((s) => typeof s === "number" ? `[${s}]` : `.${s}`).join(""),
      hint: p.hint,
    })
  );
  return { declarations: checked.declarations, problems };
}

/** The report row of an item given to a task. */
export function itemRow(taskId: string | null, item: Item): AttachmentRow {
  return {
    task_id: taskId,
    field: item.field,
    path: item.path,
    kind: item.kind,
    mime: item.wire.mime,
    sha256: item.wire.sha256,
    size: item.wire.bytes.length,
    outcome: item.outcome,
    reason: item.reason,
  };
}

/** The report row of a declaration that was not attached. */
export function notAttachedRow(
  taskId: string | null,
  d: { field: string; path: string },
  reason: string,
): AttachmentRow {
  return {
    task_id: taskId,
    field: d.field,
    path: d.path,
    kind: null,
    mime: null,
    sha256: null,
    size: null,
    outcome: "not_attached",
    reason,
  };
}

/** A task's attachments so far and their report rows, in declaration order. */
export class TaskItems {
  /** Items in prompt order (each file and range once). */
  readonly items: Item[] = [];
  /** One row per declaration. */
  readonly rows: AttachmentRow[] = [];
  readonly #taskId: string;

  constructor(taskId: string) {
    this.#taskId = taskId;
  }

  /** Adds an item; a second declaration of the same file and range is a row, not a block. */
  add(item: Item): void {
    const same = this.items.find((x) => x.key === item.key);
    if (same !== undefined) {
      this.rows.push({
        ...itemRow(this.#taskId, same),
        field: item.field,
        path: item.path,
        reason: `also declared as ${same.field}; attached once`,
      });
      return;
    }
    this.items.push(item);
    this.rows.push(itemRow(this.#taskId, item));
  }

  /** Records a declaration that is not attached, with the reason. */
  withhold(d: { field: string; path: string }, reason: string): void {
    this.rows.push(notAttachedRow(this.#taskId, d, reason));
  }
}

/** The run-wide items of a task (each file once) and their rows, in declaration order. */
export function runWideFor(taskId: string, runWide: readonly RunWideItem[]): TaskItems {
  const task = new TaskItems(taskId);
  for (const { entry, item } of runWide) {
    if (item === undefined) task.withhold(entry, entry.reason ?? "not attached");
    else task.add(item);
  }
  return task;
}

/** Field path of a task's own attachment list (`stages[0].steps[1].attachments`). */
export function taskField(
  task: { id?: string; title: string; metadata?: Record<string, unknown> },
): string {
  const field = task.metadata?.field;
  return typeof field === "string" && field !== ""
    ? `${field}.attachments`
    : `task ${task.id ?? task.title}: attachments`;
}

/** A refusal the gate collects instead of stopping at (the field path is its location). */
export type Problem = BernsteinError;
