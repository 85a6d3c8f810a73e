// Tips and forks (FORMATS.md §4). An entry is an open tip while no entry of the same artefact
// names it as a parent; a fork is two or more entries of one artefact with the same single
// parent and different content, resolved by a merge entry (two or more parents) listing all
// of its children. Everything here is incremental so the gate can run it while streaming.
import { canonicalBytes, decodeUtf8Strict, type JsonValue, parseJson } from "../canonical/mod.ts";
import { digestInto, DigestTable, digestText } from "./digest_table.ts";
import { isEntryHash } from "./entry.ts";
import { LineageEntryError } from "./errors.ts";

/** The `tips/<H>.json` projection of one artefact. */
export interface TipSet {
  /** Entries no later entry of the artefact names as a parent, in log order. */
  open: string[];
  /** Entries consumed by a merge entry (two or more parents) while open, in merge order. */
  merged: string[];
}

/**
 * Folds one entry of an artefact into its tip set (log order). A linear successor silently
 * closes its parent; a merge entry moves each open parent to `merged`.
 */
export function applyToTipSet(
  tips: TipSet,
  entry: { hash: string; parents: readonly string[] },
): TipSet {
  const { hash: entryHash, parents } = entry;
  const open = [...tips.open];
  const merged = [...tips.merged];
  if (!open.includes(entryHash)) open.push(entryHash);
  const isMerge = parents.length >= 2;
  for (const p of parents) {
    const at = open.indexOf(p);
    if (at < 0) continue;
    open.splice(at, 1);
    if (isMerge && !merged.includes(p)) merged.push(p);
  }
  return { open, merged };
}

/** The bytes of a tips file: `canon-ascii` `{"merged":[…],"open":[…]}` without a newline. */
export function renderTipSet(tips: TipSet): Uint8Array {
  const value: JsonValue = { merged: [...tips.merged], open: [...tips.open] };
  return canonicalBytes(value, "canon-ascii");
}

/** Parses a tips file; throws {@linkcode LineageEntryError} when it is not a valid tip set. */
export function parseTipSet(bytes: Uint8Array, location?: string): TipSet {
  let value: JsonValue;
  try {
    value = parseJson(decodeUtf8Strict(bytes));
  } catch (cause) {
    throw new LineageEntryError("tips file is not valid JSON", { location, cause });
  }
  const list = (v: JsonValue | undefined, name: string): string[] => {
    if (!Array.isArray(v) || v.some((h) => typeof h !== "string" || !isEntryHash(h))) {
      throw new LineageEntryError(`tips file field ${name} is not a list of entry hashes`, {
        location,
      });
    }
    return v as string[];
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new LineageEntryError("tips file is not an object", { location });
  }
  const obj = value as { [key: string]: JsonValue | undefined };
  return { open: list(obj.open, "open"), merged: list(obj.merged, "merged") };
}

/** An unresolved fork: siblings of one artefact under one parent with different content. */
export interface Fork {
  /** The artefact. */
  artefact_path: string;
  /** The shared single parent. */
  parent_hash: string;
  /** Every child of that parent in this artefact, in log order. */
  children: string[];
}

/** Artefacts that have more than one open tip without an unresolved fork explaining it. */
export interface SplitHead {
  /** The artefact. */
  artefact_path: string;
  /** Its open tips, in log order. */
  open: string[];
}

// Strings cut out of a parsed line can keep the whole line alive in V8 (sliced strings);
// the few the analyzer keeps are copied so its memory is the size of the hashes, not the log.
function detach(text: string): string {
  return (" " + text).slice(1);
}

/** Growable int32 storage. */
class IntColumn {
  data: Int32Array;
  constructor(capacity: number) {
    this.data = new Int32Array(Math.max(1024, capacity));
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  length = 0;
}

/** Growable storage of 32-byte digests. */
class DigestColumn {
  data: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.data = new Uint8Array(Math.max(1024, capacity) * 32);
  }
  push(hash: string): boolean {
    this.#room();
    if (!digestInto(hash, this.data, this.length * 32)) return false;
    this.length++;
    return true;
  }
  /** Appends the 32 bytes at the start of `digest`. */
  pushDigest(digest: Uint8Array): void {
    this.#room();
    const to = this.length * 32;
    for (let b = 0; b < 32; b++) this.data[to + b] = digest[b];
    this.length++;
  }
  #room(): void {
    if ((this.length + 1) * 32 > this.data.length) {
      const next = new Uint8Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
  }
  text(i: number): string {
    return digestText(this.data, i * 32);
  }
  equals(i: number, hash: string, scratch: Uint8Array): boolean {
    if (!digestInto(hash, scratch)) return false;
    for (let b = 0; b < 32; b++) if (this.data[i * 32 + b] !== scratch[b]) return false;
    return true;
  }
}

/** Open tips an artefact keeps as digests before it keeps them as a Set of their texts. */
const SMALL_TIPS = 8;

/**
 * The open tips of one artefact: an insertion-ordered set with the operations of a
 * `Set<string>` (delete, then add appends; adding a member keeps its place). An artefact's log
 * is mostly a chain, so it holds one or two tips: up to {@linkcode SMALL_TIPS} are kept as
 * digests back to back and found by comparing bytes (no string hashed, no hash table churned
 * by a delete and an add per entry). Past that, or once a hash comes without its digest (a
 * text that is not `sha256:` + lowercase hex), the tips move, in order, into a `Set` of their
 * texts for good, so no artefact costs more than a Set per operation, whatever a log holds.
 */
class OpenTips {
  #bytes = new Uint8Array(32);
  #count = 0;
  #set: Set<string> | undefined;

  get size(): number {
    return this.#set === undefined ? this.#count : this.#set.size;
  }

  /** The tips in order. */
  list(): string[] {
    if (this.#set !== undefined) return [...this.#set];
    return Array.from({ length: this.#count }, (_, i) => digestText(this.#bytes, 32 * i));
  }

  /**
   * Removes `text` (`Set.delete`); `digest` holds its 32 bytes at `at`, or is undefined when
   * `text` is not a digest's text. True when it was a tip.
   */
  delete(text: string, digest: Uint8Array | undefined, at: number): boolean {
    if (this.#set !== undefined) return this.#set.delete(text);
    // Every tip kept as a digest has a digest's text: a text that is none is not among them.
    if (digest === undefined) return false;
    const i = this.#find(digest, at);
    if (i < 0) return false;
    this.#bytes.copyWithin(32 * i, 32 * (i + 1), 32 * this.#count);
    this.#count--;
    return true;
  }

  /** Adds `text` at the end unless it is a tip (`Set.add`); `digest` as for `delete`. */
  add(text: string, digest: Uint8Array | undefined, at: number): void {
    if (this.#set === undefined && (digest === undefined || this.#count === SMALL_TIPS)) {
      if (digest !== undefined && this.#find(digest, at) >= 0) return;
      this.#toSet();
    }
    if (this.#set !== undefined) {
      this.#set.add(text);
      return;
    }
    const d = digest as Uint8Array;
    if (this.#find(d, at) >= 0) return;
    if (this.#bytes.length < 32 * (this.#count + 1)) {
      const grown = new Uint8Array(Math.min(32 * SMALL_TIPS, this.#bytes.length * 2));
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    const to = 32 * this.#count;
    for (let b = 0; b < 32; b++) this.#bytes[to + b] = d[at + b];
    this.#count++;
  }

  #find(digest: Uint8Array, at: number): number {
    const bytes = this.#bytes;
    for (let i = 0; i < this.#count; i++) {
      const from = 32 * i;
      let b = 0;
      while (b < 32 && bytes[from + b] === digest[at + b]) b++;
      if (b === 32) return i;
    }
    return -1;
  }

  /** From here on, the tips are the Set of their texts (in the same order). */
  #toSet(): void {
    this.#set = new Set(this.list());
    this.#bytes = new Uint8Array(0);
    this.#count = 0;
  }
}

/** The facts of one entry the analyzer needs. */
export interface AnalyzedEntry {
  /** The entry hash. */
  hash: string;
  /** The artefact key. */
  artefact_path: string;
  /** The entry's parents. */
  parent_hashes: readonly string[];
  /** The entry's content hash. */
  content_hash: string;
}

/**
 * Incremental tips-and-forks analysis over entries fed in log order. Memory grows with the
 * number of single-parent entries (one small record each), not with entry size.
 *
 * @example
 * ```ts ignore
 * const a = new LineageAnalyzer();
 * for (const e of entries) a.add({ hash: entryHash(e), ...e });
 * a.unresolvedForks(); // []
 * ```
 */
export class LineageAnalyzer {
  #artefactIds = new Map<string, number>();
  #artefactNames: string[] = [];
  #open: OpenTips[] = [];
  // Fork groups: one per (artefact, single parent), in typed columns so 100 000 entries cost
  // a few MB. A group is keyed by its parent digest; groups of other artefacts under the same
  // parent are chained through #gNext. The parent is kept only as that key (a fork finds it
  // back through the table).
  #groupOf: DigestTable;
  #gArtefact: IntColumn;
  #gNext: IntColumn;
  #gFirstChild: DigestColumn;
  #gFirstContent: DigestColumn;
  #gDistinct: IntColumn;
  #moreChildren = new Map<number, string[]>();
  #forked: number[] = [];
  #merges: { artefact: number; parents: Set<string> }[] = [];
  // Parents named before they appeared (out-of-order or missing entries), per artefact.
  #namedEarly = new Set<string>();
  // The digests of the parents in #namedEarly that are digests' texts (any artefact).
  #namedEarlyDigests = new DigestTable(16);
  #scratch = new Uint8Array(32);
  #tipScratch = new Uint8Array(32);

  /**
   * `expectedEntries`: a hint only (the tables start that large instead of growing to it by
   * doubling, which briefly holds both copies); any number of entries may follow.
   */
  constructor(expectedEntries = 0) {
    const n = Number.isFinite(expectedEntries) ? Math.max(0, Math.floor(expectedEntries)) : 0;
    this.#groupOf = new DigestTable(Math.max(1024, n));
    this.#gArtefact = new IntColumn(n);
    this.#gNext = new IntColumn(n);
    this.#gFirstChild = new DigestColumn(n);
    this.#gFirstContent = new DigestColumn(n);
    this.#gDistinct = new IntColumn(n);
  }

  #artefactId(path: string): number {
    let id = this.#artefactIds.get(path);
    if (id === undefined) {
      id = this.#artefactNames.length;
      const name = detach(path);
      this.#artefactIds.set(name, id);
      this.#artefactNames.push(name);
      this.#open.push(new OpenTips());
    }
    return id;
  }

  #children(group: number): string[] {
    return [this.#gFirstChild.text(group), ...(this.#moreChildren.get(group) ?? [])];
  }

  #addChild(id: number, parent: string, entry: AnalyzedEntry, digests?: Uint8Array): void {
    const head = digests === undefined
      ? this.#groupOf.get(parent)
      : this.#groupOf.getDigest(digests, 32);
    let group = head ?? -1;
    while (group >= 0 && this.#gArtefact.data[group] !== id) group = this.#gNext.data[group];
    if (group < 0) {
      const index = this.#gArtefact.length;
      if (digests !== undefined) this.#gFirstChild.pushDigest(digests);
      else if (!this.#gFirstChild.push(entry.hash)) return; // not a digest: the entry was refused
      this.#gFirstContent.push(entry.content_hash);
      this.#gArtefact.push(id);
      this.#gNext.push(head ?? -1);
      this.#gDistinct.push(0);
      if (digests !== undefined) this.#groupOf.setDigest(digests, 32, index);
      else this.#groupOf.set(parent, index);
      return;
    }
    const more = this.#moreChildren.get(group);
    if (more === undefined) this.#moreChildren.set(group, [detach(entry.hash)]);
    else more.push(detach(entry.hash));
    if (
      this.#gDistinct.data[group] === 0 &&
      !this.#gFirstContent.equals(group, entry.content_hash, this.#scratch)
    ) {
      this.#gDistinct.data[group] = 1;
      this.#forked.push(group);
    }
  }

  /**
   * Feeds the next entry of the log. `digests`, when the caller decoded them already: the
   * entry hash's 32 bytes at 0 and, for an entry with exactly one parent, the parent's at 32
   * (the same analysis with fewer decodes; both must be the digests of those strings).
   */
  add(entry: AnalyzedEntry, digests?: Uint8Array): void {
    const id = this.#artefactId(entry.artefact_path);
    const open = this.#open[id];
    const parents = entry.parent_hashes;
    // The tips are compared as digests: the caller's when given (the single parent at 32),
    // else decoded here; a text that is no digest goes as text (see OpenTips).
    const given = digests !== undefined && parents.length === 1;
    for (const p of parents) {
      const digest = given
        ? digests
        : digestInto(p, this.#tipScratch)
        ? this.#tipScratch
        : undefined;
      if (!open.delete(p, digest, given ? 32 : 0)) {
        this.#namedEarly.add(detach(`${id}:${p}`));
        if (digest !== undefined) this.#namedEarlyDigests.addDigest(digest, given ? 32 : 0, 0);
      }
    }
    const digest = digests !== undefined
      ? digests
      : digestInto(entry.hash, this.#tipScratch)
      ? this.#tipScratch
      : undefined;
    // An entry some earlier entry of its artefact already named as parent is never open. A
    // hash named early is a digest's text when the entry's is (equal texts decode alike), so
    // the digest rules most entries out without the `${id}:${hash}` text being made.
    if (
      this.#namedEarly.size === 0 ||
      (digest !== undefined && !this.#namedEarlyDigests.hasDigest(digest, 0)) ||
      !this.#namedEarly.has(`${id}:${entry.hash}`)
    ) {
      open.add(entry.hash, digest, 0);
    }
    if (entry.parent_hashes.length === 1) {
      this.#addChild(id, entry.parent_hashes[0], entry, digests);
    } else if (entry.parent_hashes.length >= 2) {
      this.#merges.push({ artefact: id, parents: new Set(entry.parent_hashes) });
    }
  }

  /** The parent of each forked group: one pass over the table, following each chain. */
  #forkParents(): Map<number, string> {
    const out = new Map<number, string>();
    if (this.#forked.length === 0) return out;
    const forked = new Set(this.#forked);
    for (const e of this.#groupOf.entries()) {
      for (let g = e.value; g >= 0; g = this.#gNext.data[g]) {
        if (forked.has(g)) out.set(g, digestText(e.digests, e.at));
      }
    }
    return out;
  }

  /** Every artefact seen, in order of first appearance. */
  artefacts(): string[] {
    return [...this.#artefactNames];
  }

  /** Open tips of an artefact, in log order (empty when never seen). */
  openTips(artefactPath: string): string[] {
    const id = this.#artefactIds.get(artefactPath);
    return id === undefined ? [] : this.#open[id].list();
  }

  /** Forks not covered by any merge entry of the same artefact, in order of detection. */
  unresolvedForks(artefactPath?: string): Fork[] {
    const only = artefactPath === undefined ? undefined : this.#artefactIds.get(artefactPath);
    if (artefactPath !== undefined && only === undefined) return [];
    const out: Fork[] = [];
    const parents = this.#forkParents();
    for (const group of this.#forked) {
      const artefact = this.#gArtefact.data[group];
      if (only !== undefined && artefact !== only) continue;
      const children = this.#children(group);
      const resolved = this.#merges.some((m) =>
        m.artefact === artefact && children.every((c) => m.parents.has(c))
      );
      if (!resolved) {
        out.push({
          artefact_path: this.#artefactNames[artefact],
          parent_hash: parents.get(group) ?? "",
          children,
        });
      }
    }
    return out;
  }

  /**
   * Artefacts with several open tips and no unresolved fork (e.g. two genesis entries),
   * leaving out `except` (artefacts whose split is already explained, e.g. by a missing parent).
   */
  splitHeads(except: ReadonlySet<string> = new Set()): SplitHead[] {
    const forked = new Set(this.unresolvedForks().map((f) => f.artefact_path));
    for (const name of except) forked.add(name);
    const out: SplitHead[] = [];
    this.#artefactNames.forEach((name, id) => {
      if (this.#open[id].size > 1 && !forked.has(name)) {
        out.push({ artefact_path: name, open: this.#open[id].list() });
      }
    });
    return out;
  }
}
