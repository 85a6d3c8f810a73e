// Deterministic sample lineage and compliance packs, in memory, from a seed: the conformance
// fixtures (scripts/gen_conformance.ts), the pack benchmarks and the tests all build on it.
// Keys come from a seeded generator and timestamps from a counter, so the same options give
// the same bytes on every machine.
import { toHex } from "../src/canonical/mod.ts";
import {
  ed25519KeyPairFromSeed,
  merkleHashHex,
  merkleLeafHash,
  MerkleTree,
  sha256,
  sha256Hex,
  signCheckpoint,
  signDetachedJws,
} from "../src/crypto/mod.ts";
import { SeededRandom } from "../src/io/mod.ts";
import {
  digestInto,
  digestText,
  entryBytes,
  entryHashOfBytes,
  kidForPublicKey,
  type LineageEntry,
  makeAgentCard,
  renderAgentCard,
  sealEntry,
} from "../src/lineage/mod.ts";
import {
  buildArticle12,
  CheckpointedWindow,
  type OperatorSigner,
  type PackCard,
  type PackCheckpoint,
  packCheckpointMembers,
  type PackContent,
  type PackEntry,
  selectCards,
  windowFacts,
  WindowMembers,
  WindowSelector,
  writePack,
  type ZipSink,
} from "../src/compliance/mod.ts";
import { packWindow } from "../src/pack_format/mod.ts";

/** A signing agent of the sample. */
export interface SampleAgent {
  /** Agent id. */
  agentId: string;
  /** Key id. */
  kid: string;
  /** Private seed. */
  seed: Uint8Array;
  /** Public key. */
  publicKey: Uint8Array;
  /** Card file bytes. */
  card: Uint8Array;
}

/** Options for {@linkcode sampleLog}. */
export interface SampleOptions {
  /** Generator seed (default 7). */
  seed?: number;
  /** Entries inside the window (default 12). */
  entries?: number;
  /** Entries before the window, which window entries build on (default 2). */
  before?: number;
  /** Agents writing in turn (default 3). */
  agents?: number;
  /** Artefacts written in turn (default 4). */
  artefacts?: number;
  /** Add a fork of `src/file_0.ts` by two agents (default true). */
  forkAndMerge?: boolean;
  /** Resolve that fork with the steward's merge entry (default true). */
  merge?: boolean;
}

/** The sample: the whole log (before + window) and what signs it. */
export interface SampleLog {
  /** Every line of the log in order, with signatures. */
  log: PackEntry[];
  /** The agents (the steward last when there is a merge). */
  agents: SampleAgent[];
  /** The operator's signing key. */
  operator: OperatorSigner;
  /** The window's first and last day. */
  since: string;
  /** Last day. */
  until: string;
}

/** The HMAC key of sample entries (a verifier of packs never needs it). */
export const SAMPLE_HMAC_KEY: Uint8Array = new TextEncoder().encode("sample-operator-secret");

const NS = 1_000_000_000n;
// 2026-03-01T00:00:00Z: the window is March 2026, entries before it are in February.
const WINDOW_START_NS = BigInt(Date.UTC(2026, 2, 1)) * 1_000_000n;

function agent(random: SeededRandom, agentId: string): SampleAgent {
  const pair = ed25519KeyPairFromSeed(random.bytes(32));
  const kid = kidForPublicKey(pair.publicKey);
  return {
    agentId,
    kid,
    seed: pair.seed,
    publicKey: pair.publicKey,
    card: renderAgentCard(makeAgentCard(agentId, { kid: kid, publicKey: pair.publicKey })),
  };
}

/** Signs a (possibly altered) entry as `signer` would: line bytes, hash and detached JWS. */
export function signedEntry(entry: LineageEntry, signer: SampleAgent): PackEntry {
  const line = entryBytes(entry);
  const hash = entryHashOfBytes(line);
  const jws = signDetachedJws(signer.seed, line, { kid: signer.kid });
  return { line, entry, hash, signature: new TextEncoder().encode(jws) };
}

/** A sample log made one entry at a time (for logs too long to hold, see the scale bench). */
export interface SampleLogStream {
  /** The agents (the steward last when there is a merge). */
  agents: SampleAgent[];
  /** The operator's signing key. */
  operator: OperatorSigner;
  /** The window's first day. */
  since: string;
  /** Last day. */
  until: string;
  /** Every line of the log in order, with signatures, made as they are asked for. */
  entries: Generator<PackEntry>;
}

/**
 * A deterministic log: `before` entries in February 2026, then `entries` in March 2026 over
 * `artefacts` files by `agents` agents in turn, each a linear successor of its artefact's
 * previous entry (so the first March entries build on February ones), plus optionally a fork
 * and its merge by `bernstein-steward`.
 */
export function sampleLog(options: SampleOptions = {}): SampleLog {
  const stream = sampleLogStream(options);
  return {
    log: [...stream.entries],
    agents: stream.agents,
    operator: stream.operator,
    since: stream.since,
    until: stream.until,
  };
}

/** {@linkcode sampleLog}, one entry at a time: the same entries, never all held. */
export function sampleLogStream(options: SampleOptions = {}): SampleLogStream {
  const random = new SeededRandom(options.seed ?? 7);
  const agentCount = options.agents ?? 3;
  const artefactCount = options.artefacts ?? 4;
  const agents = Array.from({ length: agentCount }, (_, i) => agent(random, `agent-${i + 1}`));
  const steward = agent(random, "bernstein-steward");
  const op = ed25519KeyPairFromSeed(random.bytes(32));
  const tips = new Map<string, string>();
  let n = 0;
  const write = (
    path: string,
    by: SampleAgent,
    ts: bigint,
    parents: string[] | undefined = undefined,
  ): PackEntry => {
    const content = `sha256:${sha256Hex(new TextEncoder().encode(`${path}#${n}`))}`;
    const entry = sealEntry({
      artefact_path: path,
      artefact_kind: "file",
      content_hash: content,
      parent_hashes: parents ?? (tips.has(path) ? [tips.get(path) as string] : []),
      agent_id: by.agentId,
      agent_card_kid: by.kid,
      tool_call_id: `task:t-${n % 50}`,
      span_id: `span-${toHex(new Uint8Array([n & 0xff, (n >> 8) & 0xff]))}`,
      ts_ns: ts,
    }, SAMPLE_HMAC_KEY);
    const e = signedEntry(entry, by);
    tips.set(path, e.hash);
    n++;
    return e;
  };
  const before = options.before ?? 2;
  const total = options.entries ?? 12;
  const forkAt = options.forkAndMerge === false ? -1 : Math.floor(total / 2);
  function* entries(): Generator<PackEntry> {
    for (let i = 0; i < before; i++) {
      yield write(
        `src/file_${i % artefactCount}.ts`,
        agents[i % agentCount],
        WINDOW_START_NS - 86_400n * NS + BigInt(i) * NS,
      );
    }
    // Spread over the month so that any shorter period leaves entries out.
    const step = (30n * 86_400n * NS) / BigInt(total + 4);
    let ts = WINDOW_START_NS + 3_600n * NS;
    for (let i = 0; i < total; i++) {
      ts += step;
      if (i === forkAt) {
        // Two agents write different content on the same parent; the steward merges them.
        const path = "src/file_0.ts";
        const parent = tips.get(path);
        const parents = parent === undefined ? [] : [parent];
        const a = write(path, agents[0], ts, parents);
        yield a;
        ts += NS;
        const b = write(path, agents[1 % agentCount], ts, parents);
        yield b;
        ts += NS;
        if (options.merge !== false) yield write(path, steward, ts, [a.hash, b.hash]);
        continue;
      }
      yield write(`src/file_${i % artefactCount}.ts`, agents[i % agentCount], ts);
    }
  }
  return {
    agents: forkAt >= 0 && options.merge !== false ? [...agents, steward] : agents,
    operator: { seed: op.seed, publicKey: op.publicKey },
    since: "2026-03-01",
    until: "2026-03-31",
    entries: entries(),
  };
}

/** The tree of a sample log's lines (every line is an entry). */
export function sampleTree(sample: SampleLog): MerkleTree {
  const leaves = new Uint8Array(sample.log.length * 32);
  sample.log.forEach((e, i) => merkleLeafHash(sha256(e.line), 0, leaves, i * 32));
  return new MerkleTree(leaves, sample.log.length);
}

/**
 * The checkpoint members of a sample pack: the operator's checkpoint of the whole sample log
 * (made 2026-04-01) and the window's batch inclusion proof.
 */
export function sampleCheckpoint(
  sample: SampleLog,
  entries: readonly { hash: string; leaf: number }[],
): PackCheckpoint {
  const tree = sampleTree(sample);
  const checkpoint = signCheckpoint({
    log: "lineage",
    root: merkleHashHex(tree.root()),
    size: tree.size,
    ts: "2026-04-01T00:00:00.000000Z",
  }, { ...sample.operator, kid: kidForPublicKey(sample.operator.publicKey) });
  return packCheckpointMembers({
    checkpoint,
    tree,
    entries,
    operatorPublicKey: sample.operator.publicKey,
  });
}

/** Options for {@linkcode samplePackContent}. */
export interface SamplePackOptions {
  /** Organisation (default `Acme Bank`). */
  org?: string;
  /** Build time (default `2026-04-01T00:00:00Z`). */
  builtAt?: string | null;
  /** Risk globs recorded (default `["src/file_0.ts"]`: matched by name here). */
  riskPaths?: string[];
}

/** The pack content of a sample log's March window, as `bernstein compliance pack` builds it. */
export function samplePackContent(sample: SampleLog, options: SamplePackOptions = {}): PackContent {
  const window = packWindow(sample.since, sample.until);
  if (window === undefined) throw new Error("bad sample window");
  const selector = new WindowSelector(window);
  const signatures = new Map<string, Uint8Array | undefined>();
  sample.log.forEach((e, i) => {
    signatures.set(e.hash, e.signature);
    selector.add(i + 1, e.line, true);
  });
  const selection = selector.result();
  const entries: PackEntry[] = selection.entries.map((w) => ({
    ...w,
    signature: signatures.get(w.hash),
  }));
  const cards: PackCard[] = selectCards(
    sample.agents.map((a) => ({ location: `${a.agentId}/card.json`, bytes: a.card })),
    [...new Map(entries.map((e) => [`${e.entry.agent_id}\u0000${e.entry.agent_card_kid}`, {
      agent_id: e.entry.agent_id,
      kid: e.entry.agent_card_kid,
    }])).values()],
  ).cards;
  const riskPaths = options.riskPaths ?? ["src/file_0.ts"];
  const risky = entries.filter((e) => riskPaths.includes(e.entry.artefact_path));
  const facts = windowFacts(entries);
  const article12 = buildArticle12({
    facts,
    riskPaths,
    riskEntryCount: risky.length,
    riskArtefacts: [...new Set(risky.map((e) => e.entry.artefact_path))].sort(),
    unresolvedForkCount: 0,
    audit: {
      checked: false,
      reason: "sample pack: no audit log",
      tool_call_ids: new Set(entries.map((e) => e.entry.tool_call_id)).size,
      linked_tool_call_ids: 0,
      linked_audit_events: 0,
      audit_records_authenticated: 0,
      audit_records_rejected: 0,
    },
    remoteBiometricIdentification: false,
    retentionDays: 183,
    periodDays: window.days,
    retainedSinceNs: selection.retainedSinceNs,
    periodEndNs: window.endNs,
    unreadableLogLines: 0,
  });
  return {
    org: options.org ?? "Acme Bank",
    since: sample.since,
    until: sample.until,
    builtAt: options.builtAt === undefined ? "2026-04-01T00:00:00Z" : options.builtAt,
    builder: "bernstein 0.0.0-sample",
    entries,
    externalParents: selection.externalParents,
    cards,
    article12,
    operatorPublicKey: sample.operator.publicKey,
    checkpoint: sampleCheckpoint(sample, selection.entries),
  };
}

/**
 * The sample pack of {@linkcode samplePackContent} written member by member to `sink`, made
 * from {@linkcode sampleLogStream}: the same bytes, without holding the log (the scale
 * benchmark writes a 1 000 000-entry pack this way). Returns the archive's size.
 */
export async function writeSamplePack(
  options: SampleOptions & SamplePackOptions,
  sink: ZipSink,
): Promise<{ bytes: number; operator: OperatorSigner; entries: number }> {
  const sample = sampleLogStream(options);
  const window = packWindow(sample.since, sample.until);
  if (window === undefined) throw new Error("bad sample window");
  const selector = new WindowSelector(window, { keep: false });
  const members = new WindowMembers();
  const signers = new Map<string, { agent_id: string; kid: string }>();
  const riskPaths = options.riskPaths ?? ["src/file_0.ts"];
  const risky = new Set<string>();
  const toolCalls = new Set<string>();
  let riskEntries = 0;
  // Every line's leaf (the checkpoint's tree) and each window entry's digest and leaf.
  let leaves: Uint8Array = new Uint8Array(32 * 1024);
  let windowDigests: Uint8Array = new Uint8Array(32 * 1024);
  const windowLeaves: number[] = [];
  let lines = 0;
  for (const e of sample.entries) {
    if ((lines + 1) * 32 > leaves.length) leaves = grown(leaves);
    merkleLeafHash(sha256(e.line), 0, leaves, lines * 32);
    lines++;
    const w = selector.add(lines, e.line, true);
    if (w === undefined) continue;
    members.add(w.line, w.hash, e.signature);
    const i = windowLeaves.length;
    if ((i + 1) * 32 > windowDigests.length) windowDigests = grown(windowDigests);
    digestInto(w.hash, windowDigests, i * 32);
    windowLeaves.push(w.leaf);
    signers.set(`${w.entry.agent_id}\u0000${w.entry.agent_card_kid}`, {
      agent_id: w.entry.agent_id,
      kid: w.entry.agent_card_kid,
    });
    toolCalls.add(w.entry.tool_call_id);
    if (riskPaths.includes(w.entry.artefact_path)) {
      riskEntries++;
      risky.add(w.entry.artefact_path);
    }
  }
  const selection = selector.result();
  const collected = await members.finish();
  const tree = new MerkleTree(leaves, lines);
  const checkpoint = signCheckpoint({
    log: "lineage",
    root: merkleHashHex(tree.root()),
    size: tree.size,
    ts: "2026-04-01T00:00:00.000000Z",
  }, { ...sample.operator, kid: kidForPublicKey(sample.operator.publicKey) });
  const committed = new CheckpointedWindow(checkpoint, tree);
  windowLeaves.forEach((leaf, i) => committed.add(digestText(windowDigests, i * 32), leaf));
  const article12 = buildArticle12({
    facts: collected.facts,
    riskPaths,
    riskEntryCount: riskEntries,
    riskArtefacts: [...risky].sort(),
    unresolvedForkCount: 0,
    audit: {
      checked: false,
      reason: "sample pack: no audit log",
      tool_call_ids: toolCalls.size,
      linked_tool_call_ids: 0,
      linked_audit_events: 0,
      audit_records_authenticated: 0,
      audit_records_rejected: 0,
    },
    remoteBiometricIdentification: false,
    retentionDays: 183,
    periodDays: window.days,
    retainedSinceNs: selection.retainedSinceNs,
    periodEndNs: window.endNs,
    unreadableLogLines: 0,
  });
  const cards = selectCards(
    sample.agents.map((a) => ({ location: `${a.agentId}/card.json`, bytes: a.card })),
    [...signers.values()],
  ).cards;
  const written = await writePack(
    {
      org: options.org ?? "Acme Bank",
      since: sample.since,
      until: sample.until,
      builtAt: options.builtAt === undefined ? "2026-04-01T00:00:00Z" : options.builtAt,
      builder: "bernstein 0.0.0-sample",
      externalParents: selection.externalParents,
      cards,
      article12,
      operatorPublicKey: sample.operator.publicKey,
      checkpoint: committed.members(sample.operator.publicKey),
    },
    collected,
    sample.operator,
    sink,
  );
  return { bytes: written.bytes, operator: sample.operator, entries: collected.facts.entry_count };
}

function grown(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  out.set(bytes);
  return out;
}
