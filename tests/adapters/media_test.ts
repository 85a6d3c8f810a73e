// Attachment media on each CLI's own channel: claude's stream-json user message with image
// blocks, gemini's and qwen's worktree copies named with `@path`, and the copies' writing
// (inside the worktree only, never through a symlink a repository planted).
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  getAdapter,
  type InvocationInput,
  type PromptMedia,
  writeInvocationFiles,
} from "../../src/adapters/mod.ts";
import { toBase64 } from "../../src/canonical/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { mapEnv, PathEscapeError } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const block: PromptMedia = { mime: "image/png", sha256: sha256Hex(PNG), bytes: PNG };
const copy: PromptMedia = { ...block, path: `.sdd/runtime/attachments/${block.sha256}.png` };

function input(overrides: Partial<InvocationInput> = {}): InvocationInput {
  return {
    prompt: "look at it",
    cwd: "/work/wt/s1",
    home: "/tmp/homes/s1",
    env: mapEnv({ PATH: "/usr/bin" }),
    ...overrides,
  };
}

const dec = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

Deno.test("claude: images go as image blocks of one stream-json user message, text last", () => {
  const inv = getAdapter("claude").build(input({ media: [block] }));
  const i = inv.argv.indexOf("--input-format");
  assert.ok(i > 0, inv.argv.join(" "));
  assert.equal(inv.argv[i + 1], "stream-json");
  const text = dec(inv.stdin);
  assert.ok(text.endsWith("\n") && text.indexOf("\n") === text.length - 1, "one line");
  assert.deepEqual(JSON.parse(text), {
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: toBase64(PNG) } },
        { type: "text", text: "look at it" },
      ],
    },
  });
  assert.ok(inv.notes.some((n) => n.includes("1 attachment(s) as content blocks")));
  // Without media the prompt is plain stdin, as before.
  const plain = getAdapter("claude").build(input());
  assert.equal(dec(plain.stdin), "look at it");
  assert.ok(!plain.argv.includes("--input-format"));
  // A file reference is not claude's channel: refused, never dropped.
  assert.throws(() => getAdapter("claude").build(input({ media: [copy] })), /claude cannot take/);
});

Deno.test("gemini and qwen: images are worktree copies the prompt names; qwen declares the modality", () => {
  for (const name of ["gemini", "qwen"]) {
    const inv = getAdapter(name).build(input({ media: [copy] }));
    assert.deepEqual(inv.worktree_files, [{ path: copy.path, bytes: PNG }], name);
    assert.ok(!dec(inv.stdin).includes(toBase64(PNG)), `${name}: no base64 in the prompt`);
    assert.throws(
      () => getAdapter(name).build(input({ media: [block] })),
      /cannot take image\/png attachment .* as a content block/,
      `${name}: a content block is not its channel`,
    );
    assert.equal(getAdapter(name).build(input()).worktree_files, undefined);
  }
  const settings = (media: PromptMedia[]) =>
    JSON.parse(
      getAdapter("qwen").build(input({ media })).files.find((f) => f.path === ".qwen/settings.json")
        ?.content ?? "{}",
    );
  assert.deepEqual(settings([copy]).model, { generationConfig: { modalities: { image: true } } });
  assert.equal(settings([]).model, undefined, "no image: the model's own modalities stand");
  assert.throws(
    () => getAdapter("gemini").build(input({ media: [{ ...copy, path: "../outside.png" }] })),
    /attachment copy/,
    "a copy path leaving the worktree is refused at build",
  );
});

Deno.test("codex and opencode: images are worktree copies their own flag attaches; the prompt stays as written", () => {
  const two: PromptMedia = { ...copy, path: ".sdd/runtime/attachments/b.png" };
  const endpoint = { name: "loc", base_url: "http://127.0.0.1:1/v1", model: "coder" };
  // codex: one `--image a,b` right after `exec`, ended by the next flag (it takes many values).
  const cx = getAdapter("codex").build(input({ media: [copy, two], endpoint }));
  assert.deepEqual(cx.argv.slice(1, 5), ["exec", "--image", `${copy.path},${two.path}`, "--json"]);
  assert.deepEqual(cx.worktree_files, [{ path: copy.path, bytes: PNG }, {
    path: two.path,
    bytes: PNG,
  }]);
  assert.equal(dec(cx.stdin), "look at it");
  assert.ok(!getAdapter("codex").build(input()).argv.includes("--image"));
  // opencode: `--file P` per image before `--format`; the prompt only on stdin, never in argv
  // (opencode quotes argv words with spaces and escapes their `"`).
  const quoted = 'say "hi" to me';
  const oc = getAdapter("opencode").build(input({ prompt: quoted, media: [copy, two], endpoint }));
  assert.deepEqual(oc.argv.slice(1, 7), [
    "run",
    "--file",
    copy.path,
    "--file",
    two.path,
    "--format",
  ]);
  assert.ok(!oc.argv.some((a) => a.includes("hi")), oc.argv.join(" "));
  assert.equal(dec(oc.stdin), quoted);
  assert.equal(oc.prompt_channel, "stdin");
  const model = (inv: typeof oc) =>
    JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT).provider.bernstein.models.coder;
  assert.deepEqual(model(oc), {
    name: "coder",
    attachment: true,
    modalities: { input: ["text", "image"], output: ["text"] },
  });
  assert.deepEqual(model(getAdapter("opencode").build(input({ endpoint }))), { name: "coder" });
  // Content blocks are neither's channel; ollama (opencode on a local model) takes no images.
  for (const name of ["codex", "opencode"]) {
    assert.throws(() => getAdapter(name).build(input({ media: [block], endpoint })), /cannot take/);
  }
  assert.throws(() => getAdapter("ollama").build(input({ media: [copy] })), /ollama cannot take/);
});

Deno.test("worktree copies are written inside the worktree (mode 0600), never through a planted symlink", async () => {
  await withTempDir(async (dir) => {
    const worktree = join(dir, "wt");
    const home = join(dir, "home");
    await Deno.mkdir(worktree);
    await Deno.mkdir(home);
    const inv = getAdapter("gemini").build(input({ cwd: worktree, home, media: [copy] }));
    const written = await writeInvocationFiles(inv, home);
    const target = join(worktree, copy.path as string);
    assert.ok(written.includes(target), written.join("\n"));
    assert.deepEqual(await Deno.readFile(target), PNG);
    assert.equal(((await Deno.stat(target)).mode ?? 0) & 0o777, 0o600);
    // A repository that tracks `.sdd/runtime` as a link out of the worktree gets nothing written.
    const hostile = join(dir, "hostile");
    const outside = join(dir, "outside");
    await Deno.mkdir(join(hostile, ".sdd"), { recursive: true });
    await Deno.mkdir(outside);
    await Deno.symlink(outside, join(hostile, ".sdd", "runtime"));
    const bad = getAdapter("qwen").build(input({ cwd: hostile, home, media: [copy] }));
    await assert.rejects(writeInvocationFiles(bad, home), PathEscapeError);
    assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing landed outside");
  });
});
