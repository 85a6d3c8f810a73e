// Attachment bytes on the worker wire: what the pool encodes into an Assignment the worker
// decodes to the same bytes, and bytes that do not hash to the attested digest are refused
// before any agent could see them.
import assert from "node:assert/strict";
import type { PromptMedia } from "../../src/adapters/mod.ts";
import { toBase64 } from "../../src/canonical/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { BernsteinError } from "../../src/errors/mod.ts";
import { Assignment, decodeAssignmentMedia, encodeAssignmentMedia } from "../../src/workers/mod.ts";
import { makePng } from "../_helpers/png.ts";

Deno.test("assignment media: encoded by the pool, decoded by the worker to the same bytes", async () => {
  const png = await makePng(8, 8, 3);
  const media: PromptMedia[] = [
    { mime: "image/png", sha256: sha256Hex(png), bytes: png },
    {
      mime: "image/png",
      sha256: sha256Hex(png),
      bytes: png,
      path: `.sdd/runtime/attachments/${sha256Hex(png)}.png`,
    },
  ];
  const wire = encodeAssignmentMedia(media);
  assert.equal(encodeAssignmentMedia([]), undefined, "no media: no field");
  // The wire form passes the Assignment schema's media rule.
  assert.ok(Assignment.shape.media.safeParse(wire).success);
  assert.deepEqual(decodeAssignmentMedia({ session: "s1", media: wire }), media);
  assert.equal(decodeAssignmentMedia({ session: "s1" }), undefined);
});

Deno.test("assignment media: bytes that do not hash to the digest are refused (worker.media_digest)", async () => {
  const png = await makePng(8, 8, 4);
  const other = await makePng(8, 8, 5);
  const good = { mime: "image/png", sha256: sha256Hex(png), base64: toBase64(png) };
  const cases = [
    { ...good, base64: toBase64(other) }, // swapped bytes
    { ...good, base64: "!!not base64!!" }, // garbage
  ];
  for (const bad of cases) {
    assert.throws(
      () => decodeAssignmentMedia({ session: "s9", media: [good, bad] }),
      (e: unknown) =>
        e instanceof BernsteinError && e.code === "worker.media_digest" &&
        e.message.includes("assignment s9: media[1] (image/png)"),
    );
  }
  // The schema itself refuses a digest that is not hex and more than 20 items.
  assert.ok(!Assignment.shape.media.safeParse([{ ...good, sha256: "x" }]).success);
  assert.ok(!Assignment.shape.media.safeParse(Array(21).fill(good)).success);
});
