// A compliance pack that carries attachment exports (`compliance pack --with-attachments`):
// the verifier checks each run's export as `bernstein-verify attachments` checks a folder, and
// names the member. The pack's own seal is honest in every case here: what fails is the
// export inside it (bytes that are not their digest, an event without bytes, stray members).
import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { canonicalize } from "../../src/canonical/mod.ts";
import { buildPack } from "../../src/compliance/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import {
  attachmentMemberName,
  attachmentMemberParts,
  packMemberKind,
} from "../../src/pack_format/mod.ts";
import { memoryBytes, verifyPack } from "../../src/verify/mod.ts";
import { sampleLog, samplePackContent } from "../../scripts/sample_pack.ts";

const sample = sampleLog({ seed: 5 });
const content = samplePackContent(sample);
const enc = (s: string) => new TextEncoder().encode(s);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 3, 1]);
const SHA = sha256Hex(PNG);

/** A run's export (FORMATS.md §7.1): one image attested to one spawn. */
function exportFiles(runId: string, bytes = PNG): Map<string, Uint8Array> {
  const event = {
    actor: "orchestrator",
    details: { sha256: SHA, mime: "image/png", worker_id: "t1-a1" },
    event_type: "multimodal.attach",
    resource_type: "agent",
    resource_id: "t1-a1",
    timestamp: "2026-03-02T10:00:00.000000Z",
    prev_hmac: "0".repeat(64),
    hmac: "1".repeat(64),
  };
  const manifest = {
    kind: "bernstein_attachments_export",
    version: 1,
    run_id: runId,
    event_type: "multimodal.attach",
    items: [{ sha256: SHA, mime: "image/png", size: bytes.length, file: `bytes/${SHA}` }],
    spawns: [{ task_id: "t1", session: "t1-a1", worktree_id: "ab", turn_seq: 0, blocks: [SHA] }],
    rows: [],
    events: "events.jsonl",
    lineage: "lineage.jsonl",
  };
  return new Map([
    ["manifest.json", enc(canonicalize(manifest, "canon") + "\n")],
    ["events.jsonl", enc(canonicalize(event, "canon") + "\n")],
    ["lineage.jsonl", enc("")],
    [`bytes/${SHA}`, bytes],
  ]);
}

function members(runId: string, files: Map<string, Uint8Array>): Map<string, Uint8Array> {
  return new Map([...files].map(([f, b]) => [attachmentMemberName(runId, f), b]));
}

async function verdict(attachments: Map<string, Uint8Array>) {
  const built = buildPack({ ...content, attachments }, sample.operator);
  return await verifyPack(memoryBytes(built.zip));
}

Deno.test("attachment member names: attachments/<run>/ manifest, events, lineage and bytes only", () => {
  strictEqual(
    attachmentMemberName("brave-otter-3fa9c2", "manifest.json"),
    "attachments/brave-otter-3fa9c2/manifest.json",
  );
  strictEqual(packMemberKind(`attachments/r1/bytes/${SHA}`), "attachment");
  deepStrictEqual(attachmentMemberParts(`attachments/r1/bytes/${SHA}`), {
    run: "r1",
    file: `bytes/${SHA}`,
  });
  for (
    const name of [
      "attachments/r1/other.txt",
      "attachments/../x/manifest.json",
      "attachments/r1/bytes/abc",
      "attachments/manifest.json",
    ]
  ) {
    strictEqual(packMemberKind(name), undefined, name);
  }
});

Deno.test("a pack carrying an honest export passes with a note; one without is unchanged", async () => {
  const r = await verdict(members("run-1", exportFiles("run-1")));
  deepStrictEqual(r.errors, []);
  ok(r.notes.some((n) => n.startsWith("attachments: 1 run export(s) checked")), r.notes.join("\n"));
  // The cover page names the runs it carries (only a pack with attachments has the row).
  const readme = new TextDecoder().decode(
    buildPack({ ...content, attachments: members("run-1", exportFiles("run-1")) }, sample.operator)
      .members.get("README.md"),
  );
  ok(
    readme.includes("| `attachments/<run>/` | what each agent was shown, per run (run-1)"),
    readme,
  );
  const plain = buildPack(content, sample.operator);
  const same = buildPack({ ...content, attachments: new Map() }, sample.operator);
  deepStrictEqual(same.zip, plain.zip, "no attachments, the same bytes as before");
});

Deno.test("an export inside a pack that does not hold up is named member by member", async () => {
  // The bytes are not what the export's manifest and events say (sealed over honestly).
  const changed = exportFiles("run-1", PNG.slice(1));
  const r = await verdict(members("run-1", changed));
  deepStrictEqual(r.errors.map((e) => e.kind), ["digest mismatch"]);
  ok(r.errors[0].message.startsWith(`attachments/run-1/bytes/${SHA}: `), r.errors[0].message);
  // Bytes the export does not list; a manifest naming another run.
  const stray = members("run-1", exportFiles("run-1"));
  stray.set(attachmentMemberName("run-1", `bytes/${"e".repeat(64)}`), enc("extra"));
  const other = members("run-2", exportFiles("run-9"));
  const r2 = await verdict(new Map([...stray, ...other]));
  deepStrictEqual(r2.errors.map((e) => [e.kind, e.message]), [
    [
      "unexpected member",
      `attachments/run-1/bytes/${"e".repeat(64)}: unexpected member (not in its export's manifest)`,
    ],
    ["malformed manifest", 'attachments/run-2/manifest.json: run_id "run-9" is not run-2'],
  ]);
  // An event with no bytes behind it.
  const gone = exportFiles("run-1");
  gone.delete(`bytes/${SHA}`);
  const r3 = await verdict(members("run-1", gone));
  ok(
    r3.errors.some((e) => e.kind === "missing bytes" && e.message.startsWith("attachments/run-1/")),
  );
});

Deno.test("the builder refuses a member outside attachments/<run>/", () => {
  throws(
    () =>
      buildPack(
        { ...content, attachments: new Map([["attachments/r1/notes.txt", enc("x")]]) },
        sample.operator,
      ),
    (e: unknown) => (e as BernsteinError).code === "compliance.bad_member",
  );
});
