// The run-long object batch (`git cat-file --batch`) behind Git.readBlob / showFile /
// commitTexts: every read answers exactly what the per-call commands answer (blobs, trees,
// missing paths, names the line protocol cannot carry, forged objects), and a batch that dies,
// lies or hangs only sends the reads back to those commands.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
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
    `#!/bin/sh\nfor a in "$@"; do case "$a" in show|cat-file|rev-list|rev-parse|diff) echo "$a" >> '${log}';; esac; done\nexec ${
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

Deno.test("commitTexts walks a one-parent chain through the batch and leaves every other shape to rev-list", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    const rev = async (ref: string) => (await git(dir, "rev-parse", ref)).trim();
    const root = await rev("HEAD");
    const commit = async (message: string) => {
      await git(dir, "commit", "-q", "--allow-empty", "-m", message);
      return await rev("HEAD");
    };
    const base = await commit("base");
    const c1 = await commit("one");
    const c2 = await commit("two\n\nwith a body");
    const chainHead = await commit("three");
    // A merge inside base..head: git's walk, not a chain.
    await git(dir, "checkout", "-q", "-b", "side", base);
    const side = await commit("side");
    await git(dir, "checkout", "-q", "-");
    await git(dir, "merge", "-q", "--no-ff", "--no-edit", side);
    const merged = await commit("after the merge");
    const { env, log } = await loggingGit(tmp);
    const plain = new Git(dir, { env: mapEnv(env) });
    const g = new Git(dir, { env: mapEnv(env) });
    const cases: [string, string, string][] = [
      ["chain", base, chainHead],
      ["one commit", base, c1],
      ["empty", chainHead, chainHead],
      ["merge inside", base, merged],
      ["base not an ancestor", side, chainHead],
      ["head behind base", chainHead, base],
      ["from the root", root, chainHead],
    ];
    g.openObjectBatch();
    try {
      for (const [what, from, to] of cases) {
        await Deno.writeTextFile(log, "");
        const batched = await g.commitTexts(from, to);
        const revLists = (await calls(log)).filter((c) => c === "rev-list").length;
        deepStrictEqual(batched, await plain.commitTexts(from, to), what);
        const walked = ["chain", "one commit", "empty", "from the root"].includes(what);
        strictEqual(revLists, walked ? 0 : 1, `${what}: rev-list calls`);
      }
      strictEqual((await g.commitTexts(base, chainHead)).length, 3);
      // A shallow repository: rev-list stops at its cut, so it answers.
      await Deno.writeTextFile(join(dir, ".git", "shallow"), `${c2}\n`);
      await Deno.writeTextFile(log, "");
      deepStrictEqual(
        await g.commitTexts(base, chainHead),
        await plain.commitTexts(base, chainHead),
      );
      strictEqual((await calls(log)).filter((c) => c === "rev-list").length, 2);
      strictEqual((await g.commitTexts(base, chainHead)).length, 2, "cut at the shallow commit");
    } finally {
      await g.closeObjectBatch();
    }
  });
});

/** A small deterministic generator (xorshift32), so a failing case can be replayed. */
function generator(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

Deno.test("diffEntries from tree objects lists what git diff lists, in its order, across random changes", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    // Names around git's folder order ("a" < "a-b" < "a.txt" < "a/" < "a0"), nesting, unicode.
    const names = ["a", "a-b", "a.txt", "a0", "b", "ü", "z z", "dir", "dir-x", "dir.y", "q"];
    const random = generator(22);
    const pick = () => names[random(names.length)];
    const pathOf = () => Array.from({ length: 1 + random(3) }, pick).join("/");
    const remove = (path: string) =>
      Deno.remove(join(dir, path), { recursive: true }).catch(() => {});
    /** One random change: write, delete, chmod, symlink, or a file where a folder was (or back). */
    const change = async () => {
      const path = pathOf();
      const op = random(6);
      if (op === 0) return await remove(path);
      // A file's folders must be folders: anything in the way goes.
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) {
        const up = parts.slice(0, i).join("/");
        const info = await Deno.lstat(join(dir, up)).catch(() => undefined);
        if (info !== undefined && !info.isDirectory) await remove(up);
      }
      await Deno.mkdir(join(dir, ...parts.slice(0, -1)), { recursive: true });
      const info = await Deno.lstat(join(dir, path)).catch(() => undefined);
      if (info?.isDirectory) await remove(path);
      if (op === 1 && info?.isFile) {
        return await Deno.chmod(join(dir, path), ((info.mode ?? 0) & 0o100) !== 0 ? 0o644 : 0o755);
      }
      if (op === 2) {
        await remove(path);
        return await Deno.symlink(`target-${random(3)}`, join(dir, path));
      }
      if (info?.isSymlink) await remove(path);
      await Deno.writeTextFile(join(dir, path), `content ${random(4)}\n`);
    };
    const { env, log } = await loggingGit(tmp);
    const plain = new Git(dir, { env: mapEnv(env) });
    const g = new Git(dir, { env: mapEnv(env) });
    g.openObjectBatch();
    let compared = 0;
    let changed = 0;
    try {
      for (let round = 0; round < 40; round++) {
        for (let i = 0; i < 6; i++) await change();
        await git(dir, "add", "-A");
        await git(dir, "commit", "-q", "--allow-empty", "-m", `base ${round}`);
        const base = (await git(dir, "rev-parse", "HEAD")).trim();
        // One or two commits on top: the shape of an agent's branch.
        for (let c = 0; c < 1 + random(2); c++) {
          for (let i = 0; i < 1 + random(8); i++) await change();
          await git(dir, "add", "-A");
          await git(dir, "commit", "-q", "--allow-empty", "-m", `head ${round}.${c}`);
        }
        const head = (await git(dir, "rev-parse", "HEAD")).trim();
        await Deno.writeTextFile(log, "");
        const batched = await g.diffEntries(base, head);
        strictEqual((await calls(log)).filter((c) => c === "diff").length, 0, `round ${round}`);
        deepStrictEqual(batched, await plain.diffEntries(base, head), `round ${round}`);
        compared++;
        changed += batched.length;
      }
    } finally {
      await g.closeObjectBatch();
    }
    strictEqual(compared, 40);
    ok(changed > 100, `the rounds changed things (${changed} entries)`);
  });
});

Deno.test("diffEntries leaves submodules, an order file, crafted trees and merges to git diff", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    const rev = async (ref: string) => (await git(dir, "rev-parse", ref)).trim();
    await Deno.writeTextFile(join(dir, "f.txt"), "one\n");
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "base");
    const base = await rev("HEAD");
    const { env, log } = await loggingGit(tmp);
    const plain = new Git(dir, { env: mapEnv(env) });
    const g = new Git(dir, { env: mapEnv(env) });
    /** Asserts the batch's answer is git's and whether git diff was asked. */
    const same = async (what: string, from: string, to: string, askedGit: boolean) => {
      await Deno.writeTextFile(log, "");
      const batched = await g.diffEntries(from, to);
      strictEqual((await calls(log)).filter((c) => c === "diff").length, askedGit ? 1 : 0, what);
      deepStrictEqual(batched, await plain.diffEntries(from, to), what);
    };
    const commitTree = async (tree: string, parent: string, message: string) =>
      (await git(dir, "commit-tree", tree, "-p", parent, "-m", message)).trim();
    g.openObjectBatch();
    try {
      // A submodule (gitlink) added: whether git shows it depends on configuration.
      const blob = (await git(dir, "rev-parse", `${base}:f.txt`)).trim();
      const mktree = async (text: string) => {
        const child = new Deno.Command("git", {
          args: ["mktree"],
          cwd: dir,
          stdin: "piped",
          stdout: "piped",
        })
          .spawn();
        const w = child.stdin.getWriter();
        await w.write(new TextEncoder().encode(text));
        await w.close();
        return decoder.decode((await child.output()).stdout).trim();
      };
      const linkTree = await mktree(
        `100644 blob ${blob}\tf.txt\n160000 commit ${base}\tsub\n`,
      );
      await same("a submodule added", base, await commitTree(linkTree, base, "sub"), true);
      // A crafted tree git would not write (names out of order): git diff answers.
      const rawId = Uint8Array.from(
        { length: blob.length / 2 },
        (_, i) => parseInt(blob.slice(2 * i, 2 * i + 2), 16),
      );
      const entry = (name: string) => [...new TextEncoder().encode(`100644 ${name}\0`), ...rawId];
      await Deno.writeFile(join(tmp, "tree"), Uint8Array.from([...entry("z"), ...entry("a")]));
      const unsorted =
        (await git(dir, "hash-object", "-t", "tree", "-w", "--literally", join(tmp, "tree")))
          .trim();
      await same("an unsorted tree", base, await commitTree(unsorted, base, "unsorted"), true);
      // The same name twice (a file and a symlink), and a mode git does not write.
      const named = (mode: string, name: string) => [
        ...new TextEncoder().encode(`${mode} ${name}\0`),
        ...rawId,
      ];
      for (
        const [what, bytes] of [
          ["a name twice", [...named("100644", "v"), ...named("120000", "v")]],
          ["an odd mode", [...named("100664", "v")]],
        ] as const
      ) {
        await Deno.writeFile(join(tmp, "tree"), Uint8Array.from(bytes));
        const tree =
          (await git(dir, "hash-object", "-t", "tree", "-w", "--literally", join(tmp, "tree")))
            .trim();
        await same(what, base, await commitTree(tree, base, what), true);
      }
      // A plain change is served by the batch…
      await Deno.writeTextFile(join(dir, "f.txt"), "two\n");
      await git(dir, "commit", "-q", "-am", "two");
      const two = await rev("HEAD");
      await same("a plain change", base, two, false);
      // …unless the repository names an order file (git diff would reorder its answer).
      await Deno.writeTextFile(join(dir, "order.txt"), "f.txt\n");
      await git(dir, "config", "diff.orderFile", "order.txt");
      await same("an order file", base, two, true);
      await git(dir, "config", "--unset", "diff.orderFile");
      await same("no order file again", base, two, false);
      // A merge between base and head: the merge base is git's to find.
      await git(dir, "checkout", "-q", "-b", "side", base);
      await Deno.writeTextFile(join(dir, "s.txt"), "side\n");
      await git(dir, "add", "-A");
      await git(dir, "commit", "-q", "-m", "side");
      await git(dir, "checkout", "-q", "-");
      await git(dir, "merge", "-q", "--no-ff", "--no-edit", "side");
      await same("a merge inside", base, await rev("HEAD"), true);
      await same("diverged", await rev("side"), two, true);
    } finally {
      await g.closeObjectBatch();
    }
  });
});
