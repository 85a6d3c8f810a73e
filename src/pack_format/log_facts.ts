// Facts about a window of the lineage log that the pack's Article 12 block states and that
// the verifier recomputes from `lineage-log.jsonl`, so a manifest cannot claim figures its own
// log does not support. Pure and incremental (entries are fed in log order).
import { canonicalBytes, type JsonObject, type JsonValue } from "../canonical/mod.ts";
import { type LineageEntry, randomSlotMix, slotOfPrefix } from "../lineage/mod.ts";
import { isoOfNs } from "./period.ts";

/** What one agent identity did in the window. */
export interface AgentFacts {
  /** The identity. */
  agent_id: string;
  /** The key ids it signed with, sorted. */
  kids: string[];
  /** Entries it signed. */
  entry_count: number;
  /** Merge entries (two or more parents) among them. */
  merge_count: number;
}

/** The log-derived facts of a window. */
export interface LogFacts {
  /** Entries. */
  entry_count: number;
  /** Distinct artefacts. */
  artefact_count: number;
  /** Earliest `ts_ns`, or null for an empty window. */
  first_ts_ns: bigint | null;
  /** Latest `ts_ns`, or null for an empty window. */
  last_ts_ns: bigint | null;
  /** Entries with two or more parents. */
  merge_count: number;
  /** Forks: a parent with two or more children of one artefact holding different content. */
  fork_count: number;
  /** Every signer, sorted by id. */
  agents: AgentFacts[];
  /** Identities that signed merges (resolved forks): the reviewers of concurrent writes. */
  merge_signers: string[];
}

/** The fields of an entry the facts are made of (a whole entry has them too). */
export type FactFields = Pick<
  LineageEntry,
  "artefact_path" | "ts_ns" | "parent_hashes" | "content_hash" | "agent_id" | "agent_card_kid"
>;

interface Sibling {
  /** The group's artefact (its number in the order artefacts were first seen). */
  artefact: number;
  content: number;
  forked: boolean;
}

/** Largest prefix {@linkcode prefix52} reads from 13 hex digits. */
const MAX_PREFIX = 2 ** 52 - 1;

/**
 * The first sibling group of each parent prefix, in typed arrays (open addressing): a log has
 * about one group per entry, which as a Map of objects cost ~100 000 objects and Map entries
 * for the collector to insert and the collector's heap to trace. Holds only keys that are whole
 * numbers in 0..2^52-1 (what 13 hex digits give); the collector keeps any other prefix
 * (`parseInt`'s NaN or a negative value from an odd hash) in a Map, so every key has one home.
 */
class PrefixGroups {
  readonly #mix = randomSlotMix();
  #keys: Float64Array;
  #used: Uint8Array;
  #size = 0;
  /** Per slot: the group's artefact, its first content prefix, whether it forked. */
  artefact: Int32Array;
  content: Float64Array;
  forked: Uint8Array;

  constructor(slots = 1024) {
    this.#keys = new Float64Array(slots);
    this.#used = new Uint8Array(slots);
    this.artefact = new Int32Array(slots);
    this.content = new Float64Array(slots);
    this.forked = new Uint8Array(slots);
  }

  /** True when `key` can live here. */
  static holds(key: number): boolean {
    return Number.isInteger(key) && key >= 0 && key <= MAX_PREFIX;
  }

  /** The slot of `key` (one this table holds), or -1 - the free slot where it would go. */
  find(key: number): number {
    const n = this.#used.length;
    // A log's parent hashes may be chosen to collide under any fixed mix (every lookup would
    // then walk them all): the slot is keyed by multipliers random to this table.
    let i = slotOfPrefix(this.#mix, key, n);
    for (;;) {
      if (this.#used[i] === 0) return -1 - i;
      if (this.#keys[i] === key) return i;
      i = i + 1 === n ? 0 : i + 1;
    }
  }

  /** Starts the group of `key` at the free slot `-1 - free` that {@linkcode find} gave. */
  insert(free: number, key: number, artefact: number, content: number): void {
    let slot = -1 - free;
    if ((this.#size + 1) * 4 > this.#used.length * 3) {
      this.#grow();
      slot = -1 - this.find(key);
    }
    this.#keys[slot] = key;
    this.#used[slot] = 1;
    this.artefact[slot] = artefact;
    this.content[slot] = content;
    this.#size++;
  }

  #grow(): void {
    const keys = this.#keys;
    const used = this.#used;
    const artefact = this.artefact;
    const content = this.content;
    const forked = this.forked;
    const n = used.length * 2;
    this.#keys = new Float64Array(n);
    this.#used = new Uint8Array(n);
    this.artefact = new Int32Array(n);
    this.content = new Float64Array(n);
    this.forked = new Uint8Array(n);
    for (let i = 0; i < used.length; i++) {
      if (used[i] === 0) continue;
      const slot = -1 - this.find(keys[i]);
      this.#keys[slot] = keys[i];
      this.#used[slot] = 1;
      this.artefact[slot] = artefact[i];
      this.content[slot] = content[i];
      this.forked[slot] = forked[i];
    }
  }
}

// Strings parsed out of a log line share its memory, so keeping them would keep every line
// alive. Sibling groups are keyed and compared by numbers taken from the hashes instead: the
// first 52 bits of a SHA-256 decide equality here (a collision only makes a fork statistic
// one lower, never a check pass).
function prefix52(hash: string): number {
  // Read from the char codes (no slice, no parse) when they are lowercase hex, as in every
  // entry; parseInt decides anything else, so the value is always parseInt's.
  let value = 0;
  for (let i = 7; i < 20; i++) {
    const c = hash.charCodeAt(i);
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) return parseInt(hash.slice(7, 20), 16);
    value = value * 16 + digit;
  }
  return value;
}

/**
 * Collects {@linkcode LogFacts} while entries stream past.
 *
 * @example
 * ```ts ignore
 * const c = new LogFactsCollector();
 * for (const e of entries) c.add(e);
 * c.facts().entry_count;
 * ```
 */
export class LogFactsCollector {
  #count = 0;
  #artefacts = new Map<string, number>();
  #first: bigint | null = null;
  #last: bigint | null = null;
  #merges = 0;
  #forks = 0;
  // Sibling groups are keyed by (artefact, parent's prefix): by the prefix alone for the first
  // artefact seen with it (no string per entry; in typed arrays, or in `#oddSiblings` for a
  // prefix they do not hold), by both in `#otherSiblings` for any other.
  #siblings = new PrefixGroups();
  #oddSiblings = new Map<number, Sibling>();
  #otherSiblings = new Map<string, Sibling>();
  #agents = new Map<string, { kids: Set<string>; entries: number; merges: number }>();

  /** Feeds the next entry. */
  add(entry: FactFields): void {
    this.#count++;
    let artefact = this.#artefacts.get(entry.artefact_path);
    if (artefact === undefined) {
      artefact = this.#artefacts.size;
      this.#artefacts.set(entry.artefact_path, artefact);
    }
    if (this.#first === null || entry.ts_ns < this.#first) this.#first = entry.ts_ns;
    if (this.#last === null || entry.ts_ns > this.#last) this.#last = entry.ts_ns;
    const isMerge = entry.parent_hashes.length >= 2;
    if (isMerge) this.#merges++;
    if (entry.parent_hashes.length === 1) {
      const parent = prefix52(entry.parent_hashes[0]);
      const content = prefix52(entry.content_hash);
      if (PrefixGroups.holds(parent)) this.#typedSibling(artefact, parent, content);
      else {
        const sibling = this.#sibling(this.#oddSiblings, artefact, parent, content);
        if (sibling !== undefined && !sibling.forked && sibling.content !== content) {
          sibling.forked = true;
          this.#forks++;
        }
      }
    }
    let agent = this.#agents.get(entry.agent_id);
    if (agent === undefined) {
      agent = { kids: new Set(), entries: 0, merges: 0 };
      this.#agents.set(entry.agent_id, agent);
    }
    agent.kids.add(entry.agent_card_kid);
    agent.entries++;
    if (isMerge) agent.merges++;
  }

  /** Counts a fork when (artefact, parent) already has a group of other content. */
  #typedSibling(artefact: number, parent: number, content: number): void {
    const groups = this.#siblings;
    const slot = groups.find(parent);
    if (slot < 0) return groups.insert(slot, parent, artefact, content);
    if (groups.artefact[slot] !== artefact) {
      const other = this.#sibling(undefined, artefact, parent, content);
      if (other !== undefined && !other.forked && other.content !== content) {
        other.forked = true;
        this.#forks++;
      }
      return;
    }
    if (groups.forked[slot] === 0 && groups.content[slot] !== content) {
      groups.forked[slot] = 1;
      this.#forks++;
    }
  }

  /**
   * The group of (artefact, parent), or undefined after starting it with `content`. `first`:
   * the map of first groups by prefix, or undefined when the prefix's first group is another
   * artefact's (in the typed table).
   */
  #sibling(
    firsts: Map<number, Sibling> | undefined,
    artefact: number,
    parent: number,
    content: number,
  ): Sibling | undefined {
    if (firsts !== undefined) {
      const first = firsts.get(parent);
      if (first === undefined) {
        firsts.set(parent, { artefact, content, forked: false });
        return undefined;
      }
      if (first.artefact === artefact) return first;
    }
    const key = `${artefact}:${parent}`;
    const other = this.#otherSiblings.get(key);
    if (other === undefined) this.#otherSiblings.set(key, { artefact, content, forked: false });
    return other;
  }

  /** The facts so far. */
  facts(): LogFacts {
    const ids = [...this.#agents.keys()].sort(byCodePoint);
    const agents = ids.map((id) => {
      const a = this.#agents.get(id) as { kids: Set<string>; entries: number; merges: number };
      return {
        agent_id: id,
        kids: [...a.kids].sort(byCodePoint),
        entry_count: a.entries,
        merge_count: a.merges,
      };
    });
    return {
      entry_count: this.#count,
      artefact_count: this.#artefacts.size,
      first_ts_ns: this.#first,
      last_ts_ns: this.#last,
      merge_count: this.#merges,
      fork_count: this.#forks,
      agents,
      merge_signers: agents.filter((a) => a.merge_count > 0).map((a) => a.agent_id),
    };
  }
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The Article 12 figures that follow from the log alone, per paragraph key. */
export type Article12LogFigures = Record<"12(1)" | "12(2)(a)" | "12(2)(c)", JsonObject>;

/** The log-derived figures the pack states under each Article 12 paragraph. */
export function article12LogFigures(facts: LogFacts): Article12LogFigures {
  return {
    "12(1)": {
      entry_count: facts.entry_count,
      artefact_count: facts.artefact_count,
      first_ts_ns: facts.first_ts_ns,
      last_ts_ns: facts.last_ts_ns,
      first_at: facts.first_ts_ns === null ? null : isoOfNs(facts.first_ts_ns),
      last_at: facts.last_ts_ns === null ? null : isoOfNs(facts.last_ts_ns),
    },
    "12(2)(a)": { merge_count: facts.merge_count, fork_count: facts.fork_count },
    "12(2)(c)": {
      agent_count: facts.agents.length,
      agents: facts.agents.map((a) => ({
        agent_id: a.agent_id,
        kids: a.kids,
        entry_count: a.entry_count,
        merge_count: a.merge_count,
      })),
      reviewer_identities: facts.merge_signers,
    },
  };
}

function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = canonicalBytes(a, "canon");
  const y = canonicalBytes(b, "canon");
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * Where a manifest's `article12` block disagrees with figures recomputed from the log:
 * one `article12.<paragraph>.<field>` path per mismatch.
 */
export function article12Mismatches(article12: JsonObject, figures: Article12LogFigures): string[] {
  const out: string[] = [];
  for (const [paragraph, expected] of Object.entries(figures)) {
    const stated = article12[paragraph];
    for (const [field, value] of Object.entries(expected)) {
      const got = typeof stated === "object" && stated !== null && !Array.isArray(stated)
        ? (stated as JsonObject)[field]
        : undefined;
      if (!same(got, value)) out.push(`article12.${paragraph}.${field}`);
    }
  }
  return out;
}
