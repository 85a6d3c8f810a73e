// workspace.worktrees_dir in real runs (scripted agent, real git, the sandbox where bwrap works):
// agents work in worktrees under the configured folder — outside the project, or inside it and
// kept out of git — the work merges, the folder is left clean; a folder that would sit inside
// another repository's work tree, inside the git folder, or hold the project is refused before
// anything starts, at its key.
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { probeSandbox } from "../../src/sandbox/mod.ts";
import { git, withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, step, summaryOf } from "./_run_helpers.ts";

// The agent records where it ran (its working directory), and that file merges.
const WHERE = `cli: scripted
stages:
  - name: s
    steps:
${step("Say where", ["@agent run sh -c 'pwd > where.txt'"])}
`;

const probe = await probeSandbox();
const noSandbox = probe.available ? "" : ` [skipped: ${probe.reason}]`;

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("worktrees_dir outside the project: created, the agent works there, the work merges, nothing is left", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await prepareRepo(repo, WHERE, { workspace: { worktrees_dir: "../wts" } });
    const run = await bern(repo, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr);
    strictEqual(summaryOf(run).health, "HEALTHY");
    const wts = await Deno.realPath(join(dir, "wts"));
    const where = (await Deno.readTextFile(join(repo, "where.txt"))).trim();
    ok(where.startsWith(wts + "/"), `the agent ran in ${where}, not under ${wts}`);
    // The worktree was removed after the merge; none was made under .sdd.
    await Deno.stat(where).then(() => ok(false, `${where} left behind`), () => {});
    const underSdd = await entries(join(repo, ".sdd", "worktrees")).catch(() => []);
    strictEqual(underSdd.length, 0, `.sdd/worktrees holds ${underSdd.join(", ")}`);
    strictEqual((await git(repo, "worktree", "list")).trim().split("\n").length, 1);
  });
});

Deno.test("worktrees_dir inside the project: git never shows it, the tree stays clean for the next run", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(dir, WHERE, { workspace: { worktrees_dir: ".wt" } });
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    strictEqual(run.code, 0, run.stderr);
    const where = (await Deno.readTextFile(join(dir, "where.txt"))).trim();
    ok(where.startsWith(join(await Deno.realPath(dir), ".wt") + "/"), where);
    const exclude = await Deno.readTextFile(join(dir, ".git", "info", "exclude"));
    ok(exclude.split("\n").includes("/.wt/"), exclude);
    // A worktree left in the folder (an interrupted agent's) is not an untracked change.
    await Deno.mkdir(join(dir, ".wt", "leftover"), { recursive: true });
    await Deno.writeTextFile(join(dir, ".wt", "leftover", "x.txt"), "x\n");
    strictEqual(await git(dir, "status", "--porcelain", "--untracked-files=all", "--", ".wt"), "");
  });
});

Deno.test("worktrees_dir is refused at its key before anything starts: another work tree, the git folder, around the project", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    const other = join(dir, "other");
    await Deno.mkdir(repo);
    await Deno.mkdir(other);
    await git(other, "init", "-q");
    await prepareRepo(repo, WHERE);
    const cases: [string, string][] = [
      ["../other/wts", "inside another repository's work tree"],
      [".git/wts", "inside the repository's git folder"],
      ["..", "the project"],
    ];
    for (const [value, why] of cases) {
      await Deno.writeTextFile(
        join(repo, ".sdd", "config.yaml"),
        `cli: scripted\nworkspace:\n  worktrees_dir: ${value}\n`,
      );
      const validate = await bern(repo, ["config", "validate"]);
      strictEqual(validate.code, 1, `${value}: ${validate.stderr}`);
      ok(
        validate.stderr.includes(
          `error[config.worktrees_dir_refused]: .sdd/config.yaml:3:18: workspace.worktrees_dir '${value}'`,
        ),
        validate.stderr,
      );
      ok(validate.stderr.includes(why), validate.stderr);
      const dry = await bern(repo, ["run", "plan.yaml", "--dry-run"]);
      strictEqual(dry.code, 2, `${value}: ${dry.stderr}`);
      ok(dry.stderr.includes("config.worktrees_dir_refused"), dry.stderr);
    }
    // Nothing was created: not the folder in the other repository, not one in .git.
    await Deno.stat(join(other, "wts")).then(
      () => ok(false, "created in the other repo"),
      () => {},
    );
    await Deno.stat(join(repo, ".git", "wts")).then(() => ok(false, "created in .git"), () => {});
    // A file where the folder should be is refused too; a plain folder elsewhere is fine.
    await Deno.writeTextFile(join(dir, "afile"), "x\n");
    await Deno.writeTextFile(
      join(repo, ".sdd", "config.yaml"),
      "cli: scripted\nworkspace:\n  worktrees_dir: ../afile\n",
    );
    const file = await bern(repo, ["config", "validate"]);
    ok(file.stderr.includes("it exists and is not a folder"), file.stderr);
    await Deno.writeTextFile(
      join(repo, ".sdd", "config.yaml"),
      "cli: scripted\nworkspace:\n  worktrees_dir: ../fine\n",
    );
    const fine = await bern(repo, ["config", "validate"]);
    strictEqual(fine.code, 0, fine.stderr);
    // doctor measures the disk the worktrees will go to (the folder's nearest existing parent).
    const doctor = await bern(repo, ["doctor", "--json"]);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] })
      .checks;
    const disk = checks.find((c) => c.name === "disk");
    ok(disk?.detail.endsWith(`(worktrees folder ${await Deno.realPath(dir)})`), disk?.detail);
  });
});

Deno.test({
  name: "a sandboxed agent sees its own worktree in worktrees_dir and no other" + noSandbox,
  ignore: !probe.available,
  fn: async () => {
    await withTempDir(async (dir) => {
      const repo = join(dir, "repo");
      await Deno.mkdir(repo);
      // Another agent's checkout (with its work) sits in the folder; a hostile agent looks.
      await Deno.mkdir(join(dir, "wts", "other-session"), { recursive: true });
      await Deno.writeTextFile(join(dir, "wts", "other-session", "secret.txt"), "theirs\n");
      const plan = `cli: scripted
stages:
  - name: s
    steps:
${
        step("Look around", [
          "@agent run sh -c 'ls -a .. > seen.txt; cat ../other-session/secret.txt > stolen.txt || true'",
        ])
      }
`;
      // The folder around everything is shown read-only: the worktrees folder must stay hidden.
      await prepareRepo(repo, plan, {
        workspace: { worktrees_dir: "../wts" },
        sandbox: { read_only: [dir] },
      });
      const run = await bern(repo, ["run", "plan.yaml", "--json"]);
      strictEqual(run.code, 0, run.stderr);
      const seen = (await Deno.readTextFile(join(repo, "seen.txt"))).trim().split("\n");
      strictEqual(seen.length, 3, `the agent saw ${seen.join(", ")}`);
      ok(!seen.includes("other-session"), seen.join(", "));
      strictEqual(await Deno.readTextFile(join(repo, "stolen.txt")), "");
      // The other checkout is untouched.
      strictEqual(
        await Deno.readTextFile(join(dir, "wts", "other-session", "secret.txt")),
        "theirs\n",
      );
    });
  },
});
