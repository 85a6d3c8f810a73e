// The run-long object batch (`git cat-file --batch`) behind Git.readBlob / showFile /
// commitTexts: every read answers exactly what the per-call commands answer (blobs, trees,
// missing paths, names the line protocol cannot carry, forged objects), and a batch that dies,
// lies or hangs only sends the reads back to those commands.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { Git } from "../../src/orchestrator/mod.ts";
import { GitObjectBatch } from "../../src/orchestrator/_git_objects.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

const decoder = new TextDecoder();

/** A `git` on PATH that logs each call's arguments (one line per call) and runs the real one. */
async function loggingGit(dir: string): Promise<{ env: Record<string, string>; log: string }> {
  const bin = join(dir, "bin");
  const log = join(dir, "git-calls.log");
  const real = (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" })
    .output()).stdout;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "git"),
    `#!/bin/sh\nfor a in "$@"; do case "$a" in show|cat-file|rev-list|rev-parse) echo "$a" >> '${log}';; esac; done\nexec ${
      decoder.decode(real).trim()
    } "$@"\n`,
  );
  await Deno.chmod(join(bin, "git"), 0o755);
  await Deno.writeTextFile(log, "");
  return { env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir }, log };
}

async function calls(log: string): Promise<string[]> {
  return (await Deno.readTextFile(log)).split("\n").filter((l) => l !== "");
}

/** A repository with awkward paths, a big binary file, a folder and a symlink, on two commits. */
async function awkwardRepo(dir: string): Promise<{ base: string; head: string; paths: string[] }> {
  await makeRepo(dir);
  const big = new Uint8Array(300_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
  const files: Record<string, Uint8Array | string> = {
    "plain.txt": "hello\n",
    "with space.txt": "spaced\n",
    "line\nbreak.txt": "newline in the name\n",
    "cr\r": "carriage return at the end\n",
    "ünï cödé.md": "unicode\n",
    "empty": "",
    "dir/nested.txt": "nested\n",
    "big.bin": big,
  };
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(join(dir, path), content);
    else await Deno.writeFile(join(dir, path), content);
  }
  await Deno.symlink("plain.txt", join(dir, "link"));
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "awkward\n\nbody line");
  const base = (await git(dir, "rev-parse", "HEAD")).trim();
  await Deno.writeTextFile(join(dir, "plain.txt"), "changed\n");
  await git(dir, "commit", "-q", "-am", "second");
  const head = (await git(dir, "rev-parse", "HEAD")).trim();
  return { base, head, paths: [...Object.keys(files), "link", "dir", "missing.txt", "dir/none"] };
}

/** Every read through `g`: readBlob at both commits, showFile (bytes or its error), commitTexts. */
async function everyRead(g: Git, repo: { base: string; head: string; paths: string[] }) {
  const out: unknown[] = [];
  for (const commit of [repo.base, repo.head]) {
    for (const path of repo.paths) {
      out.push(await g.readBlob(commit, path));
      out.push(await g.showFile(commit, path).catch((e) => `error: ${(e as Error).message}`));
    }
  }
  out.push(await g.commitTexts(repo.base, repo.head));
  return out;
}

Deno.test("the object batch answers every read as the per-call commands do, and serves what it can", async () => {
  await withTempDir(async (dir) => {
    const repoDir = join(dir, "repo");
    await Deno.mkdir(repoDir);
    const repo = await awkwardRepo(repoDir);
    const { env, log } = await loggingGit(dir);
    const perCall = await everyRead(new Git(repoDir, { env: mapEnv(env) }), repo);
    const perCallCalls = await calls(log);
    await Deno.writeTextFile(log, "");
    const g = new Git(repoDir, { env: mapEnv(env) });
    g.openObjectBatch();
    try {
      deepStrictEqual(await everyRead(g, repo), perCall);
    } finally {
      await g.closeObjectBatch();
    }
    const batched = await calls(log);
    strictEqual(batched.filter((c) => c === "cat-file").length, 1, "one batch process");
    // Left to per-call commands, per commit and for both readBlob and showFile: the two names
    // with CR/LF, the folder and the two misses. The rest (and the commit) came from the batch.
    strictEqual(perCallCalls.filter((c) => c === "show").length, 2 * 2 * repo.paths.length);
    strictEqual(batched.filter((c) => c === "show").length, 2 * 2 * 5);
  });
});

Deno.test("a forged object (bytes that do not hash to its id) is never served by the batch", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    await Deno.writeTextFile(join(dir, "a.txt"), "good\n");
    await git(dir, "add", "a.txt");
    await git(dir, "commit", "-q", "-m", "a");
    const head = (await git(dir, "rev-parse", "HEAD")).trim();
    const id = (await git(dir, "rev-parse", "HEAD:a.txt")).trim();
    const loose = join(dir, ".git", "objects", id.slice(0, 2), id.slice(2));
    await Deno.chmod(loose, 0o644);
    // Same length, other bytes: a well-formed loose object under the wrong id.
    await Deno.writeFile(loose, deflateSync(new TextEncoder().encode("blob 5\0evil\n")));
    const { env, log } = await loggingGit(tmp);
    const plain = new Git(dir, { env: mapEnv(env) });
    // What git itself answers for a path read (2.39 does not check a blob's id there).
    const expected = await plain.readBlob(head, "a.txt");
    const expectedShow = await plain.showFile(head, "a.txt").catch((e) => (e as Error).message);
    await Deno.writeTextFile(log, "");
    const g = new Git(dir, { env: mapEnv(env) });
    g.openObjectBatch();
    try {
      deepStrictEqual(await g.readBlob(head, "a.txt"), expected);
      deepStrictEqual(
        await g.showFile(head, "a.txt").catch((e) => (e as Error).message),
        expectedShow,
      );
    } finally {
      await g.closeObjectBatch();
    }
    // The batch saw the forged bytes, refused them, and each read was asked of git show again.
    deepStrictEqual(await calls(log), ["cat-file", "show", "show"]);
  });
});

Deno.test("a batch that dies, breaks the protocol or never answers sends every read back to git", async () => {
  const line = (script: string) => () =>
    new Deno.Command("sh", {
      args: ["-c", script],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    })
      .spawn();
  const id = "a".repeat(40);
  // Dies at once.
  const dead = new GitObjectBatch(line("exit 0"), 60_000);
  strictEqual(await dead.read(id, "commit"), undefined);
  strictEqual(await dead.read(id, "commit"), undefined);
  await dead.close();
  // Garbage for a header.
  const garbage = new GitObjectBatch(line("read x; echo 'not a header'; cat > /dev/null"), 60_000);
  strictEqual(await garbage.read(id, "commit"), undefined);
  await garbage.close();
  // A header promising more bytes than come.
  const short = new GitObjectBatch(line(`read x; printf '${id} blob 10\\nab'`), 60_000);
  strictEqual(await short.read(id, "blob"), undefined);
  await short.close();
  // The right shape, but the bytes are not the object the id names.
  const lying = new GitObjectBatch(
    line(`while read x; do printf '${id} blob 5\\nevil\\n\\n'; done`),
    60_000,
  );
  strictEqual(await lying.read(id, "blob"), undefined);
  strictEqual(await lying.read(id, "commit"), undefined, "nor another type");
  await lying.close();
  // Never answers: the deadline breaks it (the read is not left hanging).
  const silent = new GitObjectBatch(line("cat > /dev/null"), 50);
  strictEqual(await silent.read(id, "commit"), undefined);
  await silent.close();
});

Deno.test("the batch keeps its answers in order under concurrent reads, misses included", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    for (let i = 0; i < 40; i++) await Deno.writeTextFile(join(dir, `f${i}.txt`), `file ${i}\n`);
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "forty");
    const head = (await git(dir, "rev-parse", "HEAD")).trim();
    const g = new Git(dir, { env: mapEnv({ PATH: "/usr/bin:/bin", HOME: dir }) });
    g.openObjectBatch();
    try {
      const got = await Promise.all(
        Array.from({ length: 60 }, (_, i) => g.readBlob(head, `f${i}.txt`)),
      );
      for (let i = 0; i < 60; i++) {
        strictEqual(
          got[i] === undefined ? undefined : decoder.decode(got[i]),
          i < 40 ? `file ${i}\n` : undefined,
        );
      }
      // An object made after the batch started is found (new loose objects are looked up).
      await Deno.writeTextFile(join(dir, "late.txt"), "late\n");
      await git(dir, "add", "late.txt");
      await git(dir, "commit", "-q", "-m", "late");
      const later = (await git(dir, "rev-parse", "HEAD")).trim();
      strictEqual(decoder.decode(await g.showFile(later, "late.txt")), "late\n");
      // Housekeeping moves every loose object into a new pack under the running batch.
      await git(dir, "gc", "--quiet", "--prune=now");
      strictEqual(decoder.decode(await g.showFile(later, "late.txt")), "late\n");
      strictEqual(decoder.decode(await g.showFile(head, "f7.txt")), "file 7\n");
      strictEqual(await g.revParse("HEAD"), later);
    } finally {
      await g.closeObjectBatch();
    }
    // Closed: reads go on per call.
    strictEqual(decoder.decode(await g.showFile(head, "f1.txt")), "file 1\n");
  });
});

Deno.test("refs resolve through the batch as git rev-parse resolves them, while they move", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    const { env, log } = await loggingGit(tmp);
    const plain = new Git(dir, { env: mapEnv(env) });
    const g = new Git(dir, { env: mapEnv(env) });
    g.openObjectBatch();
    const names = ["HEAD", "feature", "main", "refs/heads/feature", "agent/s1", "nope", "HEAD~1"];
    const answers = async (git: Git) => {
      const out: string[] = [];
      for (const n of names) out.push(await git.revParse(n).catch(() => "refused"));
      return out;
    };
    const same = async (when: string) => {
      const batched = await answers(g);
      deepStrictEqual(batched, await answers(plain), when);
    };
    try {
      await same("at the start");
      await git(dir, "commit", "-q", "--allow-empty", "-m", "two");
      await git(dir, "branch", "agent/s1", "HEAD~1");
      await same("after a commit and a new branch");
      await git(dir, "pack-refs", "--all");
      await same("packed");
      await git(dir, "commit", "-q", "--allow-empty", "-m", "three");
      await git(dir, "update-ref", "refs/heads/agent/s1", "HEAD");
      await same("moved after packing");
      await git(dir, "update-ref", "-d", "refs/heads/agent/s1");
      await same("deleted");
      await git(dir, "checkout", "-q", "main");
      await same("HEAD on another branch");
      // A worktree's HEAD is its own: asked of git in that worktree, not of the root's batch.
      const wt = join(tmp, "wt");
      await git(dir, "worktree", "add", "-q", "-b", "agent/s2", wt, "feature~1");
      strictEqual(await g.revParse("HEAD", wt), await plain.revParse("HEAD", wt));
      strictEqual(await g.revParse("HEAD", wt), (await git(dir, "rev-parse", "feature~1")).trim());
      await Deno.writeTextFile(log, "");
      await answers(g);
      // Plain names came from the batch; the revision syntax and the misses went to rev-parse.
      deepStrictEqual(await calls(log), ["rev-parse", "rev-parse", "rev-parse"]);
    } finally {
      await g.closeObjectBatch();
    }
  });
});
