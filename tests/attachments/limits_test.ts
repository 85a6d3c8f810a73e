import { doesNotThrow, strictEqual, throws } from "node:assert/strict";
import { CAPABILITY_TABLE } from "../../src/adapters/mod.ts";
import {
  adaptersTakingImage,
  AttachmentSpawnPathError,
  checkAdapterTakesImage,
  checkAttachmentCount,
  refuseNonDirectSpawn,
} from "../../src/attachments/mod.ts";
import type { BernsteinError } from "../../src/errors/mod.ts";
import { withScriptedMultimodal } from "../_helpers/scripted_multimodal.ts";

const MB = 1024 * 1024;
const to = { field: "run.attach[2]", path: "design.png", taskId: "t1" };

function fails(code: string, pattern: RegExp, location = "run.attach[2]") {
  return (e: unknown) => {
    strictEqual((e as BernsteinError).code, code);
    strictEqual((e as BernsteinError).location, location);
    strictEqual(pattern.test((e as Error).message), true, (e as Error).message);
    return true;
  };
}

Deno.test("claude, codex, gemini, qwen and opencode take images, each with its own types, size limit and channel", () => {
  const multimodal = Object.entries(CAPABILITY_TABLE).filter(([, c]) => c.multimodal).map(([n]) =>
    n
  );
  strictEqual(multimodal.join(","), "claude,codex,gemini,qwen,opencode");
  strictEqual(CAPABILITY_TABLE.claude.max_attachment_bytes, 5 * MB);
  strictEqual(CAPABILITY_TABLE.gemini.image_types.includes("image/gif"), false);
  // qwen's file reader refuses a file of more than 9.9 MiB.
  strictEqual(CAPABILITY_TABLE.qwen.max_attachment_bytes / MB <= 9.9, true);
  strictEqual((CAPABILITY_TABLE.qwen.max_attachment_bytes + 1) / MB > 9.9, true);
  const channels = Object.fromEntries(
    Object.entries(CAPABILITY_TABLE).map(([n, c]) => [n, c.attachment_channel]),
  );
  strictEqual(channels.claude, "content-block");
  strictEqual(channels.gemini, "file-reference");
  strictEqual(channels.qwen, "file-reference");
  strictEqual(channels.codex, "file-argument");
  strictEqual(channels.opencode, "file-argument");
  for (const [name, caps] of Object.entries(CAPABILITY_TABLE)) {
    if (!caps.multimodal) strictEqual(caps.attachment_channel, "prompt-text", name);
  }
  strictEqual(
    adaptersTakingImage({ mime: "image/png", size: 1000 }),
    "claude (png, jpeg, gif, webp up to 5 MB), codex (png, jpeg, gif, webp up to 20 MB), " +
      "gemini (png, jpeg, webp up to 14 MB), qwen (png, jpeg, gif, webp up to 9.9 MB), " +
      "opencode (png, jpeg, gif, webp up to 20 MB)",
  );
  strictEqual(adaptersTakingImage({ mime: "image/gif", size: 1000 }).startsWith("claude ("), true);
  strictEqual(
    adaptersTakingImage({ mime: "image/png", size: 21 * MB }),
    "none (no adapter takes this image)",
  );
});

Deno.test("an image for a non-multimodal adapter is a usage error naming the adapters that can", () => {
  throws(
    () => checkAdapterTakesImage({ mime: "image/png", size: 10 }, { ...to, adapter: "aider" }),
    fails(
      "attach.adapter_not_multimodal",
      /design\.png is an image \(image\/png\) but task t1 runs on 'aider', which cannot take images; adapters that can: claude .*, codex .*, gemini .*, qwen .*, opencode/,
    ),
  );
  throws(
    () => checkAdapterTakesImage({ mime: "image/png", size: 10 }, { ...to, adapter: "scripted" }),
    fails("attach.adapter_not_multimodal", /runs on 'scripted'/),
    "the test agent is not multimodal unless a test registers it",
  );
});

Deno.test("a type or size an adapter's API refuses is attach.invalid with the field first", () => {
  throws(
    () =>
      checkAdapterTakesImage({ mime: "image/png", size: 31 * MB }, { ...to, adapter: "claude" }),
    fails("attach.invalid", /^file is 31 MB, the limit for claude is 5 MB/),
  );
  throws(
    () => checkAdapterTakesImage({ mime: "image/gif", size: 10 }, { ...to, adapter: "gemini" }),
    fails(
      "attach.invalid",
      /image\/gif, which gemini does not accept .*adapters that take it: claude/,
    ),
  );
  doesNotThrow(() =>
    checkAdapterTakesImage({ mime: "image/webp", size: 5 * MB }, { ...to, adapter: "claude" })
  );
});

Deno.test("the scripted agent takes images only while a test registers it as multimodal, and no other adapter can be", async () => {
  const gif = { mime: "image/gif", size: 19 * MB };
  throws(
    () => checkAdapterTakesImage(gif, { ...to, adapter: "scripted" }),
    fails("attach.adapter_not_multimodal", /runs on 'scripted'/),
  );
  await withScriptedMultimodal("prompt-text", () => {
    doesNotThrow(() => checkAdapterTakesImage(gif, { ...to, adapter: "scripted" }));
    throws(
      () => checkAdapterTakesImage({ mime: "image/png", size: 10 }, { ...to, adapter: "aider" }),
      fails("attach.adapter_not_multimodal", /runs on 'aider'/),
      "registering the test agent changes no real adapter",
    );
  });
  throws(
    () => checkAdapterTakesImage(gif, { ...to, adapter: "scripted" }),
    fails("attach.adapter_not_multimodal", /runs on 'scripted'/),
    "undone after the test",
  );
});

Deno.test("at most 20 attachments per task", () => {
  doesNotThrow(() => checkAttachmentCount(20, "stages[0].steps[1].attachments", "t1"));
  throws(
    () => checkAttachmentCount(21, "stages[0].steps[1].attachments", "t1"),
    fails(
      "attach.invalid",
      /task t1 would carry 21 attachments; at most 20/,
      "stages[0].steps[1].attachments",
    ),
  );
});

Deno.test("only the direct-subprocess and sandbox spawn paths carry attachments", () => {
  doesNotThrow(() => refuseNonDirectSpawn("direct-subprocess", 3));
  doesNotThrow(() => refuseNonDirectSpawn("sandbox", 3));
  doesNotThrow(() => refuseNonDirectSpawn("container", 0));
  for (const path of ["container", "runtime-bridge", "in-process"]) {
    throws(() => refuseNonDirectSpawn(path, 1), (e: unknown) => {
      strictEqual(e instanceof AttachmentSpawnPathError, true);
      strictEqual((e as BernsteinError).code, "attach.spawn_path");
      strictEqual((e as BernsteinError).exitCode, 2);
      return true;
    });
  }
});
