// Attachments held by value at the gate and at spawn: a text is screened as text (whatever its
// first bytes look like), cut at whole lines past 100 000 rendered characters (partial); an
// image goes whole, against the task's adapter; both are attested like files, labelled by name.
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { RunAttachments } from "../../src/attachments/mod.ts";
import { AuditLog } from "../../src/audit/mod.ts";
import { toBase64 } from "../../src/canonical/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import type { AttachmentDeclaration } from "../../src/plan/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import {
  attachmentProject as project,
  claimedTask as task,
  firstSpawn as spawn,
} from "./_fixtures.ts";
import { auditFixture } from "../audit/_helpers.ts";
import { registerScriptedAsMultimodal } from "../../src/adapters/capabilities.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7, 7]);
// The tests here hand images to the scripted agent: registered as multimodal for this module (a
// test module runs in its own isolate).
registerScriptedAsMultimodal("prompt-text");

// Starts like a GIF and like a PDF: still text, because it was handed over as text.
const LOOKALIKE = "GIF89a is not an image here\n%PDF- nor a document\n";
// 3 000 lines of 40 characters: the line-numbered rendering is well over 100 000 characters.
const LONG = Array.from({ length: 3000 }, (_, i) => `line ${String(i).padStart(34, "0")}\n`).join(
  "",
);

Deno.test("held attachments: gate rows, attested blocks labelled by name, a long text partial", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const fx = await auditFixture(dir);
    const audit = new AuditLog(join(sdd, "audit"), fx.key);
    const attachments: AttachmentDeclaration[] = [
      { name: "lookalike.txt", text: LOOKALIKE },
      { name: "screen.png", image: { mime: "image/png", base64: toBase64(PNG) } },
      { name: "long.log", text: LONG },
    ];
    const run = await RunAttachments.fromCommandLine([], { cwd: root, warn: () => {} });
    await run.gate({
      project: { root, sdd },
      config: {},
      drafts: [{
        id: "t1",
        title: "t1",
        role: "backend",
        attachments,
        metadata: { field: "stages[0].steps[0]" },
      }],
      adapters: { t1: "scripted" },
      spawnPath: "direct-subprocess",
    });
    deepStrictEqual(run.rows().map((r) => [r.field, r.path, r.kind, r.mime, r.outcome]), [
      ["stages[0].steps[0].attachments[0]", "lookalike.txt", "text", "text/plain", "attached"],
      ["stages[0].steps[0].attachments[1]", "screen.png", "image", "image/png", "attached"],
      ["stages[0].steps[0].attachments[2]", "long.log", "text", "text/plain", "partial"],
    ]);
    ok(
      /^rendered text is over 100000 characters; attached lines 1-\d+ of 1-3000$/.test(
        run.rows()[2].reason ?? "",
      ),
    );

    const provider = await run.provider({
      project: { root, sdd },
      config: {},
      audit,
      auditKey: fx.key,
      store: { stampAttachments: () => Promise.resolve() },
      runId: "r1",
      resumed: false,
      adapterOf: () => Promise.resolve("scripted"),
    });
    const got = await provider.forSpawn(task("t1", attachments), spawn("t1-a1"));
    ok(got);
    strictEqual(got.digests[0], sha256Hex(enc(LOOKALIKE)));
    strictEqual(got.digests[1], sha256Hex(PNG));
    const prompt = got.compose("body\n").prompt;
    ok(
      prompt.startsWith(
        `<attachment mime="text/plain" sha256="${
          sha256Hex(enc(LOOKALIKE))
        }" path="lookalike.txt">\n` +
          "1 | GIF89a is not an image here\n2 | %PDF- nor a document\n</attachment>\n\n" +
          `<attachment mime="image/png" sha256="${sha256Hex(PNG)}">\n${
            toBase64(PNG)
          }\n</attachment>\n`,
      ),
      prompt.slice(0, 600),
    );
    ok(prompt.includes('path="long.log" lines="1-'));
    ok(
      /<attachment-outcomes>\n- lookalike\.txt: attached\n- screen\.png: attached\n- long\.log: partial \(rendered text is over 100000 characters; attached lines 1-\d+ of 1-3000\)\n<\/attachment-outcomes>\n\nbody\n$/
        .test(prompt),
    );
    await audit.close();
    const events = (await Deno.readTextFile(join(sdd, "audit", await firstLog(sdd))))
      .split("\n").filter((l) => l.includes('"multimodal.attach"')).map((l) =>
        JSON.parse(l).details
      );
    deepStrictEqual(events.map((e) => [e.sha256, e.path ?? null]), [
      [sha256Hex(enc(LOOKALIKE)), "lookalike.txt"],
      [sha256Hex(PNG), null],
      [got.digests[2], "long.log"],
    ]);
  });
});

async function firstLog(sdd: string): Promise<string> {
  for await (const e of Deno.readDir(join(sdd, "audit"))) {
    if (e.name.endsWith(".jsonl")) return e.name;
  }
  throw new Error("no audit log");
}

Deno.test("held attachments: an image for an adapter without images refuses the run at the gate", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const attachments: AttachmentDeclaration[] = [
      { name: "screen.png", image: { mime: "image/png", base64: toBase64(PNG) } },
    ];
    const run = await RunAttachments.fromCommandLine([], { cwd: root, warn: () => {} });
    await rejects(
      run.gate({
        project: { root, sdd },
        config: {},
        drafts: [{
          id: "t1",
          title: "t1",
          role: "backend",
          attachments,
          metadata: { field: "stages[0].steps[0]" },
        }],
        adapters: { t1: "aider" },
        spawnPath: "direct-subprocess",
      }),
      (e: unknown) =>
        (e as BernsteinError).code === "attach.adapter_not_multimodal" &&
        (e as BernsteinError).location === "stages[0].steps[0].attachments[0]",
    );
  });
});

Deno.test("held attachments: a stored task whose value breaks the rules is refused at spawn, at its field", async () => {
  await withTempDir(async (dir) => {
    const { root, sdd } = await project(dir);
    const fx = await auditFixture(dir);
    const audit = new AuditLog(join(sdd, "audit"), fx.key);
    const run = await RunAttachments.fromCommandLine([], { cwd: root, warn: () => {} });
    const provider = await run.provider({
      project: { root, sdd },
      config: {},
      audit,
      auditKey: fx.key,
      store: { stampAttachments: () => Promise.resolve() },
      runId: "r1",
      resumed: false,
      adapterOf: () => Promise.resolve("scripted"),
    });
    // A task log line written by hand (or by an older version): the store's schema takes it.
    const bad = task("t1", [{ name: "../x", text: "hi" }, {
      name: "a.png",
      image: { mime: "image/png", base64: "!!" },
    }]);
    await rejects(provider.forSpawn(bad, spawn("t1-a1")), (e: unknown) => {
      const err = e as BernsteinError & { problems?: BernsteinError[] };
      strictEqual(err.code, "attach.invalid");
      deepStrictEqual(err.problems?.map((p) => p.location), [
        "stages[0].steps[0].attachments[0].name",
        "stages[0].steps[0].attachments[1].image.base64",
      ]);
      deepStrictEqual(err.aliases, ["config.user_attachment_invalid"]);
      return true;
    });
    await audit.close();
  });
});
