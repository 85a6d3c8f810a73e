import { deepStrictEqual, rejects, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  ATTACH_EVENT,
  AttachmentChainUnverified,
  AttachmentNotAttested,
  AttachmentResolver,
  attestAttachment,
  installIdSig,
  WorktreeAccessDenied,
  worktreeIdOf,
} from "../../src/attachments/mod.ts";
import { AuditLog, scanAuditLog, verifyAuditLog } from "../../src/audit/mod.ts";
import { CasStore } from "../../src/cas/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture, onlySegment } from "../audit/_helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 9, 9, 9]);
const TEXT = enc("two\nthree\n");
const INSTALL = "0123456789abcdef";

async function setup(root: string) {
  const fx = await auditFixture(root);
  const cas = new CasStore(join(root, "cas"), {
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
    random: new SeededRandom(3),
  });
  const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
  const wtA = join(root, ".sdd", "worktrees", "t1-a1");
  const wtB = join(root, ".sdd", "worktrees", "t2-a1");
  const target = (worker: string, worktree: string) => ({
    cas,
    audit: log,
    installIdSig: installIdSig(INSTALL),
    workerId: worker,
    turnSeq: 0,
    worktreeId: worktreeIdOf(worktree),
  });
  await log.append({
    actor: "t",
    event_type: "run.started",
    resource_type: "run",
    resource_id: "r",
  });
  await attestAttachment(
    { mime: "image/png", sha256: sha256Hex(PNG), bytes: PNG },
    target("t1-a1", wtA),
  );
  await attestAttachment(
    { mime: "text/plain", sha256: sha256Hex(TEXT), bytes: TEXT, path: "src/app.ts", firstLine: 2 },
    target("t1-a1", wtA),
  );
  await log.close();
  const resolver = new AttachmentResolver({ auditDir: fx.dir, auditKey: fx.key, cas });
  return { fx, cas, wtA, wtB, resolver };
}

Deno.test("an attestation stores the bytes once in CAS and appends the §2 event with its chain claim", async () => {
  await withTempDir(async (root) => {
    const { fx, cas } = await setup(root);
    deepStrictEqual(await cas.read(sha256Hex(PNG)), PNG);
    strictEqual((await cas.readMeta(sha256Hex(PNG))).content_type, "image/png");
    const scanned = await scanAuditLog(fx.dir, fx.key, { eventTypes: [ATTACH_EVENT] });
    strictEqual(scanned.records.length, 2);
    const [image, text] = scanned.records.map((r) => r.record);
    deepStrictEqual(image.details, {
      sha256: sha256Hex(PNG),
      mime: "image/png",
      operator_install_id_sig: sha256Hex(enc(INSTALL)),
      worker_id: "t1-a1",
      turn_seq: 0,
      worktree_id: sha256Hex(enc(join(root, ".sdd", "worktrees", "t1-a1"))).slice(0, 16),
      prev_chain_digest: image.prev_hmac,
    });
    strictEqual(image.resource_type, "agent");
    strictEqual(image.resource_id, "t1-a1");
    strictEqual(text.details.path, "src/app.ts");
    strictEqual(text.details.first_line, 2);
    strictEqual(text.details.prev_chain_digest, image.hmac);
    strictEqual((await verifyAuditLog(fx.dir, fx.key)).ok, true);
  });
});

Deno.test("the install id signature needs the 16-hex id init writes", () => {
  strictEqual(installIdSig(INSTALL), sha256Hex(enc(INSTALL)));
  throws(() => installIdSig("0123456789abcdef\n"), /16 lowercase hex/);
  throws(() => installIdSig("xyz"), /16 lowercase hex/);
});

Deno.test("the resolver hands the bytes to the worktree they were attested to, and only to it", async () => {
  await withTempDir(async (root) => {
    const { resolver, wtA, wtB } = await setup(root);
    const got = await resolver.resolve(sha256Hex(PNG), { worktreePath: wtA });
    deepStrictEqual(got.bytes, PNG);
    strictEqual(got.event.worker_id, "t1-a1");
    await rejects(resolver.resolve(sha256Hex(PNG), { worktreePath: wtB }), (e: unknown) => {
      strictEqual(e instanceof WorktreeAccessDenied, true);
      strictEqual((e as WorktreeAccessDenied).code, "attach.worktree_access_denied");
      return (e as Error).message.includes(worktreeIdOf(wtA));
    });
    await rejects(
      resolver.resolve(sha256Hex(enc("never attached")), { worktreePath: wtA }),
      AttachmentNotAttested,
    );
  });
});

Deno.test("a worker's turn comes back in prompt order with its labels, pinned to its worktree", async () => {
  await withTempDir(async (root) => {
    const { resolver, wtA, wtB } = await setup(root);
    const blocks = await resolver.spawnAttachments("t1-a1", {
      worktreePath: wtA,
      expected: [sha256Hex(PNG), sha256Hex(TEXT)],
    });
    deepStrictEqual(blocks.map((b) => [b.mime, b.path, b.firstLine]), [
      ["image/png", undefined, undefined],
      ["text/plain", "src/app.ts", 2],
    ]);
    deepStrictEqual(blocks[1].bytes, TEXT);
    await rejects(resolver.spawnAttachments("t1-a1", { worktreePath: wtB }), WorktreeAccessDenied);
    await rejects(
      resolver.spawnAttachments("t1-a1", {
        worktreePath: wtA,
        expected: [sha256Hex(TEXT), sha256Hex(PNG)],
      }),
      AttachmentNotAttested,
      "a record naming other blocks than the chain is refused",
    );
    await rejects(resolver.spawnAttachments("t9-a1", { worktreePath: wtA }), AttachmentNotAttested);
  });
});

Deno.test("a tampered chain makes every resolution fail with AttachmentChainUnverified", async () => {
  await withTempDir(async (root) => {
    const { fx, resolver, wtA } = await setup(root);
    const segment = await onlySegment(fx);
    const text = await Deno.readTextFile(segment);
    // Re-point the image's attestation at another worktree: its HMAC no longer matches.
    const forged = text.replace(worktreeIdOf(wtA), "0".repeat(16));
    strictEqual(forged !== text, true);
    await Deno.writeTextFile(segment, forged);
    await rejects(resolver.resolve(sha256Hex(PNG), { worktreePath: wtA }), (e: unknown) => {
      strictEqual(e instanceof AttachmentChainUnverified, true);
      strictEqual((e as AttachmentChainUnverified).code, "attach.chain_unverified");
      strictEqual((e as AttachmentChainUnverified).hint, "'bernstein audit verify' shows why");
      return /HMAC mismatch/.test((e as Error).message);
    });
    await rejects(
      resolver.spawnAttachments("t1-a1", { worktreePath: wtA }),
      AttachmentChainUnverified,
      "the verdict sticks for later calls",
    );
  });
});

Deno.test("bytes changed in CAS behind the resolver are an integrity error, never returned", async () => {
  await withTempDir(async (root) => {
    const { cas, resolver, wtA } = await setup(root);
    const path = cas.blobPath(sha256Hex(PNG));
    await Deno.chmod(path, 0o644);
    await Deno.writeFile(path, enc("swapped"));
    await rejects(
      resolver.resolve(sha256Hex(PNG), { worktreePath: wtA }),
      (e: unknown) => (e as BernsteinError).code === "cas.integrity",
    );
  });
});
