import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../../src/orchestrator/mod.ts";
import { processEnv } from "../../src/io/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

Deno.test("worktree, commit, changed paths and a clean merge into the checked-out branch", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    strictEqual(await g.currentBranch(), "feature");
    strictEqual(await g.defaultBranch(), "main");
    const wt = join(dir, ".sdd", "worktrees", "s1");
    await g.addWorktree(wt, "agent/s1", "HEAD");
    await Deno.writeTextFile(join(wt, "new.txt"), "hello\n");
    await Deno.writeTextFile(join(wt, "README.md"), "# changed\n");
    strictEqual(await g.commitAll(wt, "agent work"), await g.revParse("agent/s1"));
    strictEqual(await g.commitAll(wt, "nothing"), undefined, "a clean tree makes no commit");
    deepStrictEqual(await g.changedPaths("feature", "agent/s1"), [
      { status: "M", path: "README.md" },
      { status: "A", path: "new.txt" },
    ]);
    const merged = await g.merge("agent/s1", "merge s1");
    ok(merged.ok);
    strictEqual(await Deno.readTextFile(join(dir, "new.txt")), "hello\n");
    strictEqual(new TextDecoder().decode(await g.showFile("HEAD", "new.txt")), "hello\n");
    await g.removeWorktree(wt);
    await g.deleteBranch("agent/s1");
    strictEqual(await g.refExists("refs/heads/agent/s1"), false);
  });
});

Deno.test("a conflicting merge is aborted, names the files, and keeps the branch", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    const wt = join(tmp, "wt");
    await g.addWorktree(wt, "agent/s2", "HEAD");
    await Deno.writeTextFile(join(wt, "README.md"), "agent version\n");
    await g.commitAll(wt, "agent");
    await Deno.writeTextFile(join(dir, "README.md"), "operator version\n");
    await git(dir, "commit", "-qam", "operator");
    const before = await g.revParse("HEAD");
    const r = await g.merge("agent/s2", "merge s2");
    strictEqual(r.ok, false);
    if (!r.ok) {
      strictEqual(r.reason, "conflict");
      if (r.reason === "conflict") deepStrictEqual(r.conflicts, ["README.md"]);
    }
    strictEqual(await g.revParse("HEAD"), before);
    strictEqual(await g.isDirty(), false, "the aborted merge leaves the tree as it was");
    ok(await g.refExists("refs/heads/agent/s2"));
  });
});

Deno.test("repository hooks do not run during bernstein's commits and merges", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const hook = join(dir, ".git", "hooks", "pre-commit");
    await Deno.writeTextFile(hook, `#!/bin/sh\ntouch ${join(dir, "hook-ran")}\nexit 1\n`);
    await Deno.chmod(hook, 0o755);
    const g = new Git(dir, { env: processEnv });
    await Deno.writeTextFile(join(dir, "f.txt"), "x");
    ok(await g.commitAll(dir, "no hooks"));
    strictEqual(await Deno.stat(join(dir, "hook-ran")).then(() => true, () => false), false);
  });
});

Deno.test("defaultBranch follows init.defaultBranch and falls back to master", async () => {
  await withTempDir(async (dir) => {
    await git(dir, "init", "-q", "-b", "master");
    await Deno.writeTextFile(join(dir, "a"), "a");
    await git(dir, "add", "-A");
    await git(dir, "commit", "-qm", "a");
    const g = new Git(dir, { env: processEnv });
    strictEqual(await g.defaultBranch(), "master");
    await git(dir, "branch", "trunk");
    await git(dir, "config", "init.defaultBranch", "trunk");
    strictEqual(await g.defaultBranch(), "trunk");
  });
});

Deno.test("the branch guard counts tracked edits but not run configuration or state, renames included", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await Deno.mkdir(join(dir, ".sdd"), { recursive: true });
    await Deno.mkdir(join(dir, "src"), { recursive: true });
    for (const f of ["bernstein.yaml", ".sdd/config.yaml", ".mcp.json", "src/a.ts", "src/b.ts"]) {
      await Deno.writeTextFile(join(dir, f), "x: 1\n");
    }
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "tracked config and state");
    const g = new Git(dir, { env: processEnv });
    for (const f of ["bernstein.yaml", ".sdd/config.yaml", ".mcp.json"]) {
      await Deno.writeTextFile(join(dir, f), "x: 2\n");
    }
    await Deno.writeTextFile(join(dir, "untracked.txt"), "new\n");
    strictEqual(await g.isDirty(undefined, true), false, "config, state and untracked files");
    strictEqual(await g.isDirty(), true, "the full question still sees them");
    await git(dir, "mv", "src/a.ts", "src/renamed name.ts");
    deepStrictEqual(
      (await g.changedTrackedPaths()).filter((p) => p.startsWith("src/")).sort(),
      ["src/a.ts", "src/renamed name.ts"],
    );
    strictEqual(await g.isDirty(undefined, true), true, "a rename of a source file counts");
  });
});

Deno.test("worktrees made and removed together: each gets the whole tree, removal leaves nothing, a link's target survives", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    for (let i = 0; i < 20; i++) await Deno.writeTextFile(join(dir, `f${i}.txt`), `${i}\n`);
    await git(dir, "add", "-A");
    await git(dir, "commit", "-qm", "files");
    const outside = join(tmp, "outside");
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "keep.txt"), "keep\n");
    const g = new Git(dir, { env: processEnv });
    const names = Array.from({ length: 6 }, (_, i) => `w${i}`);
    await Promise.all(names.map((n) => g.addWorktree(join(tmp, n), `agent/${n}`, "HEAD")));
    for (const n of names) {
      strictEqual(await Deno.readTextFile(join(tmp, n, "f19.txt")), "19\n");
      strictEqual(await g.isDirty(join(tmp, n)), false, `${n} is a clean checkout`);
      await Deno.mkdir(join(tmp, n, "deep", "er"), { recursive: true });
      await Deno.writeTextFile(join(tmp, n, "deep", "er", "untracked.txt"), "x\n");
      await Deno.symlink(outside, join(tmp, n, "link"));
    }
    await Promise.all(names.map((n) => g.removeWorktree(join(tmp, n), true)));
    for (const n of names) {
      strictEqual(await Deno.lstat(join(tmp, n)).then(() => true, () => false), false, n);
    }
    strictEqual(
      (await g.text(["worktree", "list", "--porcelain"])).match(/^worktree /gm)?.length,
      1,
    );
    strictEqual(await Deno.readTextFile(join(outside, "keep.txt")), "keep\n");
  });
});

Deno.test("a forced worktree removal empties nothing but a linked worktree: the main work tree and look-alikes are left whole", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    await rejects(() => g.removeWorktree(dir, true));
    strictEqual(await Deno.readTextFile(join(dir, "README.md")).then(() => true), true);
    // A folder whose .git file names a real worktree's admin folder, which points elsewhere.
    const real = join(tmp, "real");
    await g.addWorktree(real, "agent/real", "HEAD");
    const fake = join(tmp, "fake");
    await Deno.mkdir(fake);
    await Deno.writeTextFile(join(fake, ".git"), await Deno.readTextFile(join(real, ".git")));
    await Deno.writeTextFile(join(fake, "precious.txt"), "mine\n");
    await g.removeWorktree(fake, true).catch(() => {});
    strictEqual(await Deno.readTextFile(join(fake, "precious.txt")), "mine\n");
    ok(await Deno.lstat(join(real, "README.md")));
  });
});

Deno.test("a forced branch deletion leaves .git/config alone (the same file: a sandbox mounts over that path)", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    const wt = join(dir, ".sdd", "worktrees", "s3");
    await g.addWorktree(wt, "agent/s3", "HEAD");
    await g.removeWorktree(wt, true);
    const before = await Deno.stat(join(dir, ".git", "config"));
    await g.deleteBranch("agent/s3", true);
    strictEqual(await g.refExists("refs/heads/agent/s3"), false);
    const after = await Deno.stat(join(dir, ".git", "config"));
    strictEqual(after.ino, before.ino, "git branch -D would have replaced the file");
  });
});
