// The git calls a run saves per task: the repository config listed once per distinct content
// (`repoConfigPaths`), and git's auto maintenance left out of bernstein's commits and merges
// and run by `maintainAuto` instead. Each test shows the saved call still answers as before.
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../../src/orchestrator/mod.ts";
import { processEnv } from "../../src/io/mod.ts";
import { git, makeRepo, withTempDir } from "../_helpers/temp.ts";

Deno.test("repoConfigPaths answers for the config's current bytes, read again whenever they change", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    const config = join(dir, ".git", "config");
    const original = await Deno.readFile(config);
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), { included: [] });
    const hooked = new TextDecoder().decode(original) +
      `[core]\n\thooksPath = tools/hooks/\n[include]\n\tpath = shared.cfg\n` +
      `[includeIf "gitdir:${dir}/"]\n\tpath = ${dir}/conf/extra.cfg\n[include]\n\tpath = /etc/outside\n`;
    await Deno.writeTextFile(config, hooked);
    const planted = { hooksPath: "tools/hooks", included: ["shared.cfg", "conf/extra.cfg"] };
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), planted);
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), planted, "same bytes");
    // Back to the first bytes (same length is not enough: a one-byte change is read again).
    await Deno.writeFile(config, original);
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), { included: [] });
    await Deno.writeTextFile(config, hooked.replace("tools/hooks/", "tools/hookz/"));
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), {
      ...planted,
      hooksPath: "tools/hookz",
    });
    // A line git cannot parse: git refuses the repository itself, as when it read the file.
    await Deno.writeTextFile(config, `[core]\n\thooksPath = early\n[broken\n`);
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), { included: [] });
    await Deno.remove(config);
    deepStrictEqual(await g.repoConfigPaths(join(dir, ".git")), { included: [] }, "no file");
  });
});

/** Packs in the repository's object store (git's auto maintenance makes the first one). */
async function packCount(dir: string): Promise<number> {
  const names = await Array.fromAsync(Deno.readDir(join(dir, ".git", "objects", "pack")));
  return names.filter((e) => e.name.endsWith(".pack")).length;
}

/**
 * A repository whose next auto maintenance packs its objects: `gc.auto=1` (two loose objects
 * in the `17/` fan-out folder are enough) with enough blobs written, in the foreground.
 */
async function repoDueForMaintenance(dir: string): Promise<void> {
  await makeRepo(dir);
  await git(dir, "config", "gc.auto", "1");
  await git(dir, "config", "gc.autoDetach", "false");
  const blobs = join(dir, ".git", "blobs");
  await Deno.mkdir(blobs);
  const paths: string[] = [];
  for (let i = 0; i < 1500; i++) {
    paths.push(join(blobs, `b${i}`));
    await Deno.writeTextFile(paths[i], `blob ${i}\n`);
  }
  const out = await new Deno.Command("git", {
    args: ["hash-object", "-w", "--stdin-paths"],
    cwd: dir,
    stdin: "piped",
    stdout: "null",
  }).spawn();
  const writer = out.stdin.getWriter();
  await writer.write(new TextEncoder().encode(paths.join("\n") + "\n"));
  await writer.close();
  ok((await out.status).success);
  const fanOut = await Array.fromAsync(Deno.readDir(join(dir, ".git", "objects", "17")));
  ok(fanOut.length >= 2, "enough loose objects for gc.auto=1");
  strictEqual(await packCount(dir), 0);
}

Deno.test("bernstein's commit and merge leave git's auto maintenance to maintainAuto, which runs it", async () => {
  await withTempDir(async (tmp) => {
    const dir = join(tmp, "repo");
    await Deno.mkdir(dir);
    await repoDueForMaintenance(dir);
    const g = new Git(dir, { env: processEnv });
    const wt = join(tmp, "wt");
    await g.addWorktree(wt, "agent/s1", "HEAD");
    await Deno.writeTextFile(join(wt, "new.txt"), "hello\n");
    strictEqual(await g.commitChanges(wt, "agent work"), true);
    strictEqual(await g.commitChanges(wt, "nothing"), false, "a clean tree makes no commit");
    ok((await g.merge("agent/s1", "merge s1")).ok);
    strictEqual(await packCount(dir), 0, "no maintenance after the commit or the merge");
    await g.maintainAuto();
    ok(await packCount(dir) >= 1, "maintainAuto packed the loose objects");
  });
});

Deno.test("commitAll keeps git's auto maintenance (the check above can fail)", async () => {
  await withTempDir(async (dir) => {
    await repoDueForMaintenance(dir);
    const g = new Git(dir, { env: processEnv });
    await Deno.writeTextFile(join(dir, "f.txt"), "x");
    ok(await g.commitAll(dir, "with maintenance"));
    ok(await packCount(dir) >= 1);
  });
});

Deno.test("createBranch creates a branch only where none exists, in one step", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const g = new Git(dir, { env: processEnv });
    const head = await g.revParse("HEAD");
    strictEqual(await g.createBranch("agent/new", "HEAD"), true);
    strictEqual(await g.revParse("agent/new"), head);
    await Deno.writeTextFile(join(dir, "f.txt"), "x");
    const later = await g.commitAll(dir, "later") as string;
    strictEqual(await g.createBranch("agent/new", later), false, "an existing branch");
    strictEqual(await g.revParse("agent/new"), head, "left where it was");
    strictEqual(await g.createBranch("feature", head), false, "the checked-out branch");
    strictEqual(await g.revParse("feature"), later);
    await rejects(g.createBranch("agent/bad", "no-such-commit"), /update-ref/);
    strictEqual(await g.refExists("refs/heads/agent/bad"), false);
    await rejects(g.createBranch("agent/..", head), /update-ref/, "a name git refuses");
  });
});
