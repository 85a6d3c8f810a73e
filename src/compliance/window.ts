// Picks a pack's window out of the operator's whole log, line by line in log order: the
// entries whose `ts_ns` falls in the inclusive UTC days, the parents they name that precede
// the window (declared in the manifest so the verifier can tell them from removed entries),
// and the oldest entry still retained (for the retention facts).
import { parseCanonicalLine } from "../canonical/mod.ts";
import {
  DigestTable,
  entryHashOfBytes,
  type LineageEntry,
  parseEntry,
  plainEntryOfLine,
} from "../lineage/mod.ts";
import type { PackWindow } from "../pack_format/mod.ts";

/** A window entry before its signature is looked up. */
export interface WindowEntry {
  /** The exact line, without its newline. */
  line: Uint8Array;
  /** The parsed entry. */
  entry: LineageEntry;
  /** Its entry hash. */
  hash: string;
  /** Its leaf index in the log's checkpoint tree (the 0-based line number). */
  leaf: number;
}

/** A log line that is not a valid entry (left out of every pack, and counted). */
export interface SkippedLine {
  /** 1-based line number. */
  line: number;
  /** Why. */
  reason: string;
}

/** What {@linkcode WindowSelector} found. */
export interface WindowSelection {
  /** Entries in the window, in log order (empty unless the selector keeps them). */
  entries: WindowEntry[];
  /** Parents of window entries that are earlier entries outside the window, sorted. */
  externalParents: string[];
  /** `ts_ns` of the oldest valid entry of the whole log, or null when there is none. */
  retainedSinceNs: bigint | null;
  /** Lines of the whole log. */
  logLines: number;
  /** Lines that are not valid entries. */
  skipped: SkippedLine[];
}

/** Options for {@linkcode WindowSelector}. */
export interface WindowSelectorOptions {
  /**
   * Keep the window's entries for {@linkcode WindowSelector.result} (default true). A builder
   * that consumes each entry as `add` returns it passes false, and nothing per entry is kept
   * but its digest.
   */
  keep?: boolean;
}

/**
 * Feeds every line of the log; picks the window.
 *
 * @example
 * ```ts ignore
 * const s = new WindowSelector(packWindow("2026-01-01", "2026-03-31")!);
 * for await (const l of streamLines(log)) s.add(l.line, l.bytes, l.terminated);
 * s.result().entries;
 * ```
 */
export class WindowSelector {
  #window: PackWindow;
  #keep: boolean;
  #entries: WindowEntry[] = [];
  // Digests, not strings: a long log has as many entries before the window as it likes.
  #inWindow = new DigestTable();
  #before = new DigestTable(); // valid entries outside the window seen so far
  #external = new Set<string>();
  #oldest: bigint | null = null;
  #lines = 0;
  #skipped: SkippedLine[] = [];

  constructor(window: PackWindow, options: WindowSelectorOptions = {}) {
    this.#window = window;
    this.#keep = options.keep ?? true;
  }

  /** Records line `lineNo` as unusable without parsing it (e.g. longer than the reader's limit). */
  skip(lineNo: number, reason: string): void {
    this.#lines = lineNo;
    this.#skipped.push({ line: lineNo, reason });
  }

  /**
   * Feeds line `lineNo` (its bytes without `\n`; `terminated` false for a torn tail); returns
   * the entry when it is in the window (its `line` is `bytes` itself unless entries are kept).
   */
  add(lineNo: number, bytes: Uint8Array, terminated: boolean): WindowEntry | undefined {
    this.#lines = lineNo;
    if (!terminated) {
      this.#skipped.push({ line: lineNo, reason: "torn last line (no trailing newline)" });
      return undefined;
    }
    const entry = plainEntryOfLine(bytes) ?? this.#strictEntry(lineNo, bytes);
    if (entry === undefined) return undefined;
    const hash = entryHashOfBytes(bytes);
    if (this.#oldest === null || entry.ts_ns < this.#oldest) this.#oldest = entry.ts_ns;
    if (entry.ts_ns < this.#window.startNs || entry.ts_ns > this.#window.endNs) {
      this.#before.set(hash, 0);
      return undefined;
    }
    for (const p of entry.parent_hashes) {
      if (!this.#inWindow.has(p) && this.#before.has(p)) this.#external.add(p);
    }
    this.#inWindow.set(hash, 0);
    const picked = { line: this.#keep ? bytes.slice() : bytes, entry, hash, leaf: lineNo - 1 };
    if (this.#keep) this.#entries.push(picked);
    return picked;
  }

  /**
   * The entry of a line not in the plain canonical form `plainEntryOfLine` reads (every bad
   * line among them): the strict parse and the entry rules, which word why it is skipped.
   */
  #strictEntry(lineNo: number, bytes: Uint8Array): LineageEntry | undefined {
    const parsed = parseCanonicalLine(bytes, "canon");
    if (!parsed.ok) {
      this.#skipped.push({ line: lineNo, reason: `${parsed.reason}: ${parsed.detail}` });
      return undefined;
    }
    try {
      return parseEntry(parsed.value);
    } catch (error) {
      this.#skipped.push({ line: lineNo, reason: (error as Error).message });
      return undefined;
    }
  }

  /** The selection so far. */
  result(): WindowSelection {
    return {
      entries: this.#entries,
      externalParents: [...this.#external].sort(),
      retainedSinceNs: this.#oldest,
      logLines: this.#lines,
      skipped: this.#skipped,
    };
  }
}
