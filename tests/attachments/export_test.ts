// A run's attachments exported for an auditor and checked offline: the export holds the
// authenticated attach events, the CAS bytes, each spawn's blocks and the lineage entries that
// carry the digests; `bernstein-verify attachments` passes it, and fails a byte changed, an
// event dropped, a MIME type altered or a lineage digest nothing backs — naming each.
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  attestAttachment,
  exportRunAttachments,
  installIdSig,
  worktreeIdOf,
} from "../../src/attachments/mod.ts";
import { AuditLog } from "../../src/audit/mod.ts";
import { CasStore } from "../../src/cas/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { verifyAttachmentsDir } from "../../src/verify/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture } from "../audit/_helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7, 7]);
const TEXT = enc("a\nb\n");
const png = sha256Hex(PNG);
const txt = sha256Hex(TEXT);

/** A run r1 whose one spawn t1-a1 got an image and a text file; a lineage entry names both. */
async function runWithAttachments(sdd: string) {
  const fx = await auditFixture(sdd);
  const cas = new CasStore(join(sdd, "cas"), {
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
    random: new SeededRandom(3),
  });
  const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
  const worktree = join(sdd, "worktrees", "t1-a1");
  const target = {
    cas,
    audit: log,
    installIdSig: installIdSig("0123456789abcdef"),
    workerId: "t1-a1",
    turnSeq: 0,
    worktreeId: worktreeIdOf(worktree),
  };
  await attestAttachment({ mime: "image/png", sha256: png, bytes: PNG }, target, {
    channel: "content-block",
  });
  await attestAttachment({ mime: "text/plain", sha256: txt, bytes: TEXT, path: "a.txt" }, target);
  await log.close();
  await Deno.mkdir(join(sdd, "runs", "r1"), { recursive: true });
  await Deno.writeTextFile(
    join(sdd, "runs", "r1", "attachments.json"),
    JSON.stringify({
      v: 1,
      run_id: "r1",
      run_wide: [],
      spawns: [{
        task_id: "t1",
        session: "t1-a1",
        worktree,
        worktree_id: worktreeIdOf(worktree),
        turn_seq: 0,
        blocks: [png, txt],
      }],
      rows: [],
    }),
  );
  await Deno.mkdir(join(sdd, "lineage"), { recursive: true });
  await Deno.writeTextFile(
    join(sdd, "lineage", "log.jsonl"),
    JSON.stringify({ artifact: "a.txt", attachment_digests: [png, txt] }) + "\n" +
      JSON.stringify({ artifact: "b.txt" }) + "\n",
  );
  return { key: fx.key, cas };
}

Deno.test("an export holds events, bytes, spawns and lineage; the offline check passes it", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, "sdd");
    const { key, cas } = await runWithAttachments(sdd);
    const out = join(dir, "export");
    const summary = await exportRunAttachments({ sdd, runId: "r1", auditKey: key, cas, out });
    deepStrictEqual(summary, { items: 2, events: 2, spawns: 1, lineage_entries: 1 });
    deepStrictEqual(await Deno.readFile(join(out, "bytes", png)), PNG);
    const manifest = JSON.parse(await Deno.readTextFile(join(out, "manifest.json")));
    strictEqual(manifest.kind, "bernstein_attachments_export");
    deepStrictEqual(manifest.spawns[0].blocks, [png, txt]);
    const events = (await Deno.readTextFile(join(out, "events.jsonl"))).trim().split("\n")
      .map((l) => JSON.parse(l));
    deepStrictEqual(events.map((e) => [e.details.sha256, e.details.worker_id]), [
      [png, "t1-a1"],
      [txt, "t1-a1"],
    ]);
    strictEqual(events[0].details.delivery, "content-block");
    ok(/^[0-9a-f]{64}$/.test(events[0].hmac), "the records keep their HMACs");
    const verdict = verifyAttachmentsDir(out);
    deepStrictEqual([verdict.ok, verdict.errors], [true, []]);
    deepStrictEqual(verdict.stats, { run_id: "r1", items: 2, events: 2, spawns: 1, lineage: 1 });
    // The folder must be new or empty; a run without a record has nothing to export.
    await rejects(
      exportRunAttachments({ sdd, runId: "r1", auditKey: key, cas, out }),
      (e: unknown) => (e as BernsteinError).code === "attach.export_not_empty",
    );
    await rejects(
      exportRunAttachments({ sdd, runId: "r2", auditKey: key, cas, out: join(dir, "x") }),
      (e: unknown) => (e as BernsteinError).code === "attach.export_no_record",
    );
  });
});

Deno.test("the offline check names a changed byte, a dropped event, an altered MIME type and an unbacked lineage digest", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, "sdd");
    const { key, cas } = await runWithAttachments(sdd);
    const out = join(dir, "export");
    await exportRunAttachments({ sdd, runId: "r1", auditKey: key, cas, out });
    const bytesPath = join(out, "bytes", png);
    const eventsPath = join(out, "events.jsonl");
    const lineagePath = join(out, "lineage.jsonl");
    const original = {
      bytes: await Deno.readFile(bytesPath),
      events: await Deno.readTextFile(eventsPath),
      lineage: await Deno.readTextFile(lineagePath),
    };
    const restore = async () => {
      await Deno.writeFile(bytesPath, original.bytes);
      await Deno.writeTextFile(eventsPath, original.events);
      await Deno.writeTextFile(lineagePath, original.lineage);
    };
    const kinds = () => verifyAttachmentsDir(out).errors.map((e) => [e.kind, e.message]);
    // A byte changed.
    const changed = original.bytes.slice();
    changed[9] ^= 1;
    await Deno.writeFile(bytesPath, changed);
    deepStrictEqual(kinds(), [[
      "digest mismatch",
      `bytes/${png}: the bytes hash to ${sha256Hex(changed)}, not to their digest`,
    ]]);
    await restore();
    // The image's event dropped: the spawn's block is no longer attested.
    await Deno.writeTextFile(eventsPath, original.events.split("\n").slice(1).join("\n"));
    deepStrictEqual(kinds().map(([k]) => k), ["not attested", "lineage digest unbacked"]);
    await restore();
    // The MIME type altered in an event.
    await Deno.writeTextFile(eventsPath, original.events.replace("image/png", "image/gif"));
    deepStrictEqual(kinds().map(([k]) => k), ["mime mismatch"]);
    await restore();
    // A lineage entry names a digest the export does not back.
    const ghost = "f".repeat(64);
    await Deno.writeTextFile(lineagePath, JSON.stringify({ attachment_digests: [ghost] }) + "\n");
    deepStrictEqual(kinds(), [[
      "lineage digest unbacked",
      `lineage.jsonl:1: attachment digest ${ghost} has no exported, attested bytes`,
    ]]);
    await restore();
    // No manifest at all.
    await Deno.remove(join(out, "manifest.json"));
    strictEqual(verifyAttachmentsDir(out).ok, false);
  });
});
