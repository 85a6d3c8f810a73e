// The window phase of `bernstein-verify pack` (phase 4 of verifyPack): the lineage gate over
// the window's log with the pack's own signatures and cards, and what the window's entries
// feed on the way — the log's hash, the facts (Article 12 figures), the CSV rows' hash, the
// leaves of the inclusion proof, the external parents some entry names, the entries outside
// the period. A pure function of its inputs (no clock, no randomness, the same verdict with or
// without worker threads), so the pack builder can run it over the bytes it is about to pack
// (see pack_reuse.ts); pack.ts turns its outcome into the verdict's failures.
import { sha256Stream } from "../crypto/mod.ts";
import { type ByteSource, chunksOf, digestInto } from "../lineage/mod.ts";
import { TextDigestSet } from "./_text_digest_set.ts";
import {
  csvHeader,
  isoOfNs,
  type LogFacts,
  LogFactsCollector,
  PACK_MEMBERS,
  packWindow,
} from "../pack_format/mod.ts";
import { defaultGateWorkers, runLineageGate } from "./gate.ts";
import type { StartedWorkers } from "./_pool.ts";
import type {
  CardFile,
  ForeignAttestationInput,
  GateResult,
  SignatureFetch,
  VerifyIssue,
} from "./types.ts";
import { ZipMemberError } from "./zip_reader.ts";

/** The window's signatures, looked up by entry hash. */
export interface WindowSignatures {
  /** The signature member of an entry hash (undefined: there is none). */
  get(entryHash: string): SignatureFetch;
  /**
   * Marks the signature of an entry of the log as used (not an orphan); `digest`, when given,
   * holds the entry hash's 32 bytes at its start.
   */
  use(entryHash: string, digest?: Uint8Array): void;
}

/** What the window phase reads. */
export interface PackWindowInput {
  /** The log member's bytes, streamed; undefined when the pack has no readable log member. */
  log: ByteSource | undefined;
  /** The signature members. */
  signatures: WindowSignatures;
  /** The agent card members. */
  cards: readonly CardFile[];
  /** The foreign attestation members. */
  attestations: readonly ForeignAttestationInput[];
  /** The manifest's period, when it parsed. */
  period: { since: string; until: string } | undefined;
  /** The manifest's external parents (entries that precede the window). */
  externalParents: ReadonlySet<string>;
  /** Entries expected (sizes tables only; the count is checked against the log elsewhere). */
  expectedEntries: number;
  /** Keep the window's line digests (the leaves of a format-3 pack's inclusion proof). */
  leaves: boolean;
  /** Issuer keys pinned for foreign attestations. */
  trustedIssuers?: ReadonlyMap<string, Uint8Array>;
  /**
   * A step of other work, run on this thread each time the gate takes the log's next chunk
   * (while workers check the batches already handed out). Its results are not the window's.
   */
  between?: () => unknown;
}

/** Threads for the signature checks. */
export interface PackWindowOptions {
  /** Worker threads (default: one per spare core, up to 3). */
  workers?: number;
  /** Where the gate's worker module is (tests substitute one). */
  workerUrl?: URL;
  /** Workers started ahead with that module (the gate takes them). */
  started?: StartedWorkers;
}

/** What the window phase found, before it is turned into failures. */
export interface WindowOutcome {
  /** The gate's result, when the log could be read through. */
  gate: GateResult | undefined;
  /** Why the log member could not be read through (a corrupt member), if so. */
  readProblem: string | undefined;
  /** SHA-256 hex of the log bytes as read, when read through. */
  logHex: string | undefined;
  /** Failures found entry by entry (an entry named as an external parent), in log order. */
  inline: VerifyIssue[];
  /** Entries outside the period (messages), in log order. */
  outside: string[];
  /** The window's line digests in log order, when asked for. */
  leaves: DigestList | undefined;
  /** The log's facts (Article 12 figures). */
  facts: LogFacts;
  /** External parents some window entry names. */
  referenced: Set<string>;
  /** SHA-256 hex of the CSV the log's entries make. */
  csvHex: string;
}

/**
 * Runs the window phase: the lineage gate over `input.log` with the given signatures, cards
 * and attestations, and every per-entry consumer the pack's cross-checks need.
 *
 * @example
 * ```ts ignore
 * const outcome = await runWindowPhase({ log, signatures, cards: [], attestations: [],
 *   period, externalParents: new Set(), expectedEntries: 0, leaves: true });
 * outcome.gate?.ok;
 * ```
 */
export async function runWindowPhase(
  input: PackWindowInput,
  options: PackWindowOptions = {},
): Promise<WindowOutcome> {
  const { period, signatures } = input;
  const external = input.externalParents;
  const window = period === undefined ? undefined : packWindow(period.since, period.until);
  const referenced = new Set<string>();
  const externals = new TextDigestSet(external);
  const facts = new LogFactsCollector();
  const csv = new CsvHash();
  const outside: string[] = [];
  const inline: VerifyIssue[] = [];
  const leaves = input.leaves ? new DigestList() : undefined;
  let logHex: string | undefined;
  let readProblem: string | undefined;
  let gate: GateResult | undefined;
  if (input.log !== undefined) {
    const logHash = sha256Stream();
    const source = input.log;
    const between = input.between;
    const log = (async function* () {
      for await (const chunk of chunksOf(source)) {
        logHash.update(chunk);
        yield chunk;
        if (between !== undefined) await between();
      }
    })();
    try {
      gate = await runLineageGate({
        log,
        logName: PACK_MEMBERS.log,
        sidecarNames: "pack",
        foreignAttestations: input.attestations,
        trustedIssuers: input.trustedIssuers,
        cards: input.cards,
        knownParents: external,
        expectedEntries: input.expectedEntries,
        // Asked for every line's hash; only entries (window.onEntry) make a member used.
        signatures: (hash) => signatures.get(hash),
        // The entries' fact fields and CSV rows are made where each batch is checked.
        window: {
          onCsvRows: (rows) => csv.update(rows),
          onEntry: (entry, hash, digest) => {
            signatures.use(hash, digest);
            if (digest !== undefined) leaves?.addDigest(digest);
            else leaves?.add(hash);
            facts.add(entry);
            const parents = entry.parent_hashes;
            for (let k = 0; k < parents.length; k++) {
              const given = digest !== undefined && parents.length === 1;
              if (externals.has(parents[k], given ? digest : undefined, 32)) {
                referenced.add(parents[k]);
              }
            }
            if (externals.has(hash, digest, 0)) {
              inline.push({
                kind: "external parent invalid",
                message:
                  `${PACK_MEMBERS.manifest}: external parent invalid: ${hash} is an entry of the window itself`,
              });
            }
            if (
              window !== undefined && (entry.ts_ns < window.startNs || entry.ts_ns > window.endNs)
            ) {
              outside.push(
                `${PACK_MEMBERS.log}: entry outside period: entry ${hash} has ts_ns ${entry.ts_ns} (${
                  isoOfNs(entry.ts_ns)
                }), outside ${period?.since}..${period?.until}`,
              );
            }
          },
        },
      }, {
        workers: options.workers ?? defaultGateWorkers(),
        workerUrl: options.workerUrl,
        started: options.started,
      });
      logHex = logHash.hexDigest();
    } catch (error) {
      if (!(error instanceof ZipMemberError)) throw error;
      readProblem = error.message;
    }
  }
  return {
    gate,
    readProblem,
    logHex,
    inline,
    outside,
    leaves,
    facts: facts.facts(),
    referenced,
    csvHex: csv.hexDigest(),
  };
}

/** The SHA-256 of the CSV a window's entries make: the header, then their rows as they come. */
class CsvHash {
  #hash = sha256Stream();

  constructor() {
    this.#hash.update(new TextEncoder().encode(csvHeader()));
  }

  /** Rows of the next entries, UTF-8 (as `GateInput.window.onCsvRows` hands them over). */
  update(rows: Uint8Array): void {
    this.#hash.update(rows);
  }

  hexDigest(): string {
    return this.#hash.hexDigest();
  }
}

/** Entry digests in log order, packed 32 bytes each into one growing buffer. */
export class DigestList {
  #bytes = new Uint8Array(32 * 1024);
  count = 0;

  /** Appends an entry hash (`sha256:` hex). */
  add(hash: string): void {
    this.#room();
    digestInto(hash, this.#bytes, this.count * 32);
    this.count++;
  }

  /** Appends the 32 bytes at the start of `digest`. */
  addDigest(digest: Uint8Array): void {
    this.#room();
    const to = this.count * 32;
    for (let b = 0; b < 32; b++) this.#bytes[to + b] = digest[b];
    this.count++;
  }

  #room(): void {
    if (this.#bytes.length < (this.count + 1) * 32) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
  }

  /** The digests, 32 bytes each (a view). */
  digests(): Uint8Array {
    return this.#bytes.subarray(0, this.count * 32);
  }
}
