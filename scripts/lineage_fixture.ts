// Generates fixtures/lineage/valid-tree/: a small, readable, valid lineage tree written by the
// real store with seeded keys, a fake clock and a fixed operator secret. It covers linear
// chains, a cross-artefact parent, an artefact URI, optional fields, a key rotation and a fork
// resolved by a steward merge. Private keys are not copied (only what a verifier reads).
//
//   deno run -P=dev scripts/lineage_fixture.ts            # (re)write the fixture
//   deno run -P=dev scripts/lineage_fixture.ts --check    # exit 1 when the fixture is stale
//
// tests/lineage/fixture_test.ts runs the check, so a change to any byte rule shows up there.
import { join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { canonicalize, type JsonValue } from "../src/canonical/mod.ts";
import { FakeClock, SeededRandom } from "../src/io/mod.ts";
import { entryBytes, entryHash, sealEntry, signaturePath } from "../src/lineage/mod.ts";
import {
  openLineageStore,
  type RecordWriteOptions,
  rotateAgentKey,
} from "../src/lineage/store/mod.ts";
import { signDetachedJws } from "../src/crypto/mod.ts";

/** The operator secret of the fixture (BERNSTEIN_OPERATOR_SECRET). */
export const FIXTURE_OPERATOR_SECRET = "fixture-operator-secret";

const enc = new TextEncoder();

/** Writes the fixture tree's `.sdd/` under `dir` and returns a description of it. */
export async function buildFixture(dir: string): Promise<JsonValue> {
  const sdd = join(dir, ".sdd");
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const key = enc.encode(FIXTURE_OPERATOR_SECRET);
  const store = openLineageStore({ sdd, operatorKey: key, clock, random: new SeededRandom(2026) });
  const write = async (
    path: string,
    text: string,
    agent: string,
    extra: Partial<RecordWriteOptions> = {},
  ) => {
    clock.advance(1000);
    const r = await store.recordWrite(path, enc.encode(text), {
      agent,
      toolCallId: `toolu_${text}`,
      spanId: `span_${text}`,
      ...extra,
    });
    if (r.status !== "recorded") throw new Error(`fixture write of ${path} failed`);
    return r.entryHash;
  };
  const a1 = await write("src/app.ts", "app-v1", "claude-1");
  await write("src/app.ts", "app-v2", "codex-2");
  const a3 = await write("src/app.ts", "app-v3", "claude-1", {
    attachmentDigests: ["ab".repeat(32)],
  });
  await write("docs/report.md", "report-v1", "codex-2", {
    kind: "report",
    trustClass: "workspace",
    extraParents: [a3],
  });
  await write("pr://github.com/acme/widget/42", "pr-42", "claude-1", { kind: "external" });
  // claude-1 rotates its key: later entries use the new kid, earlier ones keep verifying.
  await rotateAgentKey(store.paths, "claude-1", { random: new SeededRandom(7) });
  store.forgetSigners();
  const c1 = await write("src/config.json", "config-v1", "claude-1", { kind: "config" });
  // A fork of src/config.json: a second child of c1 written by another host (simulated here by
  // appending directly), then resolved by the steward.
  clock.advance(1000);
  const other = await store.signer("gemini-3");
  const forked = sealEntry({
    artefact_path: "src/config.json",
    artefact_kind: "config",
    content_hash: "sha256:" + "5e".repeat(32),
    parent_hashes: [c1],
    agent_id: "gemini-3",
    agent_card_kid: other.kid,
    tool_call_id: "toolu_config-gemini",
    span_id: "span_config-gemini",
    ts_ns: clock.nowNs(),
  }, key);
  await Deno.writeTextFile(
    join(store.paths.lineageDir, signaturePath("src/config.json", entryHash(forked))),
    signDetachedJws(other.seed, entryBytes(forked), { kid: other.kid }),
  );
  await write("src/config.json", "config-v2", "claude-1");
  await Deno.writeFile(store.paths.logPath, new Uint8Array([...entryBytes(forked), 0x0a]), {
    append: true,
  });
  clock.advance(1000);
  const merge = await store.merge("src/config.json", { policy: { kind: "first-writer" } });
  await store.reindex();
  return {
    operator_secret: FIXTURE_OPERATOR_SECRET,
    entries: 9,
    artefacts: [
      "src/app.ts",
      "docs/report.md",
      "pr://github.com/acme/widget/42",
      "src/config.json",
    ],
    genesis_of_app: a1,
    merge_entry: merge.entryHash,
    expect: "bernstein lineage gate: PASS (with BERNSTEIN_OPERATOR_SECRET set to operator_secret)",
  };
}

/** The files of the fixture (relative path → bytes), without private keys or our state file. */
export async function fixtureFiles(dir: string): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  async function walk(path: string): Promise<void> {
    for await (const e of Deno.readDir(path)) {
      const full = join(path, e.name);
      const rel = relative(dir, full);
      if (rel.startsWith(".sdd/keys") || e.name === "projection-state.json") continue;
      if (e.isDirectory) await walk(full);
      else if (e.isFile && !e.name.endsWith(".lock") && !e.name.endsWith(".tmp")) {
        out.set(rel, await Deno.readFile(full));
      }
    }
  }
  await walk(dir);
  return out;
}

/** Builds the fixture in a temp folder: its files and its description. */
export async function generateFixture(): Promise<Map<string, Uint8Array>> {
  const tmp = await Deno.makeTempDir({ prefix: "bernstein-fixture-" });
  try {
    const description = await buildFixture(tmp);
    const files = await fixtureFiles(tmp);
    files.set("fixture.json", enc.encode(canonicalize(description, "canon") + "\n"));
    return files;
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

/** Where the committed fixture lives. */
export const FIXTURE_DIR: string = fromFileUrl(
  new URL("../fixtures/lineage/valid-tree/", import.meta.url),
);

if (import.meta.main) {
  const files = await generateFixture();
  if (Deno.args.includes("--check")) {
    const committed = await fixtureFiles(FIXTURE_DIR).catch(() => new Map<string, Uint8Array>());
    const stale = [...new Set([...files.keys(), ...committed.keys()])].filter((k) => {
      const a = files.get(k);
      const b = committed.get(k);
      return a === undefined || b === undefined || a.length !== b.length ||
        a.some((x, i) => x !== b[i]);
    });
    if (stale.length > 0) {
      console.error(`fixture is stale: ${stale.join(", ")}; run scripts/lineage_fixture.ts`);
      Deno.exit(1);
    }
    console.log("fixture is up to date");
  } else {
    await Deno.remove(FIXTURE_DIR, { recursive: true }).catch(() => {});
    for (const [rel, bytes] of files) {
      const path = join(FIXTURE_DIR, rel);
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeFile(path, bytes);
    }
    console.log(`wrote ${files.size} files to ${FIXTURE_DIR}`);
  }
}
