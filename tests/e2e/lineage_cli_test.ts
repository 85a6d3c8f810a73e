// `bernstein lineage …` as a real subprocess under the `bernstein` permission set.
import { deepStrictEqual, equal, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runBernstein } from "../_helpers/cli.ts";
import { writeValidTree } from "../_helpers/lineage_tree.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

const SECRET = { BERNSTEIN_OPERATOR_SECRET: "test-operator-secret" };

async function repoWithTree(fn: (dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await writeValidTree(dir);
    await fn(dir);
  });
}

Deno.test("gate: PASS and exit 0 on a valid tree, with the summary line", async () => {
  await repoWithTree(async (dir) => {
    const r = await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET });
    strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    strictEqual(lines.at(-1), "PASS");
    ok(
      lines[0].startsWith(
        "checked 5 entries (5 lines) across 3 artefacts with 4 cards; HMAC checked",
      ),
    );
  });
});

Deno.test("gate: FAIL (n issues) and exit 1, one line per issue; --json gives the structure", async () => {
  await repoWithTree(async (dir) => {
    const log = join(dir, ".sdd/lineage/log.jsonl");
    const text = await Deno.readTextFile(log);
    await Deno.writeTextFile(log, text.replace('"v":1}', '"v":1} '));
    const r = await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET });
    strictEqual(r.code, 1);
    const lines = r.stdout.trim().split("\n");
    strictEqual(lines.at(-1), "FAIL (3 issues)");
    ok(lines[0].startsWith("log.jsonl:1: non-canonical line bytes"));
    ok(lines[1].startsWith("log.jsonl:2: dangling parent_hash"));
    // The signed entry that line 1 was is gone: its sidecar is left over.
    ok(/^signatures\/.*\.jws: orphaned signature: /.test(lines[2]), lines[2]);
    const j = await runBernstein(["lineage", "gate", "--json"], { cwd: dir, env: SECRET });
    strictEqual(j.code, 1);
    const doc = JSON.parse(j.stdout);
    strictEqual(doc.ok, false);
    strictEqual(doc.verdict, "FAIL (3 issues)");
    deepStrictEqual(doc.issues.map((i: { kind: string; line: number }) => [i.line, i.kind]), [
      [1, "non-canonical line bytes"],
      [2, "dangling parent_hash"],
      [null, "orphaned signature"],
    ]);
    strictEqual(doc.hmac_checked, true);
  });
});

Deno.test("gate: no log is SKIPPED with exit 0; --log and --cards point elsewhere", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const r = await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET });
    strictEqual(r.code, 0);
    ok(r.stdout.startsWith("SKIPPED: no lineage log at "));
    const j = await runBernstein(["lineage", "gate", "--json"], { cwd: dir, env: SECRET });
    strictEqual(JSON.parse(j.stdout).skipped, true);
    // A tree somewhere else, named explicitly.
    const other = join(dir, "elsewhere");
    await Deno.mkdir(other);
    await writeValidTree(other);
    const named = await runBernstein([
      "lineage",
      "gate",
      "--log",
      "elsewhere/.sdd/lineage/log.jsonl",
      "--cards",
      "elsewhere/.sdd/agents",
    ], { cwd: dir, env: SECRET });
    strictEqual(named.code, 0, named.stderr);
    strictEqual(named.stdout.trim().split("\n").at(-1), "PASS");
    // Without the cards, nothing binds.
    const noCards = await runBernstein(
      ["lineage", "gate", "--log", "elsewhere/.sdd/lineage/log.jsonl"],
      { cwd: dir, env: SECRET },
    );
    strictEqual(noCards.code, 1);
    ok(noCards.stdout.includes("kid binding cannot be established"));
  });
});

Deno.test("gate: no operator key is exit 3 (a verifier never mints one); --skip-hmac says so", async () => {
  await repoWithTree(async (dir) => {
    const env = { BERNSTEIN_AUDIT_KEY_PATH: join(dir, "no-such.key") };
    const r = await runBernstein(["lineage", "gate"], { cwd: dir, env });
    strictEqual(r.code, 3);
    ok(r.stderr.includes("error[audit.key_missing]"));
    await Deno.stat(join(dir, "no-such.key")).then(() => ok(false, "a key was created"), () => {});
    const skip = await runBernstein(["lineage", "gate", "--skip-hmac"], { cwd: dir, env });
    strictEqual(skip.code, 0, skip.stderr);
    ok(skip.stdout.includes("HMAC NOT checked (--skip-hmac)"));
  });
});

Deno.test("gate: the wrong operator secret fails every HMAC", async () => {
  await repoWithTree(async (dir) => {
    const r = await runBernstein(["lineage", "gate", "--json"], {
      cwd: dir,
      env: { BERNSTEIN_OPERATOR_SECRET: "not the secret" },
    });
    strictEqual(r.code, 1);
    const doc = JSON.parse(r.stdout);
    strictEqual(doc.issues.length, 5);
    ok(doc.issues.every((i: { kind: string }) => i.kind === "HMAC mismatch"));
  });
});

Deno.test("chain, walk and forks: text and --json", async () => {
  await repoWithTree(async (dir) => {
    const chain = await runBernstein(["lineage", "chain", "src/a.ts", "--json"], { cwd: dir });
    strictEqual(chain.code, 0, chain.stderr);
    const doc = JSON.parse(chain.stdout);
    strictEqual(doc.entries.length, 3);
    deepStrictEqual(doc.entries.map((e: { agent_id: string }) => e.agent_id), [
      "claude-1",
      "codex-2",
      "claude-1",
    ]);
    strictEqual(typeof doc.entries[0].ts_ns, "number"); // exact digits, any size
    const text = await runBernstein(["lineage", "chain", "src/a.ts"], { cwd: dir });
    strictEqual(text.stdout.trim().split("\n").length, 3);
    ok(text.stdout.includes("genesis"));
    const walk = await runBernstein(["lineage", "walk", "src/b.ts", "--json"], { cwd: dir });
    const w = JSON.parse(walk.stdout);
    deepStrictEqual(w.entries.map((e: { artefact_path: string }) => e.artefact_path), [
      "src/a.ts",
      "src/a.ts",
      "src/a.ts",
      "src/b.ts",
    ]);
    deepStrictEqual(w.missing, []);
    const forks = await runBernstein(["lineage", "forks"], { cwd: dir });
    strictEqual(forks.stdout.trim(), "no unresolved forks");
    const fj = await runBernstein(["lineage", "forks", "--json"], { cwd: dir });
    deepStrictEqual(JSON.parse(fj.stdout), { ok: true, forks: [], split_heads: [] });
    strictEqual(fj.code, 0);
    const none = await runBernstein(["lineage", "chain", "src/none.ts"], { cwd: dir });
    strictEqual(none.stdout.trim(), "no lineage entries for src/none.ts");
  });
});

Deno.test("bad arguments are usage errors (exit 2)", async () => {
  await repoWithTree(async (dir) => {
    const traversal = await runBernstein(["lineage", "chain", "../x"], { cwd: dir });
    strictEqual(traversal.code, 2);
    ok(traversal.stderr.includes("error[lineage.artefact_invalid]"));
    // Without --policy the default, human, applies: nothing to merge here is no usage error.
    const noPolicy = await runBernstein(["lineage", "merge", "src/a.ts"], {
      cwd: dir,
      env: SECRET,
    });
    strictEqual(noPolicy.code, 1);
    ok(noPolicy.stderr.includes("has no unresolved fork"), noPolicy.stderr);
    const badPolicy = await runBernstein(["lineage", "merge", "src/a.ts", "--policy", "random"], {
      cwd: dir,
      env: SECRET,
    });
    strictEqual(badPolicy.code, 2);
    ok(badPolicy.stderr.includes("first-writer, agent:<id> or human"));
    const workers = await runBernstein(["lineage", "gate", "--workers", "-1"], {
      cwd: dir,
      env: SECRET,
    });
    strictEqual(workers.code, 2);
  });
});

Deno.test("merge: human refuses and explains; first-writer writes a steward merge; reindex", async () => {
  await repoWithTree(async (dir) => {
    // Make a fork: write a second child of a.ts's second version via the store of another
    // host (simulated by rewinding the tips projection before a write).
    const { testStore } = await import("../_helpers/lineage_tree.ts");
    const { store } = testStore(dir, { seed: 7 });
    const chain = await store.chain("src/a.ts");
    const tips = join(store.paths.lineageDir, "tips");
    for (const f of Deno.readDirSync(tips)) {
      const path = join(tips, f.name);
      const text = await Deno.readTextFile(path);
      if (text.includes(chain[2].hash)) {
        await Deno.writeTextFile(path, text.replace(chain[2].hash, chain[1].hash));
      }
    }
    await store.recordWrite("src/a.ts", new TextEncoder().encode("fork"), {
      agent: "gemini-3",
      toolCallId: "t",
      spanId: "s",
    });
    const forks = await runBernstein(["lineage", "forks", "--json"], { cwd: dir });
    strictEqual(forks.code, 1, "an unresolved fork exits 1");
    const f = JSON.parse(forks.stdout);
    strictEqual(f.ok, false);
    strictEqual(f.forks.length, 1);
    const text = await runBernstein(["lineage", "forks"], { cwd: dir });
    strictEqual(text.code, 1);
    ok(text.stdout.includes("src/a.ts: fork detected at"), text.stdout);
    strictEqual(f.forks[0].parent_hash, chain[1].hash);
    const gate = await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET });
    strictEqual(gate.code, 1);
    ok(gate.stdout.includes("unresolved fork"));
    // No --policy: the documented default (human) refuses and explains, like --policy human.
    const human = await runBernstein(["lineage", "merge", "src/a.ts"], {
      cwd: dir,
      env: SECRET,
    });
    strictEqual(human.code, 1);
    ok(human.stderr.includes("never picks a winner"), human.stderr);
    ok(human.stderr.includes("--policy"), human.stderr);
    const merged = await runBernstein(
      ["lineage", "merge", "src/a.ts", "--policy", "first-writer", "--json"],
      { cwd: dir, env: SECRET },
    );
    strictEqual(merged.code, 0, merged.stderr);
    const m = JSON.parse(merged.stdout);
    strictEqual(m.agent_id, "bernstein-steward");
    strictEqual(m.parents.length, 2);
    // The forking write carries the earlier ts_ns (its fake clock starts at 2026-01-01).
    const forkChild = f.forks[0].children.find((h: string) => h !== chain[2].hash);
    strictEqual(m.winner, forkChild);
    const after = await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET });
    strictEqual(after.code, 0, after.stdout);
    const re = await runBernstein(["lineage", "reindex", "--json"], { cwd: dir });
    deepStrictEqual(JSON.parse(re.stdout), { applied: 7, skipped: 0 });
    equal((await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET })).code, 0);
  });
});

Deno.test("rotate-key gives an agent a new kid and per-kid card; old entries keep verifying", async () => {
  await repoWithTree(async (dir) => {
    const r = await runBernstein(["lineage", "rotate-key", "claude-1", "--json"], {
      cwd: dir,
      env: SECRET,
    });
    strictEqual(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    strictEqual(out.agent_id, "claude-1");
    ok(out.previous_kid !== null && out.kid !== out.previous_kid);
    strictEqual(out.card, `.sdd/agents/claude-1/${out.kid}/card.json`);
    const card = JSON.parse(await Deno.readTextFile(join(dir, out.card)));
    strictEqual(card.kid, out.kid);
    // Entries signed with the old key still verify; a new write uses the new kid.
    strictEqual((await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET })).code, 0);
    const { openLineageStore } = await import("../../src/lineage/store/mod.ts");
    const store = openLineageStore({
      sdd: join(dir, ".sdd"),
      operatorKey: new TextEncoder().encode("test-operator-secret"),
    });
    const w = await store.recordWrite("src/new.ts", new TextEncoder().encode("n"), {
      agent: "claude-1",
      toolCallId: "t",
      spanId: "s",
    });
    strictEqual(w.status === "recorded" && w.entry.agent_card_kid, out.kid);
    strictEqual((await runBernstein(["lineage", "gate"], { cwd: dir, env: SECRET })).code, 0);
    const bad = await runBernstein(["lineage", "rotate-key", ".."], { cwd: dir, env: SECRET });
    strictEqual(bad.code, 2, bad.stderr);
  });
});
