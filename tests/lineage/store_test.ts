// The writer: recordWrite, modes, projections and their catch-up, torn tails, identities and
// key rotation, steward merges, enabled/strict.
import { deepStrictEqual, equal, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { signDetachedJws } from "../../src/crypto/mod.ts";
import {
  byArtefactPath,
  entryBytes,
  entryHash,
  LineageConflictError,
  parseTipSet,
  sealEntry,
  signaturePath,
  tipsPath,
} from "../../src/lineage/mod.ts";
import {
  agentKeyDirName,
  LineageWriteError,
  rotateAgentKey,
  STEWARD_AGENT_ID,
} from "../../src/lineage/store/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { gateDir, kinds, TEST_OPERATOR_KEY, testStore } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

const enc = new TextEncoder();
const opts = (agent: string, n = 0) => ({ agent, toolCallId: `tc${n}`, spanId: `sp${n}` });

async function mode(path: string): Promise<number> {
  return ((await Deno.stat(path)).mode ?? 0) & 0o777;
}

async function read(path: string): Promise<Uint8Array> {
  return await Deno.readFile(path);
}

Deno.test("recordWrite: genesis, then the open tip as parent; files, modes and the gate", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    const first = await store.recordWrite("src/a.ts", enc.encode("one"), opts("claude-1", 1));
    strictEqual(first.status, "recorded");
    if (first.status !== "recorded") return;
    deepStrictEqual(first.entry.parent_hashes, []);
    strictEqual(
      first.entry.content_hash,
      "sha256:" + "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed",
    );
    const second = await store.recordWrite("src/a.ts", enc.encode("two"), opts("codex-2", 2));
    if (second.status !== "recorded") throw new Error("not recorded");
    deepStrictEqual(second.entry.parent_hashes, [first.entryHash]);
    const { paths } = store;
    strictEqual(await mode(paths.logPath), 0o600);
    const log = await Deno.readTextFile(paths.logPath);
    strictEqual(
      log,
      new TextDecoder().decode(entryBytes(first.entry)) + "\n" +
        new TextDecoder().decode(entryBytes(second.entry)) + "\n",
    );
    // Sidecar: the detached JWS over exactly the logged bytes, no newline.
    const jws = await Deno.readTextFile(
      join(paths.lineageDir, signaturePath("src/a.ts", first.entryHash)),
    );
    equal(jws.endsWith("\n"), false);
    // Private keys 0600 under keys/agents; cards in both layouts.
    const keyDir = join(paths.keysDir, "claude-1");
    const kid = await Deno.readTextFile(join(keyDir, "active"));
    strictEqual(kid, first.entry.agent_card_kid);
    strictEqual(await mode(join(keyDir, `${kid}.pem`)), 0o600);
    deepStrictEqual(
      await read(join(paths.cardsDir, "claude-1", "card.json")),
      await read(join(paths.cardsDir, "claude-1", kid, "card.json")),
    );
    // Projections.
    const byArtefact = await Deno.readTextFile(join(paths.lineageDir, byArtefactPath("src/a.ts")));
    strictEqual(byArtefact, log);
    const tips = parseTipSet(await read(join(paths.lineageDir, tipsPath("src/a.ts"))));
    deepStrictEqual(tips, { open: [second.entryHash], merged: [] });
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

Deno.test("lineage.enabled false records nothing", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir, { enabled: false });
    deepStrictEqual(await store.recordWrite("a", enc.encode("x"), opts("a")), {
      status: "disabled",
    });
    await rejects(() => Deno.stat(join(dir, ".sdd")), Deno.errors.NotFound);
  });
});

Deno.test("non-strict: a failed record warns and lets the write proceed; strict refuses it", async () => {
  await withTempDir(async (dir) => {
    const { store, warnings } = testStore(dir);
    const r = await store.recordWrite("../etc/passwd", enc.encode("x"), opts("a"));
    strictEqual(r.status, "failed");
    ok(warnings[0].startsWith("lineage.not_recorded: lineage for ../etc/passwd was not recorded"));
    const bad = await store.recordWrite("a", enc.encode("x"), {
      ...opts("a"),
      attachmentDigests: ["zz"],
    });
    strictEqual(bad.status, "failed");
    // Nothing was appended (the lock may have created an empty log).
    strictEqual((await Deno.stat(store.paths.logPath)).size, 0);
    const strict = testStore(dir, { strict: true }).store;
    await rejects(
      () => strict.recordWrite("/abs", enc.encode("x"), opts("a")),
      (e: Error) =>
        e instanceof LineageWriteError &&
        /lineage\.strict is on, so the write is refused/.test(e.message),
    );
  });
});

Deno.test("attachment digests and cross-artefact parents are recorded and verify", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    const src = await store.recordWrite("data/in.csv", enc.encode("1,2"), opts("a"));
    if (src.status !== "recorded") throw new Error("x");
    const out = await store.recordWrite("report.md", enc.encode("# r"), {
      ...opts("a", 2),
      kind: "report",
      trustClass: "workspace",
      attachmentDigests: ["d".repeat(64)],
      extraParents: [src.entryHash],
    });
    if (out.status !== "recorded") throw new Error("x");
    deepStrictEqual(out.entry.parent_hashes, [src.entryHash]);
    deepStrictEqual(out.entry.attachment_digests, ["d".repeat(64)]);
    strictEqual(out.entry.trust_class, "workspace");
    deepStrictEqual((await gateDir(dir)).issues, []);
    const walk = await store.walk("report.md");
    deepStrictEqual(walk.entries.map((e) => e.entry.artefact_path), ["data/in.csv", "report.md"]);
  });
});

Deno.test("projections catch up after another writer appended, and reindex rebuilds them", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    const a = await store.recordWrite("f", enc.encode("1"), opts("a"));
    if (a.status !== "recorded") throw new Error("x");
    // Another writer (another process, or the Python implementation) appends a signed entry
    // without touching our projections.
    const signer = await store.signer("b");
    const foreign = sealEntry({
      artefact_path: "f",
      artefact_kind: "file",
      content_hash: "sha256:" + "e".repeat(64),
      parent_hashes: [a.entryHash],
      agent_id: "b",
      agent_card_kid: signer.kid,
      tool_call_id: "t",
      span_id: "s",
      ts_ns: 5n,
    }, TEST_OPERATOR_KEY);
    const line = entryBytes(foreign);
    const sidecar = join(store.paths.lineageDir, signaturePath("f", entryHash(foreign)));
    await Deno.mkdir(join(sidecar, ".."), { recursive: true });
    await Deno.writeTextFile(sidecar, signDetachedJws(signer.seed, line, { kid: signer.kid }));
    await Deno.writeFile(store.paths.logPath, new Uint8Array([...line, 0x0a]), { append: true });
    const c = await store.recordWrite("f", enc.encode("3"), opts("a"));
    if (c.status !== "recorded") throw new Error("x");
    deepStrictEqual(c.entry.parent_hashes, [entryHash(foreign)]);
    const tipsFile = join(store.paths.lineageDir, tipsPath("f"));
    const byFile = join(store.paths.lineageDir, byArtefactPath("f"));
    const before = [await read(tipsFile), await read(byFile)];
    deepStrictEqual(await store.reindex(), { applied: 3, skipped: 0 });
    deepStrictEqual([await read(tipsFile), await read(byFile)], before);
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

Deno.test("a lost projection state forces a full rebuild before the next parent is chosen", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    await store.recordWrite("f", enc.encode("1"), opts("a"));
    const b = await store.recordWrite("f", enc.encode("2"), opts("a"));
    if (b.status !== "recorded") throw new Error("x");
    // Simulate a crash that lost the tips update: stale tips, no state file.
    await Deno.remove(store.paths.statePath);
    await Deno.writeTextFile(
      join(store.paths.lineageDir, tipsPath("f")),
      '{"merged":[],"open":[]}',
    );
    const c = await store.recordWrite("f", enc.encode("3"), opts("a"));
    if (c.status !== "recorded") throw new Error("x");
    deepStrictEqual(c.entry.parent_hashes, [b.entryHash]);
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

Deno.test("a torn tail is closed with a newline, never truncated, and the gate reports it", async () => {
  await withTempDir(async (dir) => {
    const { store, warnings } = testStore(dir);
    await store.recordWrite("f", enc.encode("1"), opts("a"));
    const torn = '{"agent_card_kid":"00';
    await Deno.writeTextFile(store.paths.logPath, torn, { append: true });
    const before = await Deno.readTextFile(store.paths.logPath);
    const torn1 = await gateDir(dir);
    deepStrictEqual(kinds(torn1), ["missing trailing newline", "non-canonical line bytes"]);
    const r = await store.recordWrite("f", enc.encode("2"), opts("a"));
    strictEqual(r.status, "recorded");
    ok(warnings.some((w) => w.startsWith("lineage.torn_tail")));
    const after = await Deno.readTextFile(store.paths.logPath);
    ok(after.startsWith(before + "\n"), "the torn bytes are kept, closed by a newline");
    const result = await gateDir(dir);
    deepStrictEqual(result.issues.map((i) => `${i.line} ${i.kind}`), [
      "2 non-canonical line bytes",
    ]);
  });
});

Deno.test("key rotation: new kid and per-kid card, old card kept, old entries still verify", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    const old = await store.recordWrite("f", enc.encode("1"), opts("claude-1"));
    if (old.status !== "recorded") throw new Error("x");
    const rotated = await rotateAgentKey(store.paths, "claude-1", { random: new SeededRandom(99) });
    equal(rotated.kid === old.entry.agent_card_kid, false);
    store.forgetSigners();
    const fresh = await store.recordWrite("f", enc.encode("2"), opts("claude-1"));
    if (fresh.status !== "recorded") throw new Error("x");
    strictEqual(fresh.entry.agent_card_kid, rotated.kid);
    const cards = join(store.paths.cardsDir, "claude-1");
    await Deno.stat(join(cards, old.entry.agent_card_kid, "card.json"));
    await Deno.stat(join(cards, rotated.kid, "card.json"));
    // The single-layout card stays the first key's.
    strictEqual(
      JSON.parse(await Deno.readTextFile(join(cards, "card.json"))).kid,
      old.entry.agent_card_kid,
    );
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

Deno.test("a private key readable by others is refused", async () => {
  await withTempDir(async (dir) => {
    const { store, warnings } = testStore(dir);
    await store.recordWrite("f", enc.encode("1"), opts("a"));
    const keyDir = join(store.paths.keysDir, "a");
    const kid = await Deno.readTextFile(join(keyDir, "active"));
    await Deno.chmod(join(keyDir, `${kid}.pem`), 0o644);
    const again = testStore(dir);
    const r = await again.store.recordWrite("f", enc.encode("2"), opts("a"));
    strictEqual(r.status, "failed");
    ok(again.warnings[0].includes("readable by group or others"));
    strictEqual(warnings.length, 0);
  });
});

Deno.test("agent ids that need sanitising get a card folder per FORMATS and a unique key folder", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    await store.recordWrite("f", enc.encode("1"), opts("agent:codex/2"));
    await store.recordWrite("g", enc.encode("1"), opts("agent_codex_2"));
    const cards = [...Deno.readDirSync(store.paths.cardsDir)].map((e) => e.name);
    deepStrictEqual(cards, ["agent_codex_2"]);
    ok(agentKeyDirName("agent:codex/2").startsWith("agent_codex_2~"));
    strictEqual(agentKeyDirName("agent_codex_2"), "agent_codex_2");
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

async function forkedTree(dir: string) {
  const { store, clock } = testStore(dir);
  const root = await store.recordWrite("f", enc.encode("root"), opts("alice"));
  if (root.status !== "recorded") throw new Error("x");
  clock.advance(10);
  const a = await store.recordWrite("f", enc.encode("alice's"), opts("alice"));
  if (a.status !== "recorded") throw new Error("x");
  // Bob wrote concurrently on another host from the same parent (logs merged later).
  const bob = await store.signer("bob");
  const forked = sealEntry({
    artefact_path: "f",
    artefact_kind: "file",
    content_hash: "sha256:" + "b".repeat(64),
    parent_hashes: [root.entryHash],
    agent_id: "bob",
    agent_card_kid: bob.kid,
    tool_call_id: "t",
    span_id: "s",
    ts_ns: 1n,
  }, TEST_OPERATOR_KEY);
  const line = entryBytes(forked);
  const sidecar = join(store.paths.lineageDir, signaturePath("f", entryHash(forked)));
  await Deno.writeTextFile(sidecar, signDetachedJws(bob.seed, line, { kid: bob.kid }));
  await Deno.writeFile(store.paths.logPath, new Uint8Array([...line, 0x0a]), { append: true });
  return { store, a: a.entryHash, b: entryHash(forked) };
}

Deno.test("forks are listed, 'human' refuses, and a steward merge resolves them", async () => {
  await withTempDir(async (dir) => {
    const { store, a, b } = await forkedTree(dir);
    deepStrictEqual(kinds(await gateDir(dir)), ["unresolved fork"]);
    const found = await store.forks();
    deepStrictEqual(found.forks.map((f) => f.children), [[a, b]]);
    await rejects(
      () => store.merge("f", { policy: { kind: "human" } }),
      (e: Error) => e instanceof LineageConflictError && /never picks a winner/.test(e.message),
    );
    const merged = await store.merge("f", { policy: { kind: "first-writer" } });
    strictEqual(merged.winner, b); // bob's ts_ns (1) is the earliest
    strictEqual(merged.entry.content_hash, "sha256:" + "b".repeat(64));
    deepStrictEqual(merged.entry.parent_hashes, [a, b]);
    strictEqual(merged.entry.agent_id, STEWARD_AGENT_ID);
    deepStrictEqual((await gateDir(dir)).issues, []);
    deepStrictEqual((await store.forks()).forks, []);
    await rejects(
      () => store.merge("f", { policy: { kind: "first-writer" } }),
      /no unresolved fork/,
    );
  });
});

Deno.test("merge by agent policy takes that agent's head, and refuses an agent with none", async () => {
  await withTempDir(async (dir) => {
    const { store, a } = await forkedTree(dir);
    await rejects(() => store.merge("f", { policy: { kind: "agent", agentId: "carol" } }), /carol/);
    const merged = await store.merge("f", { policy: { kind: "agent", agentId: "alice" } });
    strictEqual(merged.winner, a);
    deepStrictEqual((await gateDir(dir)).issues, []);
  });
});

Deno.test("chain lists one artefact oldest first; a missing log is an empty history", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    deepStrictEqual(await store.chain("f"), []);
    await store.recordWrite("f", enc.encode("1"), opts("a"));
    await store.recordWrite("g", enc.encode("1"), opts("a"));
    await store.recordWrite("f", enc.encode("2"), opts("a"));
    deepStrictEqual((await store.chain("f")).map((e) => e.line), [1, 3]);
  });
});

Deno.test("a project's store honours lineage.enabled and lineage.strict from its configuration", async () => {
  const { openProjectLineageStore } = await import("../../src/lineage/store/mod.ts");
  const { mapEnv } = await import("../../src/io/mod.ts");
  const { makeRepo } = await import("../_helpers/temp.ts");
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const env = mapEnv({ BERNSTEIN_OPERATOR_SECRET: "s", HOME: dir });
    const on = await openProjectLineageStore({ cwd: dir, env });
    equal(on.enabled, true);
    equal(on.strict, false);
    strictEqual((await on.recordWrite("f", enc.encode("1"), opts("a"))).status, "recorded");
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "lineage:\n  enabled: false\n");
    const off = await openProjectLineageStore({ cwd: dir, env });
    deepStrictEqual(await off.recordWrite("f", enc.encode("2"), opts("a")), { status: "disabled" });
    const strict = await openProjectLineageStore({
      cwd: dir,
      env: mapEnv({ BERNSTEIN_OPERATOR_SECRET: "s", HOME: dir, BERNSTEIN_LINEAGE_STRICT: "true" }),
    });
    equal(strict.strict, true);
    // Without a secret, a writer mints the audit key (0600) and derives the operator key.
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "lineage:\n  enabled: true\n");
    const keyPath = join(dir, "audit.key");
    const minted = await openProjectLineageStore({
      cwd: dir,
      env: mapEnv({ HOME: dir, BERNSTEIN_AUDIT_KEY_PATH: keyPath }),
    });
    strictEqual((await minted.recordWrite("f", enc.encode("3"), opts("a"))).status, "recorded");
    strictEqual(await mode(keyPath), 0o600);
  });
});

Deno.test("a replaced card is never overwritten by the writer; the write is refused instead", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    const first = await store.recordWrite("f", enc.encode("1"), opts("a"));
    if (first.status !== "recorded") throw new Error("x");
    const cardPath = join(store.paths.cardsDir, "a", first.entry.agent_card_kid, "card.json");
    const card = JSON.parse(await Deno.readTextFile(cardPath));
    const { ed25519KeyPairFromSeed, encodePublicKeyPem } = await import("../../src/crypto/mod.ts");
    card.public_key_pem = encodePublicKeyPem(ed25519KeyPairFromSeed(new Uint8Array(32)).publicKey);
    const forged = JSON.stringify(card);
    await Deno.writeTextFile(cardPath, forged);
    // A fresh writer (new process) loads the identity and meets the replaced card.
    const next = testStore(dir);
    const r = await next.store.recordWrite("f", enc.encode("2"), opts("a"));
    strictEqual(r.status, "failed");
    ok(next.warnings[0].includes("holds a different key"));
    strictEqual(await Deno.readTextFile(cardPath), forged);
    // A card that is only reformatted is the same card.
    const good = JSON.parse(await Deno.readTextFile(join(store.paths.cardsDir, "a", "card.json")));
    await Deno.writeTextFile(cardPath, JSON.stringify(good, null, 2));
    strictEqual(
      (await testStore(dir).store.recordWrite("f", enc.encode("3"), opts("a"))).status,
      "recorded",
    );
  });
});

Deno.test("an append killed before its line is written leaves no orphaned signature behind", async () => {
  await withTempDir(async (dir) => {
    const { store, warnings } = testStore(dir);
    await store.recordWrite("src/a.ts", enc.encode("one"), opts("claude-1", 1));
    const lineage = join(dir, ".sdd", "lineage");
    const size = (await Deno.stat(join(lineage, "log.jsonl"))).size;
    // What a writer killed between its sidecar and its log line leaves: the intent and a
    // signature of an entry the log never got.
    const ghost = "sha256:" + "ab".repeat(32);
    const sidecar = signaturePath("src/a.ts", ghost);
    await Deno.mkdir(join(lineage, sidecar, ".."), { recursive: true });
    await Deno.writeTextFile(join(lineage, sidecar), "x..y");
    await Deno.writeTextFile(
      join(lineage, "append-intent.json"),
      JSON.stringify({ hash: ghost, sidecar, log_size: size }),
    );
    deepStrictEqual(kinds(await gateDir(dir)), ["orphaned signature"]);
    await store.recordWrite("src/a.ts", enc.encode("two"), opts("claude-1", 2));
    deepStrictEqual(kinds(await gateDir(dir)), []);
    ok(warnings.some((w) => w.startsWith("lineage.interrupted_append")), warnings.join("\n"));
    // An intent whose line did make it (killed just after the append) keeps its signature.
    const lines = (await Deno.readTextFile(join(lineage, "log.jsonl"))).split("\n");
    const last = lines[lines.length - 2];
    const before = (await Deno.stat(join(lineage, "log.jsonl"))).size - last.length - 1;
    const kept = signaturePath("src/a.ts", await hashOfLine(last));
    await Deno.writeTextFile(
      join(lineage, "append-intent.json"),
      JSON.stringify({ hash: await hashOfLine(last), sidecar: kept, log_size: before }),
    );
    await store.recordWrite("src/a.ts", enc.encode("three"), opts("claude-1", 3));
    deepStrictEqual(kinds(await gateDir(dir)), []);
  });
});

Deno.test("an append intent that is JSON but not an object (a damaged write) is dropped like an unreadable one", async () => {
  await withTempDir(async (dir) => {
    const { store } = testStore(dir);
    await store.recordWrite("src/a.ts", enc.encode("one"), opts("claude-1", 1));
    const intent = join(dir, ".sdd", "lineage", "append-intent.json");
    for (const text of ["null", "[1]", '"x"']) {
      await Deno.writeTextFile(intent, text);
      const next = testStore(dir);
      const r = await next.store.recordWrite("src/a.ts", enc.encode(text), opts("claude-1", 2));
      strictEqual(r.status, "recorded", `${text}: ${next.warnings.join("; ")}`);
      await rejects(Deno.stat(intent), Deno.errors.NotFound);
    }
  });
});

async function hashOfLine(line: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(line)));
  return "sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}
