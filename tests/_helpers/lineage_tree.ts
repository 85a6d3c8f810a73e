// Builds small, deterministic lineage trees for tests (seeded keys, fake clock, fixed secret).
import { join } from "node:path";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { type LineageStore, openLineageStore } from "../../src/lineage/store/mod.ts";
import { type GateResult, openDirectoryGateInput, runLineageGate } from "../../src/verify/mod.ts";

/** The operator secret every test tree uses. */
export const TEST_OPERATOR_KEY: Uint8Array = new TextEncoder().encode("test-operator-secret");

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
  options: { operatorKey?: Uint8Array | null } = {},
): Promise<GateResult> {
  const opened = await openDirectoryGateInput({
    logPath: join(dir, ".sdd", "lineage", "log.jsonl"),
    cardsDir: join(dir, ".sdd", "agents"),
    operatorKey: options.operatorKey === null
      ? undefined
      : options.operatorKey ?? TEST_OPERATOR_KEY,
  });
  if (opened === undefined) throw new Error("no log");
  try {
    return await runLineageGate(opened.input);
  } finally {
    opened.close();
  }
}

/** The kinds of a gate result's issues, in order. */
export function kinds(result: GateResult): string[] {
  return result.issues.map((i) => i.kind);
}
