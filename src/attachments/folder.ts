// A folder declared as an attachment becomes its listing: every entry in path order with its
// size, links never followed, whatever the path policy withholds (bernstein's state, git
// internals, `attachments.deny`) left out and only counted. The listing is text, screened and
// attested like any text attachment; the files' contents are not attached.
import { sep } from "node:path";
import { DEFAULT_DENY, deniedBy } from "./source.ts";

/** Most entries a folder's listing shows. */
export const MAX_LISTING_ENTRIES = 1000;

/** A folder's listing: its text and, when it was cut, why. */
export interface FolderListing {
  /** The listing (the attested bytes). */
  bytes: Uint8Array;
  /** Why it is partial (null when complete). */
  reason: string | null;
}

interface ListingState {
  lines: string[];
  files: number;
  folders: number;
  bytes: number;
  withheld: number;
  cut: boolean;
}

function sizeColumn(size: number | "-"): string {
  return String(size).padStart(12);
}

async function walk(
  real: string,
  rel: string,
  deny: readonly string[],
  state: ListingState,
): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(real)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
    // The path policy holds inside a folder too: state, git internals and denied names are
    // neither listed nor entered (only counted).
    if (deniedBy(childRel, deny) !== undefined) {
      state.withheld++;
      continue;
    }
    if (state.lines.length >= MAX_LISTING_ENTRIES) {
      state.cut = true;
      return;
    }
    const path = `${real}${sep}${e.name}`;
    if (e.isSymlink) {
      // Never followed: a link may lead out of the project.
      state.lines.push(`${sizeColumn("-")}  ${childRel} -> (link, not followed)`);
    } else if (e.isDirectory) {
      state.folders++;
      state.lines.push(`${sizeColumn("-")}  ${childRel}/`);
      await walk(path, childRel, deny, state);
      if (state.cut) return;
    } else {
      const size = (await Deno.lstat(path)).size;
      state.files++;
      state.bytes += size;
      state.lines.push(`${sizeColumn(size)}  ${childRel}`);
    }
  }
}

/**
 * A located folder as a listing: one line per entry in path order (size in bytes, or `-` for
 * folders and links), links never followed, entries the path policy withholds left out and
 * counted, at most {@linkcode MAX_LISTING_ENTRIES} lines (then partial, with the reason).
 */
export async function listFolder(
  real: string,
  rel: string,
  deny: readonly string[] = DEFAULT_DENY,
): Promise<FolderListing> {
  const state: ListingState = {
    lines: [],
    files: 0,
    folders: 0,
    bytes: 0,
    withheld: 0,
    cut: false,
  };
  await walk(real, rel, deny, state);
  const shown = rel === "" ? "./" : `${rel}/`;
  const withheld = state.withheld > 0 ? `; ${state.withheld} withheld by the path policy` : "";
  const header = `# folder ${shown}: ${state.files} file(s), ${state.folders} folder(s), ` +
    `${state.bytes} bytes${withheld} (a listing; contents not attached)`;
  const text = [header, ...state.lines].join("\n") + "\n";
  return {
    bytes: new TextEncoder().encode(text),
    reason: state.cut
      ? `${shown} has more than ${MAX_LISTING_ENTRIES} entries; the listing shows the first ${MAX_LISTING_ENTRIES}`
      : null,
  };
}
