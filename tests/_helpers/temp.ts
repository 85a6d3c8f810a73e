// Temporary directories and git repositories for tests.
import { basename, dirname, join } from "node:path";

/**
 * Creates a temp dir, runs `fn`, removes the dir and what the test kept beside it: files and
 * folders named after it (`<dir>.audit.key`, `<dir>.keys/`, `<dir>-auth.token` …), which tests
 * put outside the project on purpose (keys and tokens an agent must not reach).
 */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-test-" }));
  try {
    return await fn(dir);
  } finally {
    await removeWithSiblings(dir);
  }
}

/**
 * Removes `dir` and every entry of its parent named `<name of dir>.…` or `<name of dir>-…`. The
 * name ends in random characters (Deno.makeTempDir), so nothing of another test matches.
 */
export async function removeWithSiblings(dir: string): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const parent = dirname(dir);
  const name = basename(dir);
  for await (const entry of Deno.readDir(parent)) {
    if (entry.name.startsWith(`${name}.`) || entry.name.startsWith(`${name}-`)) {
      await Deno.remove(join(parent, entry.name), { recursive: true }).catch(() => {});
    }
  }
}

/** Runs git in `cwd` and returns stdout; throws with stderr on failure. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: {
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.invalid",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.invalid",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: cwd,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Creates a git repository with one commit on `main` and a checked-out `feature` branch. */
export async function makeRepo(dir: string): Promise<string> {
  await git(dir, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(dir, "README.md"), "# test repo\n");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "initial");
  await git(dir, "checkout", "-q", "-b", "feature");
  return dir;
}
