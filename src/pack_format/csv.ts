// `article12-evidence.csv` (FORMATS.md §5): one row per window entry, in log order, with the
// lineage entry fields as columns. The builder writes it row by row; the verifier rebuilds the
// same bytes from the pack's log and compares hashes. Pure.
import type { EntryField, LineageEntry } from "../lineage/mod.ts";

/** The header row of `article12-evidence.csv`: lineage entry fields (a renamed one is a type error). */
export const CSV_COLUMNS = [
  "ts_ns",
  "artefact_path",
  "artefact_kind",
  "content_hash",
  "parent_hashes",
  "agent_id",
  "agent_card_kid",
  "tool_call_id",
  "span_id",
] as const satisfies readonly EntryField[];

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The CSV header line, with its `\n`. */
export function csvHeader(): string {
  return CSV_COLUMNS.join(",") + "\n";
}

/** One CSV row for an entry (RFC 4180 quoting, parents space-joined), with its `\n`. */
export function csvRow(entry: LineageEntry): string {
  let row = "";
  for (let i = 0; i < CSV_COLUMNS.length; i++) {
    const value = entry[CSV_COLUMNS[i]];
    const text = typeof value === "bigint"
      ? value.toString()
      : Array.isArray(value)
      ? value.join(" ")
      : value;
    row += (i === 0 ? "" : ",") + csvField(text);
  }
  return row + "\n";
}
