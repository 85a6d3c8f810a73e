// What the pack's window phase reads of each entry, made where the batch is checked (a worker
// or this thread): the few fields its facts and period check read, and the batch's rows of
// `article12-evidence.csv` as UTF-8 bytes. Whole entries then never cross threads: a worker
// sends these back (the CSV bytes transferred, not copied) instead of cloning every field of
// every entry to the main thread, where they would wait, be promoted and be collected.
import type { LineageEntry } from "../lineage/mod.ts";
import { csvRow, type FactFields } from "../pack_format/mod.ts";

/** What the window phase reads of one entry (its facts' fields, which hold its links too). */
export type WindowEntry = FactFields;

/** A batch's window rows: per line its {@linkcode WindowEntry} or null, and its CSV rows. */
export interface WindowRows {
  /** Per line: what the window phase reads of its entry, or null when the line is none. */
  entries: (WindowEntry | null)[];
  /** The CSV rows of the batch's entries, in line order, UTF-8 (no header). */
  csv: Uint8Array;
}

const encoder = new TextEncoder();

/** The window rows of a batch's entries (null where a line is not an entry). */
export function windowRows(entries: readonly (LineageEntry | null)[]): WindowRows {
  const out: (WindowEntry | null)[] = new Array(entries.length);
  let rows = "";
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e === null) {
      out[i] = null;
      continue;
    }
    out[i] = {
      artefact_path: e.artefact_path,
      ts_ns: e.ts_ns,
      parent_hashes: e.parent_hashes,
      content_hash: e.content_hash,
      agent_id: e.agent_id,
      agent_card_kid: e.agent_card_kid,
    };
    rows += csvRow(e);
  }
  // Rows end with "\n", so encoding them per batch gives the bytes of encoding them all at once.
  return { entries: out, csv: encoder.encode(rows) };
}
