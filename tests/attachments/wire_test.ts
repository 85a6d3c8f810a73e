import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  AttachmentError,
  composePrompt,
  parseAttachmentSpec,
  rangeText,
  sniffBytes,
} from "../../src/attachments/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

Deno.test("sniffing decides by bytes, not by extension", () => {
  strictEqual(sniffBytes(PNG).mime, "image/png");
  strictEqual(sniffBytes(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])).mime, "image/jpeg");
  strictEqual(sniffBytes(new TextEncoder().encode("GIF89a....")).mime, "image/gif");
  strictEqual(sniffBytes(new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8 ")).mime, "image/webp");
  strictEqual(sniffBytes(new TextEncoder().encode("const x = 'é';\n")).kind, "text");
  strictEqual(sniffBytes(new Uint8Array([0x61, 0x00, 0x62])).kind, "binary");
  strictEqual(sniffBytes(new Uint8Array([0xc3, 0x28])).kind, "binary", "invalid UTF-8 is binary");
});

Deno.test("the wire block of an image is exactly FORMATS §7", () => {
  const sha = sha256Hex(PNG);
  const prompt = composePrompt([{ mime: "image/png", sha256: sha, bytes: PNG }], "Do the thing.");
  strictEqual(
    prompt,
    `<attachment mime="image/png" sha256="${sha}">\niVBORw0KGgoAAAAN\n</attachment>\n\nDo the thing.`,
  );
});

Deno.test("text attachments are line-numbered in the same form; several keep declaration order", () => {
  const text = new TextEncoder().encode("a\nb\n");
  const prompt = composePrompt([
    { mime: "text/plain", sha256: sha256Hex(text), bytes: text, path: "src/x.ts", firstLine: 9 },
    { mime: "image/png", sha256: sha256Hex(PNG), bytes: PNG },
  ], "body");
  strictEqual(
    prompt,
    `<attachment mime="text/plain" sha256="${
      sha256Hex(text)
    }" path="src/x.ts" lines="9-10">\n 9 | a\n10 | b\n</attachment>\n\n` +
      `<attachment mime="image/png" sha256="${
        sha256Hex(PNG)
      }">\niVBORw0KGgoAAAAN\n</attachment>\n\nbody`,
  );
  strictEqual(composePrompt([], "body"), "body");
});

Deno.test("attachment specs parse paths and line ranges; bad ranges are refused with the field", () => {
  deepStrictEqual(parseAttachmentSpec("src/app.ts:40-80", "run.attach[0]"), {
    path: "src/app.ts",
    fromLine: 40,
    toLine: 80,
  });
  deepStrictEqual(parseAttachmentSpec("log.txt:7", "run.attach[0]"), {
    path: "log.txt",
    fromLine: 7,
    toLine: 7,
  });
  deepStrictEqual(parseAttachmentSpec("C:weird", "run.attach[0]"), { path: "C:weird" });
  throws(() => parseAttachmentSpec("a.ts:80-40", "run.attach[2]"), (e: unknown) => {
    strictEqual((e as AttachmentError).code, "attach.invalid");
    strictEqual((e as AttachmentError).location, "run.attach[2]");
    return true;
  });
  throws(() => parseAttachmentSpec("a.ts:0-3", "run.attach[0]"), AttachmentError);
  throws(() => parseAttachmentSpec(" ", "run.attach[0]"), AttachmentError);
});

Deno.test("`:N-` runs from N to the end; names with colons attach as they are or with a trailing ':'", () => {
  deepStrictEqual(parseAttachmentSpec("log.txt:120-", "run.attach[0]"), {
    path: "log.txt",
    fromLine: 120,
  });
  strictEqual(rangeText(parseAttachmentSpec("log.txt:120-", "f")), "120-");
  strictEqual(rangeText(parseAttachmentSpec("log.txt:7", "f")), "7-7");
  strictEqual(rangeText(parseAttachmentSpec("log.txt", "f")), "");
  deepStrictEqual(parseAttachmentSpec("./name:with:colons", "f"), { path: "./name:with:colons" });
  deepStrictEqual(parseAttachmentSpec("a:b:3-4", "f"), { path: "a:b", fromLine: 3, toLine: 4 });
  // The escape: one trailing ':' ends the path, so a name that looks like a range attaches whole.
  deepStrictEqual(parseAttachmentSpec("log:7:", "f"), { path: "log:7" });
  deepStrictEqual(parseAttachmentSpec("log:7-9:", "f"), { path: "log:7-9" });
  deepStrictEqual(parseAttachmentSpec("odd::", "f"), { path: "odd:" });
  throws(() => parseAttachmentSpec(":", "f"), AttachmentError);
  throws(() => parseAttachmentSpec("a.ts:0-", "f"), AttachmentError);
  throws(
    () => parseAttachmentSpec("a.ts:99999999999999999999-", "f"),
    AttachmentError,
    "a range too large for a line number is refused, not rounded",
  );
});
