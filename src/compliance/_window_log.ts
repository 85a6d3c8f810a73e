// What a window's log member makes besides itself — the evidence CSV's rows and the Article 12
// facts — read back from the log's bytes where the log is compressed (the deflate worker,
// beside the builder's pass over the whole log, or this thread), so the builder's main thread
// only picks lines and reads sidecars. The log member holds only lines the window selector
// accepted as entries, so each line here parses (the same entry: `plainEntryOfLine` is
// exactly the strict parse where it answers); one that does not is a builder fault and fails
// the build.
import { concatBytes, parseCanonicalLine } from "../canonical/mod.ts";
import { type LineageEntry, parseEntry, plainEntryOfLine } from "../lineage/mod.ts";
import {
  csvHeader,
  csvRow,
  type LogFacts,
  LogFactsCollector,
  PACK_MEMBERS,
} from "../pack_format/mod.ts";
import { MemberCompressor, memberLevel, type PreparedMember } from "./zip_writer.ts";

const encoder = new TextEncoder();
// CSV rows are encoded in batches: one encode per ~64 KiB instead of one per entry.
const CSV_BATCH_CHARS = 64 * 1024;
const NEWLINE = 0x0a;

/** The window's compressed members and the facts its log states. */
export interface CompressedWindow {
  /** The members, in the order asked for. */
  members: PreparedMember[];
  /** The facts of the log's entries. */
  facts: LogFacts;
}

/**
 * The compressors of a window's large members: bytes written to the log member are also read
 * back line by line into the CSV member's rows and the facts (nobody writes the CSV member).
 *
 * @example
 * ```ts ignore
 * const w = new WindowCompression();
 * w.write(PACK_MEMBERS.log, linesWithNewlines);
 * const { members: [log, csv], facts } = w.finish([PACK_MEMBERS.log, PACK_MEMBERS.csv]);
 * ```
 */
export class WindowCompression {
  #compressors = new Map<string, MemberCompressor>();
  #facts = new LogFactsCollector();
  #csvPending = csvHeader();
  #carry: Uint8Array | undefined; // the start of a line cut by a piece boundary

  /** Appends `bytes` to member `name` (copied). */
  write(name: string, bytes: Uint8Array): void {
    this.#of(name).write(bytes);
    if (name === PACK_MEMBERS.log) this.#readLines(bytes);
  }

  /** Ends every member; returns those named, in that order, and the facts. */
  finish(names: readonly string[]): CompressedWindow {
    if (this.#carry !== undefined) throw new Error("the window's log ends inside a line");
    this.#flushCsv();
    const members = names.map((n) => this.#of(n).finish());
    this.#compressors.clear();
    return { members, facts: this.#facts.facts() };
  }

  #of(name: string): MemberCompressor {
    let c = this.#compressors.get(name);
    if (c === undefined) {
      c = new MemberCompressor(memberLevel(name));
      this.#compressors.set(name, c);
    }
    return c;
  }

  #readLines(bytes: Uint8Array): void {
    let start = 0;
    let end = bytes.indexOf(NEWLINE);
    if (this.#carry !== undefined) {
      if (end < 0) {
        this.#carry = concatBytes([this.#carry, bytes]);
        return;
      }
      this.#line(concatBytes([this.#carry, bytes.subarray(0, end)]));
      this.#carry = undefined;
      start = end + 1;
      end = bytes.indexOf(NEWLINE, start);
    }
    while (end >= 0) {
      this.#line(bytes.subarray(start, end));
      start = end + 1;
      end = bytes.indexOf(NEWLINE, start);
    }
    if (start < bytes.length) this.#carry = bytes.slice(start);
  }

  #line(line: Uint8Array): void {
    const entry = windowEntryOfLine(line);
    this.#csvPending += csvRow(entry);
    if (this.#csvPending.length >= CSV_BATCH_CHARS) this.#flushCsv();
    this.#facts.add(entry);
  }

  #flushCsv(): void {
    if (this.#csvPending.length === 0) return;
    this.#of(PACK_MEMBERS.csv).write(encoder.encode(this.#csvPending));
    this.#csvPending = "";
  }
}

/** The entry of a line the window selector accepted (the same reading as the selector's). */
function windowEntryOfLine(line: Uint8Array): LineageEntry {
  const plain = plainEntryOfLine(line);
  if (plain !== undefined) return plain;
  const parsed = parseCanonicalLine(line, "canon");
  if (!parsed.ok) {
    throw new Error(`a line of the window's log is not canonical (${parsed.reason})`);
  }
  return parseEntry(parsed.value);
}
