// Attachments held by value (`{name, text}`, `{name, image: {mime, base64}}`): the agent-core
// rules, checked where a plan or a task request hands them over — a plan file may be written
// by someone the operator does not trust.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { toBase64 } from "../../src/canonical/mod.ts";
import {
  checkDeclarations,
  checkPlan,
  hostBytes,
  MAX_HOST_BYTES_PER_TASK,
  MAX_HOST_TEXT_BYTES,
} from "../../src/plan/mod.ts";
// The magic number is what the rules look at; the rest is opaque.
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]);
const image = (mime: string, bytes: Uint8Array = PNG) => ({ mime, base64: toBase64(bytes) });

function problems(list: unknown[]): [string, string][] {
  return checkDeclarations(list).problems.map((p) => [
    p.path.map((s) => typeof s === "number" ? `[${s}]` : `.${s}`).join(""),
    p.message,
  ]);
}

Deno.test("paths, held texts and held images pass; the values come back as given", () => {
  const list = [
    "src/app.ts:40-80",
    { name: "spec.md", text: "# Spec\nround half to even\n" },
    { name: "screen 1.png", image: image("image/png") },
    { name: "photo.jpg", image: image("image/jpeg", JPEG) },
  ];
  const checked = checkDeclarations(list);
  deepStrictEqual(checked.problems, []);
  deepStrictEqual(checked.declarations, list);
  deepStrictEqual(
    hostBytes(list[2] as { name: string; image: { mime: string; base64: string } }),
    PNG,
  );
});

Deno.test("names are names, not paths: each bad one is refused at its own field", () => {
  deepStrictEqual(
    problems([
      { name: "../../etc/passwd", text: "x" },
      { name: "a\\b.txt", text: "x" },
      { name: "..", text: "x" },
      { name: "line\nbreak", text: "x" },
      { name: "", text: "x" },
      { name: " padded", text: "x" },
      { name: "x".repeat(201), text: "x" },
      { name: 7, text: "x" },
      { text: "x" },
    ]),
    [
      ["[0].name", "is a name, not a path: no '/' or '\\'"],
      ["[1].name", "is a name, not a path: no '/' or '\\'"],
      ["[2].name", "is a name, not a path: not '.' or '..'"],
      ["[3].name", "must not contain control characters or line breaks"],
      ["[4].name", "must not be empty"],
      ["[5].name", "must not start or end with white space"],
      ["[6].name", "is longer than 200 characters"],
      ["[7].name", "expected a string, got an integer"],
      ["[8].name", "required"],
    ],
  );
});

Deno.test("images: the MIME type from the allowlist and equal to what the bytes are, strict base64", () => {
  const svg = new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>");
  deepStrictEqual(
    problems([
      { name: "a.svg", image: { mime: "image/svg+xml", base64: toBase64(svg) } },
      { name: "b.png", image: image("image/png", JPEG) },
      { name: "c.png", image: image("image/png", svg) },
      { name: "d.png", image: { mime: "image/png", base64: "iVBOR w0KGgo=" } },
      {
        name: "e.png",
        image: { mime: "image/png", base64: `data:image/png;base64,${toBase64(PNG)}` },
      },
      { name: "f.png", image: { mime: "image/png" } },
      { name: "g.png", image: { mime: "image/png", base64: toBase64(PNG), url: "http://x" } },
      { name: "h.png", image: "iVBORw0KGgo=" },
    ]),
    [
      [
        "[0].image.mime",
        "'image/svg+xml' is not one of image/png, image/jpeg, image/gif, image/webp",
      ],
      ["[1].image.mime", "declared image/png, but the bytes are image/jpeg"],
      [
        "[2].image.mime",
        "declared image/png, but the bytes are not a PNG, JPEG, GIF or WebP image",
      ],
      ["[3].image.base64", "is not standard padded base64 (A-Z a-z 0-9 + /, no white space)"],
      ["[4].image.base64", "is not standard padded base64 (A-Z a-z 0-9 + /, no white space)"],
      ["[5].image.base64", "required"],
      ["[6].image.url", "unknown field 'url'"],
      ["[7].image", "expected a mapping, got a string"],
    ],
  );
  const dataUrl = checkDeclarations([{
    name: "e.png",
    image: { mime: "image/png", base64: `data:image/png;base64,${toBase64(PNG)}` },
  }]);
  strictEqual(dataUrl.problems[0].hint, "drop the 'data:…;base64,' prefix");
});

Deno.test("one of text or image, no other field; names unique in a task", () => {
  deepStrictEqual(
    problems([
      { name: "both", text: "x", image: image("image/png") },
      { name: "neither" },
      { name: "extra", text: "x", path: "/etc/passwd" },
      { name: "dup", text: "one" },
      { name: "dup", text: "two" },
      { name: "num", text: 42 },
      42,
      "",
    ]),
    [
      ["[0]", "has both text and image; give one"],
      ["[1]", "needs text or image"],
      ["[2].path", "unknown field 'path'"],
      ["[4].name", "'dup' is already the name of attachments[3]"],
      ["[5].text", "expected a string, got an integer"],
      ["[6]", "expected a file path or a {name, text} / {name, image} mapping, got an integer"],
      ["[7]", "must not be empty"],
    ],
  );
});

Deno.test("sizes: a text over 1 MiB, a task holding over 8 MiB by value, more than 20 items", () => {
  deepStrictEqual(problems([{ name: "big.txt", text: "x".repeat(MAX_HOST_TEXT_BYTES + 1) }]), [
    ["[0].text", "is over 1 MiB"],
  ]);
  // Nine texts of 1 MiB: the ninth passes the task's 8 MiB.
  const mib = "y".repeat(MAX_HOST_TEXT_BYTES);
  const nine = Array.from({ length: 9 }, (_, i) => ({ name: `t${i}`, text: mib }));
  deepStrictEqual(problems(nine), [[
    "[8]",
    "the attachments held by value pass 8 MiB for this task",
  ]]);
  strictEqual(MAX_HOST_BYTES_PER_TASK, 8 * MAX_HOST_TEXT_BYTES);
  // An image whose base64 alone says it is too large is refused before it is decoded.
  const huge = {
    name: "huge.png",
    image: { mime: "image/png", base64: "A".repeat(12 * 1024 * 1024) },
  };
  deepStrictEqual(problems([huge]), [["[0].image.base64", "the image is over 8 MiB"]]);
  const many = Array.from({ length: 21 }, (_, i) => ({ name: `n${i}`, text: "x" }));
  deepStrictEqual(problems(many), [["", "has 21 attachments; at most 20 per task"]]);
});

function plan(attachments: string): string {
  return [
    "name: p",
    "stages:",
    "  - name: one",
    "    steps:",
    "      - title: Do it",
    "        attachments:",
    attachments,
    "",
  ].join("\n");
}

Deno.test("plan YAML: held attachments load; each problem is located with its field path", () => {
  const good = checkPlan(
    plan(
      [
        "          - notes.txt",
        "          - name: spec.md",
        "            text: |",
        "              # Spec",
        "              totals round half to even",
        "          - name: shot.png",
        "            image:",
        "              mime: image/png",
        `              base64: ${toBase64(PNG)}`,
      ].join("\n"),
    ),
    { file: "plan.yaml" },
  );
  deepStrictEqual(good.problems, []);
  deepStrictEqual(good.graph?.steps[0].attachments, [
    "notes.txt",
    { name: "spec.md", text: "# Spec\ntotals round half to even\n" },
    { name: "shot.png", image: { mime: "image/png", base64: toBase64(PNG) } },
  ]);
  const bad = checkPlan(
    plan(
      [
        "          - name: ../../root/.ssh/id_rsa",
        "            text: hi",
        "          - name: x.svg",
        "            image: {mime: image/svg+xml, base64: PHN2Zy8+}",
      ].join("\n"),
    ),
    { file: "plan.yaml" },
  );
  deepStrictEqual(
    bad.problems.map((p) => [p.code, p.location, p.message]),
    [
      [
        "attach.invalid",
        "plan.yaml:7:19",
        "stages[0].steps[0].attachments[0].name: is a name, not a path: no '/' or '\\'",
      ],
      [
        "attach.invalid",
        "plan.yaml:10:27",
        "stages[0].steps[0].attachments[1].image.mime: 'image/svg+xml' is not one of image/png, image/jpeg, image/gif, image/webp",
      ],
    ],
  );
});
