/**
 * Where agents' worktrees live: `workspace.worktrees_dir` (relative to the project root, or
 * absolute), else `.sdd/worktrees`. A configured folder is created when missing and refused,
 * before anything starts, when it would hold or sit among other checkouts: the project itself
 * inside it, inside the repository's git folder, or inside another repository's work tree
 * (another clone, or another worktree of this one — agents' checkouts would show up there as
 * untracked folders). Inside this project's work tree it is added to git's `info/exclude`, as
 * `.sdd/worktrees/` is, so git never shows or stages it.
 */
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { type Config, type ConfigProblem, excludeFromGit } from "../config/mod.ts";
import { ConfigError } from "../config/mod.ts";
import { resolveInside, sddFolder } from "../io/mod.ts";

/** The folder, as configured (absolute, not yet resolved through links). */
export function worktreesDirOf(config: Config, project: { root: string; sdd: string }): string {
  const configured = config.workspace?.worktrees_dir;
  return configured === undefined
    ? sddFolder(project.sdd, "worktrees")
    : resolve(project.root, configured);
}

function isInside(parent: string, path: string): boolean {
  const rel = relative(parent, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The real path of `path`: its nearest existing ancestor through links, the rest as written. */
async function realPathOf(path: string): Promise<string> {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      const real = await Deno.realPath(at);
      return rest.length === 0 ? real : join(real, ...rest);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const parent = dirname(at);
      if (parent === at) return path;
      rest.unshift(relative(parent, at));
      at = parent;
    }
  }
}

/** The nearest folder at or above `path` holding a `.git` entry (a work tree's top), if any. */
async function workTreeTop(path: string): Promise<string | undefined> {
  for (let at = path;; at = dirname(at)) {
    const found = await Deno.lstat(join(at, ".git")).then(() => true, () => false);
    if (found) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * Why the configured folder cannot hold worktrees (empty when it can, or when none is
 * configured). Reads the file system, writes nothing.
 */
export async function worktreesDirProblems(
  config: Config,
  project: { root: string; sdd: string; gitDir?: string },
  locate: (dotted: string, value?: boolean) => string | undefined,
): Promise<ConfigProblem[]> {
  const configured = config.workspace?.worktrees_dir;
  if (configured === undefined) return [];
  const refuse = (why: string): ConfigProblem[] => [{
    severity: "error",
    code: "config.worktrees_dir_refused",
    message: `workspace.worktrees_dir '${configured}': ${why}`,
    location: locate("workspace.worktrees_dir", true) ?? "effective configuration",
  }];
  const root = await Deno.realPath(project.root);
  const dir = await realPathOf(resolve(project.root, configured));
  if (isInside(dir, root)) return refuse(`the project (${root}) would be inside it`);
  const gitDir = project.gitDir === undefined ? undefined : await realPathOf(project.gitDir);
  if (gitDir !== undefined && isInside(gitDir, dir)) {
    return refuse(`it is inside the repository's git folder (${gitDir})`);
  }
  const info = await Deno.stat(dir).catch(() => undefined);
  if (info !== undefined && !info.isDirectory) return refuse("it exists and is not a folder");
  const top = await workTreeTop(await realPathOf(dir));
  if (top !== undefined && (await Deno.realPath(top)) !== root) {
    return refuse(
      `it is inside another repository's work tree (${top}); agents' checkouts would show ` +
        "up there as untracked folders. Choose a folder outside any work tree, or inside this one",
    );
  }
  return [];
}

/**
 * Makes the folder ready for a run and returns its real path: refused as
 * {@linkcode worktreesDirProblems} says (exit 2), created when missing, excluded from git when
 * inside the work tree. The default `.sdd/worktrees` must stay inside the project (a symlink
 * planted there does not move agents' work elsewhere).
 */
export async function prepareWorktreesDir(
  config: Config,
  project: { root: string; sdd: string; gitDir?: string },
  locate: (dotted: string, value?: boolean) => string | undefined,
): Promise<string> {
  const wanted = worktreesDirOf(config, project);
  if (config.workspace?.worktrees_dir === undefined) {
    await Deno.mkdir(wanted, { recursive: true });
    return await resolveInside(project.root, wanted);
  }
  const [problem] = await worktreesDirProblems(config, project, locate);
  if (problem !== undefined) {
    throw new ConfigError(problem.code, problem.message, { location: problem.location });
  }
  await Deno.mkdir(wanted, { recursive: true });
  const real = await Deno.realPath(wanted);
  const root = await Deno.realPath(project.root);
  const sdd = await realPathOf(project.sdd);
  if (isInside(root, real) && !isInside(sdd, real) && project.gitDir !== undefined) {
    await excludeFromGit(project.gitDir, [`/${relative(root, real)}/`]);
  }
  return real;
}
