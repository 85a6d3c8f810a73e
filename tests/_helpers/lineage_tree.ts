// Builds small, deterministic lineage trees for tests (seeded keys, fake clock, fixed secret).
import { join } from "node:path";
import {
  type CheckpointSigner,
  ed25519KeyPairFromSeed,
  encodePublicKeyPem,
  signDetachedJws,
} from "../../src/crypto/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  agentDirName,
  entryBytes,
  entryHashOfBytes,
  kidForPublicKey,
  makeAgentCard,
  renderAgentCard,
  sealEntry,
  signaturePath,
} from "../../src/lineage/mod.ts";
import { type LineageStore, openLineageStore } from "../../src/lineage/store/mod.ts";
import type { CheckpointWriteResult } from "../../src/tlog/mod.ts";
import { type GateResult, openDirectoryGateInput, runLineageGate } from "../../src/verify/mod.ts";

/** The operator secret every test tree uses. */
export const TEST_OPERATOR_KEY: Uint8Array = new TextEncoder().encode("test-operator-secret");

const operatorPair = ed25519KeyPairFromSeed(new SeededRandom(424242).bytes(32));

/** The operator signing key test trees are checkpointed with. */
export const TEST_CHECKPOINT_SIGNER: CheckpointSigner = {
  ...operatorPair,
  kid: kidForPublicKey(operatorPair.publicKey),
};

/**
 * Signs a checkpoint of `<dir>/.sdd/lineage/log.jsonl` with {@linkcode TEST_CHECKPOINT_SIGNER}
 * and publishes its public key at `.sdd/keys/operator.pub`, as the real writer does.
 */
export async function checkpointTree(
  dir: string,
  clock?: FakeClock,
): Promise<CheckpointWriteResult> {
  const keys = join(dir, ".sdd", "keys");
  Deno.mkdirSync(keys, { recursive: true });
  Deno.writeTextFileSync(
    join(keys, "operator.pub"),
    encodePublicKeyPem(TEST_CHECKPOINT_SIGNER.publicKey),
  );
  return await openLineageStore({
    sdd: join(dir, ".sdd"),
    operatorKey: TEST_OPERATOR_KEY,
    clock: clock ?? new FakeClock(Date.UTC(2026, 0, 2)),
  }).checkpoint(TEST_CHECKPOINT_SIGNER);
}

const enc = new TextEncoder();

/** A store over `<dir>/.sdd` with seeded keys and a fake clock starting at 2026-01-01. */
export function testStore(
  dir: string,
  options: { seed?: number; strict?: boolean; enabled?: boolean } = {},
): { store: LineageStore; clock: FakeClock; warnings: string[] } {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const warnings: string[] = [];
  const store = openLineageStore({
    sdd: join(dir, ".sdd"),
    operatorKey: TEST_OPERATOR_KEY,
    clock,
    random: new SeededRandom(options.seed ?? 1),
    strict: options.strict,
    enabled: options.enabled,
    warn: (w) => warnings.push(`${w.code}: ${w.message}`),
  });
  return { store, clock, warnings };
}

/**
 * Writes a small valid tree: `src/a.ts` with three linear versions by two agents, `src/b.ts`
 * derived from a.ts (cross-artefact parent), and a `pr://` external artefact.
 */
export async function writeValidTree(dir: string): Promise<LineageStore> {
  const { store, clock } = testStore(dir);
  const write = async (path: string, text: string, agent: string, extra: string[] = []) => {
    clock.advance(1000);
    const r = await store.recordWrite(path, enc.encode(text), {
      agent,
      toolCallId: `tc-${text}`,
      spanId: `span-${text}`,
      extraParents: extra,
      kind: path.includes("://") ? "external" : "file",
    });
    if (r.status !== "recorded") throw new Error(`fixture write failed: ${JSON.stringify(r)}`);
    return r.entryHash;
  };
  await write("src/a.ts", "a1", "claude-1");
  await write("src/a.ts", "a2", "codex-2");
  const a3 = await write("src/a.ts", "a3", "claude-1");
  await write("src/b.ts", "b1", "codex-2", [a3]);
  await write("pr://github.com/acme/widget/7", "pr7", "claude-1");
  return store;
}

/** Runs the gate over `<dir>/.sdd` (log, sidecars, cards) with the test operator key. */
export async function gateDir(
  dir: string,
  options: {
    operatorKey?: Uint8Array | null;
    workers?: number;
    operatorPublicKey?: Uint8Array;
    externalCheckpoints?: { name: string; bytes: Uint8Array }[];
  } = {},
): Promise<GateResult> {
  const opened = await openDirectoryGateInput({
    logPath: join(dir, ".sdd", "lineage", "log.jsonl"),
    cardsDir: join(dir, ".sdd", "agents"),
    operatorKey: options.operatorKey === null
      ? undefined
      : options.operatorKey ?? TEST_OPERATOR_KEY,
    operatorPublicKey: options.operatorPublicKey ?? TEST_CHECKPOINT_SIGNER.publicKey,
    externalCheckpoints: options.externalCheckpoints,
  });
  if (opened === undefined) throw new Error("no log");
  try {
    return await runLineageGate(opened.input, { workers: options.workers });
  } finally {
    opened.close();
  }
}

/** The kinds of a gate result's issues, in order. */
export function kinds(result: GateResult): string[] {
  return result.issues.map((i) => i.kind);
}

/** Options for {@linkcode generateTree}. */
export interface GenerateTreeOptions {
  /** Number of entries. */
  entries: number;
  /** Number of artefacts the entries cycle through (default 1 000). */
  artefacts?: number;
  /** The operator secret (default the test key). */
  operatorSecret?: string;
}

/**
 * Writes a valid `.sdd/` tree of many entries fast (no store, no fsync): 5 agents, linear
 * chains over `artefacts` artefacts. For gate tests and benchmarks.
 */
export function generateTree(dir: string, options: GenerateTreeOptions): void {
  const n = options.entries;
  const artefactCount = options.artefacts ?? 1000;
  const sdd = join(dir, ".sdd");
  const lineage = join(sdd, "lineage");
  Deno.mkdirSync(lineage, { recursive: true });
  const rnd = new SeededRandom(7);
  const agents = Array.from({ length: 5 }, (_, i) => {
    const pair = ed25519KeyPairFromSeed(rnd.bytes(32));
    const kid = kidForPublicKey(pair.publicKey);
    const id = `agent-${i}`;
    const cardDir = join(sdd, "agents", agentDirName(id), kid);
    Deno.mkdirSync(cardDir, { recursive: true });
    Deno.writeFileSync(
      join(cardDir, "card.json"),
      renderAgentCard(makeAgentCard(id, { kid, publicKey: pair.publicKey })),
    );
    return { id, kid, seed: pair.seed };
  });
  const key = options.operatorSecret === undefined
    ? TEST_OPERATOR_KEY
    : new TextEncoder().encode(options.operatorSecret);
  const tips = new Map<string, string>();
  const madeDirs = new Set<string>();
  const out = Deno.openSync(join(lineage, "log.jsonl"), {
    write: true,
    create: true,
    truncate: true,
  });
  const buffer: Uint8Array[] = [];
  let buffered = 0;
  const flush = () => {
    const all = new Uint8Array(buffered);
    let at = 0;
    for (const b of buffer) {
      all.set(b, at);
      at += b.length;
    }
    let written = 0;
    while (written < all.length) written += out.writeSync(all.subarray(written));
    buffer.length = 0;
    buffered = 0;
  };
  const ts0 = 1_767_225_600_000_000_000n;
  for (let i = 0; i < n; i++) {
    const artefact = `src/module_${i % artefactCount}/file_${i % artefactCount}.ts`;
    const by = agents[i % agents.length];
    const parent = tips.get(artefact);
    const entry = sealEntry({
      artefact_path: artefact,
      artefact_kind: "file",
      content_hash: "sha256:" + i.toString(16).padStart(64, "0"),
      parent_hashes: parent === undefined ? [] : [parent],
      agent_id: by.id,
      agent_card_kid: by.kid,
      tool_call_id: `toolu_${i.toString(36).padStart(12, "0")}`,
      span_id: i.toString(16).padStart(16, "0"),
      ts_ns: ts0 + BigInt(i) * 1_000_000n,
    }, key);
    const line = entryBytes(entry);
    const hash = entryHashOfBytes(line);
    tips.set(artefact, hash);
    const sig = join(lineage, signaturePath(artefact, hash));
    const sigDir = join(sig, "..");
    if (!madeDirs.has(sigDir)) {
      Deno.mkdirSync(sigDir, { recursive: true });
      madeDirs.add(sigDir);
    }
    Deno.writeTextFileSync(sig, signDetachedJws(by.seed, line, { kid: by.kid }));
    buffer.push(line, new Uint8Array([0x0a]));
    buffered += line.length + 1;
    if (buffered > 4 * 1024 * 1024) flush();
  }
  flush();
  out.close();
}
