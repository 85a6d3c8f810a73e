// Kinds beyond text and images: a PDF goes whole to the CLIs with a document channel (claude's
// `document` block, gemini's `@path` inline data) and is refused for the others naming those
// that take it; a Jupyter notebook is attached as its cells' text; a folder as its listing.
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import { CAPABILITY_TABLE, getAdapter } from "../../src/adapters/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import {
  adaptersTakingDocument,
  checkAdapterTakesMedia,
  composeForChannel,
  listFolder,
  MAX_LISTING_ENTRIES,
  renderNotebook,
  RunAttachments,
  screenAttachment,
  sniffBytes,
} from "../../src/attachments/mod.ts";
import { toBase64 } from "../../src/canonical/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import { makePdf } from "../_helpers/pdf.ts";
import { withTempDir } from "../_helpers/temp.ts";

const MB = 1024 * 1024;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined) => new TextDecoder().decode(b);
const to = { field: "stages[0].steps[0].attachments[0]", path: "spec.pdf", taskId: "t1" };
const opts = { field: to.field, shownPath: "spec.pdf" };

function fails(code: string, pattern: RegExp) {
  return (e: unknown) => {
    strictEqual((e as BernsteinError).code, code);
    strictEqual((e as BernsteinError).location, to.field);
    strictEqual(pattern.test((e as Error).message), true, (e as Error).message);
    return true;
  };
}

Deno.test("a PDF is sniffed by its bytes and attached whole; a line range on it is refused", () => {
  const pdf = makePdf("totals round half to even");
  deepStrictEqual(sniffBytes(pdf), { kind: "document", mime: "application/pdf" });
  // Not by the extension: a text file named .pdf is text, a PDF named .txt is a PDF.
  deepStrictEqual(sniffBytes(enc("%PD not quite")).kind, "text");
  const s = screenAttachment(pdf, { path: "spec.pdf" }, opts);
  deepStrictEqual(
    [s.kind, s.mime, s.outcome, s.sha256, s.bytes],
    ["document", "application/pdf", "attached", sha256Hex(pdf), pdf],
  );
  throws(
    () => screenAttachment(pdf, { path: "spec.pdf", fromLine: 1, toLine: 2 }, opts),
    fails("attach.invalid", /spec\.pdf is a document \(application\/pdf\); a line range/),
  );
});

Deno.test("PDFs go to claude and gemini; any other adapter is refused naming them", () => {
  const facts = { mime: "application/pdf", size: 1000 };
  strictEqual(
    adaptersTakingDocument(facts),
    "claude (pdf up to 24 MB), gemini (pdf up to 14 MB)",
  );
  for (const adapter of ["claude", "gemini"]) checkAdapterTakesMedia(facts, { ...to, adapter });
  for (const adapter of ["codex", "qwen", "opencode", "aider"]) {
    throws(
      () => checkAdapterTakesMedia(facts, { ...to, adapter }),
      fails(
        "attach.adapter_not_multimodal",
        new RegExp(
          `spec\\.pdf is a document \\(application/pdf\\) but task t1 runs on '${adapter}', ` +
            "which cannot take documents; adapters that can: claude \\(pdf up to 24 MB\\), gemini",
        ),
      ),
    );
  }
  throws(
    () => checkAdapterTakesMedia({ ...facts, size: 15 * MB }, { ...to, adapter: "gemini" }),
    fails("attach.invalid", /^file is 15 MB, the limit for a document on gemini is 14 MB/),
  );
  // Images still go through the image rules.
  throws(
    () => checkAdapterTakesMedia({ mime: "image/gif", size: 10 }, { ...to, adapter: "gemini" }),
    fails("attach.invalid", /image\/gif, which gemini does not accept/),
  );
  strictEqual(CAPABILITY_TABLE.aider.document_types.length, 0);
});

Deno.test("claude gets a PDF as a document block; gemini as an @path copy", () => {
  const pdf = makePdf("x");
  const wire = { mime: "application/pdf", sha256: sha256Hex(pdf), bytes: pdf };
  const block = composeForChannel([wire], "body", { channel: "content-block" });
  strictEqual(block.prompt.includes(toBase64(pdf)), false, "no base64 in the prompt");
  const inv = getAdapter("claude").build({
    prompt: block.prompt,
    media: block.media,
    cwd: "/w",
    home: "/h",
    env: mapEnv({}),
  });
  const message = JSON.parse(dec(inv.stdin));
  deepStrictEqual(message.message.content[0], {
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: toBase64(pdf) },
  });
  const ref = composeForChannel([wire], "body", { channel: "file-reference" });
  strictEqual(ref.media[0].path, `.sdd/runtime/attachments/${wire.sha256}.pdf`);
  strictEqual(ref.prompt.includes(`@.sdd/runtime/attachments/${wire.sha256}.pdf`), true);
});

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { language_info: { name: "python" } },
  cells: [
    { cell_type: "markdown", source: ["# Rounding\n", "Half to even."], metadata: {} },
    {
      cell_type: "code",
      source: "round(2.5)",
      outputs: [{ output_type: "execute_result", data: { "image/png": "iVBORw0KGgo=" } }],
    },
    { cell_type: "code", source: [] },
  ],
});

Deno.test("a Jupyter notebook is attached as its cells' text, outputs left out", () => {
  const rendered = "# notebook: 3 cells (python)\n\n# [1] markdown\n# Rounding\nHalf to even.\n\n" +
    "# [2] code\nround(2.5)\n\n# [3] code\n";
  strictEqual(renderNotebook(NOTEBOOK), rendered);
  const s = screenAttachment(enc(NOTEBOOK), { path: "nb.ipynb" }, opts);
  deepStrictEqual([s.kind, s.mime, dec(s.bytes)], ["text", "text/plain", rendered]);
  strictEqual(s.sha256, sha256Hex(enc(rendered)), "the rendering is what is attested");
  // A line range counts lines of the rendering.
  const r = screenAttachment(enc(NOTEBOOK), { path: "nb.ipynb", fromLine: 7, toLine: 8 }, opts);
  deepStrictEqual([dec(r.bytes), r.firstLine], ["# [2] code\nround(2.5)\n", 7]);
  // JSON that is not a notebook, or a notebook with a malformed cell, stays the file's text.
  for (const other of ['{"cells": []}', '{"nbformat": 4, "cells": [{"source": "x"}]}', "[1]"]) {
    strictEqual(renderNotebook(other), undefined, other);
    strictEqual(dec(screenAttachment(enc(other), { path: "a.json" }, opts).bytes), other);
  }
});

Deno.test("a folder is attached as its listing: path order, sizes, links not followed, withheld names left out", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "p");
    const outside = join(dir, "outside");
    await Deno.mkdir(join(root, "docs", "sub"), { recursive: true });
    await Deno.mkdir(join(root, "docs", ".git"), { recursive: true });
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "secret.txt"), "not for agents\n");
    await Deno.writeTextFile(join(root, "docs", "b.md"), "12345");
    await Deno.writeTextFile(join(root, "docs", "sub", "a.txt"), "1");
    await Deno.writeTextFile(join(root, "docs", ".env"), "TOKEN=x\n");
    await Deno.writeTextFile(join(root, "docs", ".git", "config"), "[core]\n");
    await Deno.symlink(outside, join(root, "docs", "out"));
    const listing = await listFolder(join(root, "docs"), "docs");
    strictEqual(listing.reason, null);
    strictEqual(
      dec(listing.bytes),
      "# folder docs/: 2 file(s), 1 folder(s), 6 bytes; 2 withheld by the path policy " +
        "(a listing; contents not attached)\n" +
        "           5  docs/b.md\n" +
        "           -  docs/out -> (link, not followed)\n" +
        "           -  docs/sub/\n" +
        "           1  docs/sub/a.txt\n",
    );
    strictEqual(dec(listing.bytes).includes("secret"), false, "the link is not entered");
    // Through the gate, as a plan step declares them: text rows, the cut one partial.
    await Deno.mkdir(join(root, "many"));
    for (let i = 0; i < MAX_LISTING_ENTRIES + 5; i++) {
      await Deno.writeTextFile(join(root, "many", `f${String(i).padStart(4, "0")}`), "");
    }
    await Deno.mkdir(join(root, ".sdd", "keys"), { recursive: true });
    const run = await RunAttachments.fromCommandLine(["docs"], { cwd: root, warn: () => {} });
    await run.gate({
      project: { root, sdd: join(root, ".sdd") },
      config: {},
      drafts: [{
        id: "t1",
        title: "t1",
        role: "backend",
        attachments: ["many", ".sdd"],
        metadata: { field: "stages[0].steps[0]" },
      }],
      adapters: { t1: "scripted" },
      spawnPath: "direct-subprocess",
    });
    const rows = run.rows();
    deepStrictEqual(rows.map((r) => [r.field, r.kind, r.outcome]), [
      ["run.attach[0]", "text", "attached"],
      ["stages[0].steps[0].attachments[0]", "text", "partial"],
      ["stages[0].steps[0].attachments[1]", null, "not_attached"],
    ]);
    strictEqual(rows[0].sha256, sha256Hex(listing.bytes), "the listing is the attested bytes");
    strictEqual(
      rows[1].reason,
      `many/ has more than ${MAX_LISTING_ENTRIES} entries; the listing shows the first ${MAX_LISTING_ENTRIES}`,
    );
    // bernstein's state is never listed, even asked for directly.
    strictEqual(rows[2].reason, "bernstein state and git internals are never attached");
  });
});
