import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  AttachmentError,
  codePointLength,
  composePrompt,
  encodeAttachmentBlock,
  numberLines,
  screenAttachment,
} from "../../src/attachments/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const opts = { field: "run.attach[0]", shownPath: "src/app.ts" };

function invalidAt(field: string, pattern: RegExp) {
  return (e: unknown) => {
    strictEqual((e as AttachmentError).code, "attach.invalid");
    strictEqual((e as AttachmentError).location, field);
    strictEqual(pattern.test((e as Error).message), true, (e as Error).message);
    return true;
  };
}

Deno.test("a whole text file is attached as its exact bytes, without a lines attribute", () => {
  const bytes = enc("\ufeffconst a = 1;\r\nconst b = 'é';\n");
  const s = screenAttachment(bytes, { path: "src/app.ts" }, opts);
  strictEqual(s.kind, "text");
  strictEqual(s.outcome, "attached");
  strictEqual(s.reason, null);
  strictEqual(s.firstLine, undefined);
  deepStrictEqual(s.bytes, bytes, "the BOM and CRLF are kept: the hashed bytes are the file's");
  strictEqual(s.sha256, sha256Hex(bytes));
});

Deno.test("a line range attaches exactly those lines' bytes and labels them", () => {
  const bytes = enc("one\ntwo\nthree\nfour\n");
  const s = screenAttachment(bytes, { path: "x", fromLine: 2, toLine: 3 }, opts);
  strictEqual(dec(s.bytes), "two\nthree\n");
  strictEqual(s.firstLine, 2);
  strictEqual(s.outcome, "attached");
  strictEqual(
    encodeAttachmentBlock({
      mime: s.mime,
      sha256: s.sha256,
      bytes: s.bytes,
      path: "x",
      firstLine: 2,
    }),
    `<attachment mime="text/plain" sha256="${
      sha256Hex(enc("two\nthree\n"))
    }" path="x" lines="2-3">\n` +
      "2 | two\n3 | three\n</attachment>\n",
  );
  const last = screenAttachment(enc("a\nb"), { path: "x", fromLine: 2, toLine: 2 }, opts);
  strictEqual(dec(last.bytes), "b", "a last line without newline stays without one");
});

Deno.test("a range running past the end is partial with the reason; one starting past it is refused", () => {
  const bytes = enc("one\ntwo\nthree\n");
  const s = screenAttachment(bytes, { path: "x", fromLine: 2, toLine: 9 }, opts);
  strictEqual(dec(s.bytes), "two\nthree\n");
  strictEqual(s.outcome, "partial");
  strictEqual(s.reason, "src/app.ts has 3 lines; attached 2-3");
  throws(
    () => screenAttachment(bytes, { path: "x", fromLine: 4, toLine: 5 }, opts),
    invalidAt("run.attach[0]", /has 3 line\(s\); the range 4-5 starts past its end/),
  );
  throws(
    () => screenAttachment(enc(""), { path: "x", fromLine: 1, toLine: 1 }, opts),
    invalidAt("run.attach[0]", /has 0 line/),
  );
});

Deno.test("an open range `N-` attaches from N to the last line, whole, never partial by range", () => {
  const bytes = enc("one\ntwo\nthree\n");
  const s = screenAttachment(bytes, { path: "x", fromLine: 2 }, opts);
  strictEqual(dec(s.bytes), "two\nthree\n");
  strictEqual(s.firstLine, 2);
  strictEqual(s.outcome, "attached");
  strictEqual(s.reason, null);
  strictEqual(dec(screenAttachment(bytes, { path: "x", fromLine: 3 }, opts).bytes), "three\n");
  throws(
    () => screenAttachment(bytes, { path: "x", fromLine: 4 }, opts),
    invalidAt("run.attach[0]", /has 3 line\(s\); the range 4- starts past its end/),
  );
});

Deno.test("text over the rendered-character limit is cut at whole lines and marked partial", () => {
  // Each line renders as "N | " + 6 characters; 10 lines of "abcdef" → 2-digit width.
  const text = Array.from({ length: 10 }, () => "abcdef").join("\n") + "\n";
  const perLine = 2 + 3 + 6;
  const max = perLine * 4 + 3; // 4 lines plus their 3 joining newlines fit exactly
  const s = screenAttachment(enc(text), { path: "x" }, { ...opts, maxTextChars: max });
  strictEqual(s.outcome, "partial");
  strictEqual(dec(s.bytes), "abcdef\nabcdef\nabcdef\nabcdef\n");
  strictEqual(s.firstLine, 1, "a cut whole file is labelled with its lines");
  strictEqual(s.reason, `rendered text is over ${max} characters; attached lines 1-4 of 1-10`);
  const rendered = numberLines(dec(s.bytes), 1);
  strictEqual(codePointLength(rendered) <= max, true);
  const fits = screenAttachment(enc(text), { path: "x" }, { ...opts, maxTextChars: 10_000 });
  strictEqual(fits.outcome, "attached");
});

Deno.test("characters are code points: an emoji counts once", () => {
  strictEqual(codePointLength("a😀b"), 3);
  strictEqual(codePointLength("\ud800x"), 2, "a lone surrogate still counts");
});

Deno.test("a single line longer than the limit is refused with the field path", () => {
  throws(
    () =>
      screenAttachment(enc("x".repeat(50) + "\n"), { path: "x" }, { ...opts, maxTextChars: 20 }),
    invalidAt("run.attach[0]", /line 1 of src\/app\.ts alone renders to more than 20 characters/),
  );
});

Deno.test("images are attached whole; a range on an image and binary files are refused", () => {
  const s = screenAttachment(PNG, { path: "shot.png" }, opts);
  strictEqual(s.kind, "image");
  strictEqual(s.mime, "image/png");
  deepStrictEqual(s.bytes, PNG);
  throws(
    () => screenAttachment(PNG, { path: "shot.png", fromLine: 1, toLine: 2 }, opts),
    invalidAt("run.attach[0]", /is an image \(image\/png\); a line range applies to text only/),
  );
  throws(
    () => screenAttachment(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0]), { path: "a.out" }, opts),
    invalidAt("run.attach[0]", /neither an image .* nor UTF-8 text/),
  );
  const prompt = composePrompt([{ mime: s.mime, sha256: s.sha256, bytes: s.bytes }], "body");
  strictEqual(
    prompt.startsWith(`<attachment mime="image/png" sha256="${sha256Hex(PNG)}">\n`),
    true,
  );
});
