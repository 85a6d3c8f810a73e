// Building a pack from a real `.sdd/`: the window from log.jsonl, sidecars and cards from disk,
// audit cross-links through the authenticated audit log (whose key is read, never created),
// risk globs, and problems that make the pack fail its self-check.
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { JsonObject } from "../../src/canonical/mod.ts";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import { CompliancePackError, MemorySink } from "../../src/compliance/mod.ts";
import {
  buildProjectPack,
  ensureOperatorSigningKey,
  type ProjectPackOptions,
} from "../../src/compliance/project/mod.ts";
import { mapEnv, SeededRandom } from "../../src/io/mod.ts";
import { memoryBytes, type PackVerifyResult, verifyPack } from "../../src/verify/mod.ts";
import { signaturePath } from "../../src/lineage/mod.ts";
import { makeAgentCard, renderAgentCard } from "../../src/lineage/mod.ts";
import { ed25519KeyPairFromSeed } from "../../src/crypto/mod.ts";
import { writeValidTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** Options whose sink keeps the ZIP in memory (`sink.bytes()`). */
async function options(
  dir: string,
  env: Record<string, string>,
): Promise<ProjectPackOptions & { sink: MemorySink }> {
  const sdd = join(dir, ".sdd");
  const key = await ensureOperatorSigningKey(sdd, new SeededRandom(4));
  return {
    sdd,
    org: "Acme Bank",
    since: "2026-01-01",
    until: "2026-01-01",
    builtAt: null,
    builder: "bernstein test",
    compliance: {
      risk_paths: ["src/a.*"],
      remote_biometric_identification: false,
      retention_days: 365,
    },
    signer: key.signer,
    env: mapEnv(env),
    sink: new MemorySink(),
  };
}

function selfCheck(
  r: { bytes: number },
  o: ProjectPackOptions & { sink: MemorySink },
): Promise<PackVerifyResult> {
  const zip = o.sink.bytes();
  strictEqual(zip.length, r.bytes, "the result counts the bytes written");
  return verifyPack(memoryBytes(zip), { operatorPublicKey: o.signer.publicKey });
}

function paragraph(r: { article12: JsonObject }, key: string): JsonObject {
  return r.article12[key] as JsonObject;
}

Deno.test("a project pack holds the day's entries and passes its own verification", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const keyPath = join(dir, "state", "audit.key");
    const o = await options(dir, { BERNSTEIN_AUDIT_KEY_PATH: keyPath });
    const r = await buildProjectPack(o);
    deepStrictEqual((await selfCheck(r, o)).errors, []);
    strictEqual(r.facts.entry_count, 5);
    strictEqual(paragraph(r, "12(2)(a)").risk_entry_count, 3);
    deepStrictEqual(paragraph(r, "12(2)(a)").risk_artefacts, ["src/a.ts"]);
    const links = paragraph(r, "12(2)(b)").audit_cross_links as JsonObject;
    strictEqual(links.checked, false);
    strictEqual(links.reason, "audit key unavailable (audit.key_missing)");
    await rejects(Deno.stat(keyPath), Deno.errors.NotFound, "the pack never creates the audit key");
    ok(r.warnings.some((w) => w.code === "compliance.audit_not_linked"));
  });
});

Deno.test("tool calls are linked to authenticated audit events when the audit key is readable", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const keyPath = join(dir, "state", "audit.key");
    const key = await ensureAuditKey(keyPath, new SeededRandom(8));
    const log = new AuditLog(join(dir, ".sdd", "audit"), key);
    for (const tc of ["tc-a1", "tc-a2", "tc-other"]) {
      await log.append({
        actor: "orchestrator",
        event_type: "tool.call",
        resource_type: "tool",
        resource_id: tc,
        details: { tool_call_id: tc },
      });
    }
    await log.close();
    const o = await options(dir, { BERNSTEIN_AUDIT_KEY_PATH: keyPath });
    const r = await buildProjectPack(o);
    deepStrictEqual(paragraph(r, "12(2)(b)").audit_cross_links, {
      checked: true,
      tool_call_ids: 5,
      linked_tool_call_ids: 2,
      unlinked_tool_call_ids: 3,
      linked_audit_events: 2,
      audit_records_authenticated: 3,
      audit_records_rejected: 0,
    });
    strictEqual((await selfCheck(r, o)).ok, true);
  });
});

Deno.test("a missing sidecar and a missing card are warned about and fail the self-check", async () => {
  await withTempDir(async (dir) => {
    const store = await writeValidTree(dir);
    const [first] = await store.chain("src/b.ts");
    await Deno.remove(join(dir, ".sdd", "lineage", signaturePath("src/b.ts", first.hash)));
    const o = await options(dir, {});
    const r = await buildProjectPack(o);
    ok(r.warnings.some((w) => w.code === "compliance.signature_missing"));
    const check = await selfCheck(r, o);
    strictEqual(check.ok, false);
    ok(check.errors.some((e) => e.kind === "invalid signature"));
  });
});

Deno.test("a sidecar that is a symlink or far too large is not packed, named, and fails the self-check", async () => {
  await withTempDir(async (dir) => {
    const store = await writeValidTree(dir);
    const lineage = join(dir, ".sdd", "lineage");
    const [a] = await store.chain("src/a.ts");
    const [b] = await store.chain("src/b.ts");
    // A hostile agent points a sidecar at a file elsewhere (here: its own valid signature,
    // moved away): the builder must not follow it, even though the bytes would verify.
    const linked = join(lineage, signaturePath("src/a.ts", a.hash));
    const moved = join(dir, "elsewhere.jws");
    await Deno.rename(linked, moved);
    await Deno.symlink(moved, linked);
    const big = join(lineage, signaturePath("src/b.ts", b.hash));
    await Deno.writeFile(big, new Uint8Array(64 * 1024).fill(0x41));
    const o = await options(dir, {});
    const r = await buildProjectPack(o);
    const missing = r.warnings.filter((w) => w.code === "compliance.signature_missing");
    deepStrictEqual(missing.map((w) => w.message), [
      `${linked}: signature of ${a.hash} is a symlink (refused); the pack will fail verification`,
      `${big}: signature of ${b.hash} is more than 4096 bytes; the pack will fail verification`,
    ]);
    const check = await selfCheck(r, o);
    strictEqual(check.ok, false);
    strictEqual(check.errors.filter((e) => e.kind === "invalid signature").length, 2);
    strictEqual(check.stats.signatures, r.facts.entry_count - 2, "neither is packed");
  });
});

Deno.test("conflicting cards for a signer stop the build with the locations", async () => {
  await withTempDir(async (dir) => {
    const store = await writeValidTree(dir);
    const [e] = await store.chain("src/a.ts");
    const rogue = ed25519KeyPairFromSeed(new Uint8Array(32).fill(7)).publicKey;
    const path = join(dir, ".sdd", "agents", "rogue");
    await Deno.mkdir(path);
    await Deno.writeFile(
      join(path, "card.json"),
      renderAgentCard(
        makeAgentCard(e.entry.agent_id, { kid: e.entry.agent_card_kid, publicKey: rogue }),
      ),
    );
    await rejects(
      buildProjectPack(await options(dir, {})),
      (err: unknown) =>
        err instanceof CompliancePackError && err.code === "compliance.conflicting_cards" &&
        err.message.includes("rogue/card.json"),
    );
  });
});

Deno.test("a window with nothing in it builds an empty pack that verifies", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const o = await options(dir, {});
    const r = await buildProjectPack({ ...o, since: "2025-01-01", until: "2025-12-31" });
    strictEqual(r.facts.entry_count, 0);
    deepStrictEqual((await selfCheck(r, o)).errors, []);
  });
});

Deno.test("every pack checkpoints both logs and carries the lineage checkpoint it was built on", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const keyPath = join(dir, "state", "audit.key");
    const auditKey = await ensureAuditKey(keyPath, new SeededRandom(2));
    const log = new AuditLog(join(dir, ".sdd", "audit"), auditKey);
    await log.append({ actor: "t", event_type: "probe", resource_type: "task", resource_id: "x" });
    await log.close();
    const o = await options(dir, { BERNSTEIN_AUDIT_KEY_PATH: keyPath });
    const r = await buildProjectPack(o);
    const verdict = await selfCheck(r, o);
    deepStrictEqual(verdict.errors, []);
    strictEqual(verdict.stats.checkpoint?.size, 5);
    const lineage = (await Deno.readTextFile(join(dir, ".sdd/lineage/checkpoints.jsonl"))).trim();
    strictEqual(JSON.parse(lineage).root, verdict.stats.checkpoint?.root);
    const audit = (await Deno.readTextFile(join(dir, ".sdd/audit/checkpoints.jsonl"))).trim();
    strictEqual(JSON.parse(audit).size, 1);
    // Entries appended after the checkpoint wait for the next pack; a log whose committed lines
    // changed cannot be packed at all.
    const logPath = join(dir, ".sdd/lineage/log.jsonl");
    const lines = (await Deno.readTextFile(logPath)).split("\n");
    await Deno.writeTextFile(logPath, [lines[1], lines[0], ...lines.slice(2)].join("\n"));
    await Deno.remove(join(dir, ".sdd/lineage/checkpoint-state.json"));
    await rejects(buildProjectPack(o), (e: Error) => {
      ok(e instanceof CompliancePackError);
      ok(e.message.includes("cannot be checkpointed"), e.message);
      return true;
    });
  });
});
