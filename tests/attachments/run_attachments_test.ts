import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AttachmentProblemsError, RunAttachments } from "../../src/attachments/mod.ts";
import { AuditLog } from "../../src/audit/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError, Warning } from "../../src/errors/mod.ts";
import type { StampAttachmentsOptions, Task } from "../../src/tasks/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { attachmentProject, claimedTask, firstSpawn as spawn } from "./_fixtures.ts";
import { auditFixture } from "../audit/_helpers.ts";
import { registerScriptedAsMultimodal } from "../../src/adapters/capabilities.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 5, 5]);

async function project(dir: string) {
  const { root, sdd } = await attachmentProject(dir);
  await Deno.writeTextFile(join(root, "notes.txt"), "one\ntwo\n");
  await Deno.writeFile(join(root, "shot.png"), PNG);
  for (let i = 0; i < 25; i++) await Deno.writeTextFile(join(root, `f${i}.txt`), `file ${i}\n`);
  return { root, sdd };
}

function task(id: string, attachments: string[]): Task {
  return claimedTask(id, attachments, 2);
}

// The tests here hand images to the scripted agent: registered as multimodal for this module (a
// test module runs in its own isolate).
registerScriptedAsMultimodal("prompt-text");

function code(c: string) {
  return (e: unknown) => (e as BernsteinError).code === c;
}

Deno.test("the gate counts run-wide and step attachments together and refuses a non-direct spawn path", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const run = await RunAttachments.fromCommandLine(
      Array.from({ length: 15 }, (_, i) => `f${i}.txt`),
      { cwd: root, warn: () => {} },
    );
    const draft = {
      id: "t1",
      title: "t1",
      role: "backend",
      attachments: Array.from({ length: 10 }, (_, i) => `f${i + 15}.txt`),
      metadata: { field: "stages[0].steps[1]" },
    };
    const input = {
      project: { root, sdd },
      config: {},
      drafts: [draft],
      adapters: { t1: "scripted" },
      spawnPath: "direct-subprocess",
    };
    await rejects(run.gate(input), (e: unknown) => {
      strictEqual((e as BernsteinError).code, "attach.invalid");
      strictEqual((e as BernsteinError).location, "stages[0].steps[1].attachments");
      return /would carry 25 attachments; at most 20/.test((e as Error).message);
    });
    draft.attachments = ["f0.txt"];
    await run.gate(input);
    strictEqual(run.rows().length, 16);
    strictEqual(run.rows()[15].reason, "also declared as run.attach[0]; attached once");
    await rejects(run.gate({ ...input, spawnPath: "container" }), code("attach.spawn_path"));
  });
});

Deno.test("the provider stamps the task and reuses a task's attested blocks on a retry, whatever the files became", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const fx = await auditFixture(dir);
    const audit = new AuditLog(join(sdd, "audit"), fx.key);
    const warnings: Warning[] = [];
    const run = await RunAttachments.fromCommandLine(["notes.txt:2"], {
      cwd: root,
      warn: (w) => warnings.push(w),
    });
    const t = task("t1", ["shot.png", ".env"]);
    await Deno.writeTextFile(join(root, ".env"), "TOKEN=x\n");
    await run.gate({
      project: { root, sdd },
      config: {},
      drafts: [{ id: "t1", title: "t1", role: "backend", attachments: t.attachments }],
      adapters: { t1: "scripted" },
      spawnPath: "direct-subprocess",
    });
    const stamps: StampAttachmentsOptions[] = [];
    const provider = await run.provider({
      project: { root, sdd },
      config: {},
      audit,
      auditKey: fx.key,
      store: { stampAttachments: (_id, o) => Promise.resolve(stamps.push(o)) },
      runId: "r1",
      resumed: false,
      adapterOf: () => Promise.resolve("scripted"),
    });
    const first = await provider.forSpawn(t, spawn("t1-a1"));
    ok(first);
    const digests = [sha256Hex(enc("two\n")), sha256Hex(PNG)];
    deepStrictEqual(first.digests, digests);
    deepStrictEqual(stamps, [{ actor: "orchestrator", session: "t1-a1", digests }]);
    // Reported to the operator when the run starts (the gate) and again at the spawn.
    deepStrictEqual(warnings.map((w) => [w.code, w.location]), [
      ["attach.not_attached", "task t1: attachments[1]"],
      ["attach.not_attached", "stages[0].steps[0].attachments[1]"],
    ]);
    const composed = first.compose("body\n");
    deepStrictEqual(composed.media, [], "the scripted agent takes images as prompt text");
    const [blocks, outcomes] = composed.prompt.split("<attachment-outcomes>\n");
    strictEqual(
      outcomes,
      "- notes.txt: attached\n- shot.png: attached\n" +
        "- .env: not_attached (denied by config (attachments.deny: '**/.env'))\n" +
        "</attachment-outcomes>\n\nbody\n",
      "the agent is told what it did not get, and why",
    );
    // The operator changes the image before the retry: the retry still gets the attested bytes.
    await Deno.writeFile(join(root, "shot.png"), new Uint8Array([0xff, 0xd8, 0xff, 0]));
    const again = await provider.forSpawn({ ...t, retry_count: 1 }, spawn("t1-a2"));
    const [blocksAgain, outcomesAgain] = (again?.compose("body\n").prompt ?? "").split(
      "<attachment-outcomes>\n",
    );
    strictEqual(blocksAgain, blocks, "the same blocks, byte for byte");
    strictEqual(
      outcomesAgain,
      "- notes.txt: unchanged (same bytes as spawn t1-a1)\n" +
        "- shot.png: unchanged (same bytes as spawn t1-a1)\n" +
        "- .env: not_attached (denied by config (attachments.deny: '**/.env'))\n" +
        "</attachment-outcomes>\n\nbody\n",
    );
    deepStrictEqual(run.rows().map((r) => [r.path, r.outcome]), [
      ["notes.txt", "unchanged"],
      ["shot.png", "unchanged"],
      [".env", "not_attached"],
    ]);
    // A retry whose ladder moved the task to an adapter without images is refused at spawn.
    await rejects(
      provider.forSpawn(t, spawn("t1-a3", "aider")),
      code("attach.adapter_not_multimodal"),
    );
    await rejects(
      provider.forSpawn(task("t2", []), { ...spawn("t2-a1"), spawnPath: "container" }),
      code("attach.spawn_path"),
    );
    const record = JSON.parse(await Deno.readTextFile(join(sdd, "runs", "r1", "attachments.json")));
    deepStrictEqual(record.spawns.map((s: { session: string }) => s.session), ["t1-a1", "t1-a2"]);
    await audit.close();
  });
});

Deno.test("the gate lists every problem of every task at once, in plan order, as one exit-2 error", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    // A FIFO is neither a file nor a folder (a folder is attached as its listing).
    await new Deno.Command("mkfifo", { args: [join(root, "pipe")] }).output();
    await Deno.writeFile(join(root, "blob.bin"), new Uint8Array([0, 1, 2, 0xff]));
    const run = await RunAttachments.fromCommandLine([], { cwd: root, warn: () => {} });
    const drafts = [
      {
        id: "t1",
        title: "t1",
        role: "backend",
        attachments: ["gone.txt", "pipe", "notes.txt:9-", "blob.bin", "a.ts:0-3"],
        metadata: { field: "stages[0].steps[0]" },
      },
      {
        id: "t2",
        title: "t2",
        role: "backend",
        attachments: ["shot.png"],
        metadata: { field: "stages[0].steps[1]" },
      },
    ];
    const problems = await run.gate({
      project: { root, sdd },
      config: {},
      drafts,
      adapters: { t1: "scripted", t2: "aider" },
      spawnPath: "direct-subprocess",
    }).then(() => undefined, (e) => e as AttachmentProblemsError);
    ok(problems instanceof AttachmentProblemsError, String(problems));
    strictEqual(problems.exitCode, 2);
    strictEqual(problems.code, "attach.invalid", "mixed codes: the generic one");
    deepStrictEqual(problems.problems.map((p) => [p.code, p.location]), [
      ["attach.invalid", "stages[0].steps[0].attachments[0]"],
      ["attach.invalid", "stages[0].steps[0].attachments[1]"],
      ["attach.invalid", "stages[0].steps[0].attachments[2]"],
      ["attach.invalid", "stages[0].steps[0].attachments[3]"],
      ["attach.invalid", "stages[0].steps[0].attachments[4]"],
      ["attach.adapter_not_multimodal", "stages[0].steps[1].attachments[0]"],
    ]);
    const lines = problems.message.split("\n");
    strictEqual(lines[0], "6 attachment problems; nothing was started:");
    strictEqual(
      lines[1],
      "  [attach.invalid] stages[0].steps[0].attachments[0]: gone.txt: no such file",
    );
    strictEqual(
      lines[2],
      "  [attach.invalid] stages[0].steps[0].attachments[1]: pipe: not a regular file or folder",
    );
    ok(lines[3].endsWith("notes.txt has 2 line(s); the range 9- starts past its end"), lines[3]);
    ok(lines[4].includes("blob.bin is neither an image"), lines[4]);
    ok(lines[5].includes("line range 0-3 is not FROM-TO"), lines[5]);
    ok(lines[6].includes("task t2 runs on 'aider', which cannot take images"), lines[6]);
    // One problem alone keeps its own error (code, field, exit code).
    drafts.splice(0, 1);
    await rejects(
      run.gate({
        project: { root, sdd },
        config: {},
        drafts,
        adapters: { t2: "aider" },
        spawnPath: "direct-subprocess",
      }),
      (e: unknown) =>
        (e as BernsteinError).code === "attach.adapter_not_multimodal" &&
        (e as BernsteinError).location === "stages[0].steps[1].attachments[0]",
    );
  });
});

Deno.test("a step file another step it waits for will write is left to the spawn, with a warning", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const warnings: Warning[] = [];
    const run = await RunAttachments.fromCommandLine([], {
      cwd: root,
      warn: (w) => warnings.push(w),
    });
    const producer = {
      id: "p",
      title: "p",
      role: "backend",
      owned_files: ["out/report.md"],
      metadata: { field: "stages[0].steps[0]" },
    };
    const reader = {
      id: "r",
      title: "r",
      role: "backend",
      depends_on: ["p"],
      attachments: ["out/report.md", "./out/other.md"],
      metadata: { field: "stages[1].steps[0]" },
    };
    const input = {
      project: { root, sdd },
      config: {},
      drafts: [producer, reader],
      adapters: { p: "scripted", r: "scripted" },
      spawnPath: "direct-subprocess",
    };
    // other.md is nobody's: refused. report.md comes from p: a warning, checked at spawn.
    await rejects(
      run.gate(input),
      (e: unknown) =>
        (e as BernsteinError).location === "stages[1].steps[0].attachments[1]" &&
        /out\/other\.md: no such file/.test((e as Error).message),
    );
    deepStrictEqual(warnings.map((w) => [w.code, w.location]), [
      ["attach.pending", "stages[1].steps[0].attachments[0]"],
    ]);
    ok(warnings[0].message.includes("step p (which task r waits for) owns it"));
    // Without the dependency the file would race the other step: refused.
    reader.depends_on = [];
    reader.attachments = ["out/report.md"];
    await rejects(run.gate(input), (e: unknown) => /no such file/.test((e as Error).message));
  });
});
