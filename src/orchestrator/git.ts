// The git operations of a run (worktrees, diffs, merges, commits) behind one class that always
// runs git with a safe environment and configuration an agent cannot change.

import { resolve } from "node:path";
import { bytesEqual } from "../canonical/mod.ts";
import { isRunConfigPath } from "../config/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import {
  buildChildEnv,
  type EnvReader,
  outputText,
  type ProcessResult,
  runProcess,
} from "../io/mod.ts";
import { batchName, batchRefName, GitObjectBatch } from "./_git_objects.ts";
import { diffTrees } from "./_tree_diff.ts";

/** A git command failed. */
export class GitError extends BernsteinError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super("git.failed", message, options);
  }
}

/** Who commits and merges on behalf of bernstein. */
export interface GitIdentity {
  /** user.name */
  name: string;
  /** user.email */
  email: string;
}

/** Options for {@linkcode Git}. */
export interface GitOptions {
  /** Environment the git child may see (PATH, HOME, locale only). */
  env: EnvReader;
  /** Author and committer of bernstein's own commits. */
  identity?: GitIdentity;
  /** Deadline per git command (default 120 s). */
  timeoutMs?: number;
  /** More variables for every git child (a worker's `GIT_CONFIG_*` auth header). */
  extraEnv?: Readonly<Record<string, string>>;
  /**
   * Transports this instance may use (`file`, `http`, `https`): the worker git remote. Every
   * other Git has none (`protocol.allow=never`); URLs are always passed explicitly, never read
   * from a configured remote an agent could rewrite.
   */
  transport?: readonly ("file" | "http" | "https")[];
}

/** One changed path between two commits. */
export interface ChangedPath {
  /** `A`dded, `M`odified, `D`eleted, `R`enamed, `C`opied, `T`ype change. */
  status: string;
  /** Path after the change (repo-relative, POSIX). */
  path: string;
}

/** One changed path with its modes (`git diff --raw`). */
export interface DiffEntry extends ChangedPath {
  /** Mode before (`000000` when added), e.g. `100644`, `100755`, `120000` (symlink). */
  oldMode: string;
  /** Mode after (`000000` when deleted). */
  newMode: string;
}

/** Result of a merge attempt. */
export type MergeOutcome =
  | { ok: true; sha: string }
  | { ok: false; reason: "conflict"; conflicts: string[]; output: string }
  | { ok: false; reason: "failed"; output: string };

const GIT_ENV = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "SYSTEMROOT"];

/**
 * The environment every git call of bernstein's gets on top of PATH/HOME/locale: no system or
 * global config (a planted `~/.gitconfig` or `/etc/gitconfig` setting is never read), no system
 * attributes, no replace refs or grafts (an agent's `refs/replace/*` must not change what a
 * merge reads), no prompts, pagers or editors.
 */
export const SAFE_GIT_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_NO_REPLACE_OBJECTS: "1",
  GIT_GRAFT_FILE: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "/bin/false",
  SSH_ASKPASS: "/bin/false",
  GIT_EDITOR: "true",
  GIT_SEQUENCE_EDITOR: "true",
  GIT_PAGER: "cat",
  GIT_PROTOCOL_FROM_USER: "0",
  LC_ALL: "C",
};

/**
 * `-c` settings before every git call of bernstein's. Command-line settings win over every
 * config file (includes too), so a setting an agent planted in the repository's `.git/config`
 * that would run a program — fsmonitor, hooks, a pager, an editor, gpg, ssh, a credential
 * helper, an external diff, a pack hook — never runs inside the orchestrator. Transport is off
 * entirely (bernstein never fetches), so `protocol.file.allow` and friends cannot matter.
 * Attribute-driven filter, diff and merge drivers are named by the repository itself; they are
 * kept out by the repository-state check (git_guard.ts) and, under the sandbox, by a
 * read-only `.git`.
 */
export const SAFE_GIT_CONFIG: readonly string[] = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.pager=cat",
  "core.editor=true",
  "core.askPass=/bin/false",
  "core.sshCommand=/bin/false",
  "core.gitProxy=",
  "core.alternateRefsCommand=",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  "sequence.editor=true",
  "commit.gpgsign=false",
  "tag.gpgsign=false",
  "gpg.program=/bin/false",
  "credential.helper=",
  "diff.external=",
  "uploadpack.packObjectsHook=",
  "protocol.allow=never",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
];

/**
 * Before a commit or merge of bernstein's: git would start `git maintenance run --auto` after
 * each (one more process per commit and per merge); the merge queue runs it every few merges
 * instead ({@linkcode Git.maintainAuto}).
 */
const NO_AUTO_MAINTENANCE: readonly string[] = ["-c", "maintenance.auto=false"];

/** Most commits `Git.commitTexts` walks through the object batch before leaving it to rev-list. */
const CHAIN_WALK_LIMIT = 256;

/**
 * A commit's one parent as git reads it (the `parent <id>` lines right after the `tree` line,
 * ids of `idLength` lowercase hex digits), or undefined: no parent, several, or a header of
 * another shape.
 */
function soleParent(bytes: Uint8Array, idLength: number): string | undefined {
  // tree line, parent line, and the start of the line after: all ASCII when well formed.
  const head = new TextDecoder().decode(bytes.subarray(0, 3 * (idLength + 8)));
  const [tree, parent, next] = head.split("\n");
  const hex = new RegExp(`^[0-9a-f]{${idLength}}$`);
  if (!tree.startsWith("tree ") || !hex.test(tree.slice(5))) return undefined;
  if (parent === undefined || !parent.startsWith("parent ")) return undefined;
  const id = parent.slice(7);
  if (!hex.test(id) || next === undefined || next.startsWith("parent ")) return undefined;
  return id;
}

/** Per repository root: the tail of its worktree-change and fetch queue (see `Git.exclusive`). */
const REPOSITORY_QUEUES = new Map<string, Promise<unknown>>();

/**
 * A small argv-only wrapper over the git CLI for one repository. Every call runs with
 * {@linkcode SAFE_GIT_ENV} and {@linkcode SAFE_GIT_CONFIG}, so nothing the repository's config
 * (or an agent that wrote it) names is executed by bernstein; commits and merges run without
 * hooks: the quality gates are the configured checks, and a repository hook must not run
 * unsupervised inside an orchestrated merge.
 */
export class Git {
  /** Repository (or worktree) root the commands run in by default. */
  readonly root: string;
  readonly #env: Record<string, string>;
  readonly #identity: GitIdentity;
  readonly #timeoutMs: number;
  readonly #transport: string[];
  /** The repository config's bytes git last listed, and its listing (`repoConfigPaths`). */
  #configSeen: { bytes: Uint8Array; listing: string } | undefined;
  /** The run-long object reader, while open (`openObjectBatch`). */
  #objects: GitObjectBatch | undefined;

  constructor(root: string, options: GitOptions) {
    this.root = root;
    this.#env = buildChildEnv(GIT_ENV, options.env, { ...SAFE_GIT_ENV, ...options.extraEnv });
    this.#identity = options.identity ?? { name: "bernstein", email: "bernstein@localhost" };
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    this.#transport = (options.transport ?? []).flatMap((p) => [
      "-c",
      `protocol.${p}.allow=always`,
    ]);
  }

  /** The argv of one call: the fixed safe settings, bernstein's identity, then `args`. */
  argv(args: readonly string[]): string[] {
    return [
      "git",
      ...SAFE_GIT_CONFIG.flatMap((setting) => ["-c", setting]),
      ...this.#transport,
      "-c",
      `user.name=${this.#identity.name}`,
      "-c",
      `user.email=${this.#identity.email}`,
      ...args,
    ];
  }

  /** Runs `git ARGS` in `cwd` (default: the root); throws {@linkcode GitError} on failure. */
  async run(
    args: readonly string[],
    options: { cwd?: string; allowFailure?: boolean; stdin?: Uint8Array } = {},
  ): Promise<ProcessResult> {
    const result = await runProcess(this.argv(args), {
      cwd: options.cwd ?? this.root,
      stdin: options.stdin,
      env: this.#env,
      timeoutMs: this.#timeoutMs,
      // A run starts ~15 git commands per task: spawning them must not fork the orchestrator.
      group: "setsid",
    });
    if (result.code !== 0 && !options.allowFailure) {
      const detail = outputText(result.stderr).trim().split("\n").slice(-3).join(" | ");
      throw new GitError(
        `git ${args.join(" ")} failed (exit ${result.code})${
          result.timedOut ? " after its deadline" : ""
        }: ${detail}`,
      );
    }
    return result;
  }

  /**
   * From now on blobs at a commit and commits' bytes are read through one `git cat-file --batch`
   * (started at the first read) instead of a git process per read, until
   * {@linkcode Git.closeObjectBatch}. The batch answers only an object of the type asked for
   * whose bytes hash to its id, named by a full commit id; every other read, and every read it
   * cannot answer, runs the per-call command as before. A run opens it for its gates and merges.
   */
  openObjectBatch(): void {
    this.#objects ??= new GitObjectBatch(() => {
      const argv = this.argv(["cat-file", "--batch"]);
      return new Deno.Command(argv[0], {
        args: argv.slice(1),
        cwd: this.root,
        env: this.#env,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
    }, this.#timeoutMs);
  }

  /** Ends the object batch (waits for its reads and its process); per-call reads from now on. */
  async closeObjectBatch(): Promise<void> {
    const objects = this.#objects;
    this.#objects = undefined;
    await objects?.close();
  }

  /** `commit` or `commit:path` from the object batch, if open and able to answer (see above). */
  async #fromBatch(
    type: "blob" | "commit",
    commit: string,
    path?: string,
  ): Promise<Uint8Array | undefined> {
    const name = this.#objects === undefined ? undefined : batchName(commit, path);
    return name === undefined ? undefined : await this.#objects?.read(name, type);
  }

  /**
   * One value of the operator's global git config (`~/.gitconfig`), which every other call
   * ignores. Reading config runs nothing, so this is the one call that may see it.
   */
  async globalConfig(key: string): Promise<string | undefined> {
    const env = { ...this.#env };
    delete env.GIT_CONFIG_GLOBAL;
    const r = await runProcess(["git", "config", "--global", "--get", key], {
      cwd: this.root,
      env,
      timeoutMs: this.#timeoutMs,
    });
    const value = outputText(r.stdout).trim();
    return r.code === 0 && value !== "" ? value : undefined;
  }

  /** Trimmed stdout of a git command. */
  async text(args: readonly string[], cwd?: string): Promise<string> {
    return outputText((await this.run(args, { cwd })).stdout).trim();
  }

  /** `git --version`, e.g. `2.39.5`. */
  async version(): Promise<string> {
    return (await this.text(["--version"])).replace(/^git version\s+/, "");
  }

  /** The checked-out branch, or undefined when HEAD is detached. */
  async currentBranch(cwd?: string): Promise<string | undefined> {
    const r = await this.run(["symbolic-ref", "--quiet", "--short", "HEAD"], {
      cwd,
      allowFailure: true,
    });
    return r.code === 0 ? outputText(r.stdout).trim() : undefined;
  }

  /**
   * The repository's default branch: `origin/HEAD` when a remote says so, else
   * `init.defaultBranch`, else whichever of `main`/`master` exists.
   */
  async defaultBranch(): Promise<string> {
    const remote = await this.run([
      "symbolic-ref",
      "--quiet",
      "--short",
      "refs/remotes/origin/HEAD",
    ], { allowFailure: true });
    if (remote.code === 0) return outputText(remote.stdout).trim().replace(/^origin\//, "");
    const configured = await this.run(["config", "--get", "init.defaultBranch"], {
      allowFailure: true,
    });
    const name = (configured.code === 0 ? outputText(configured.stdout).trim() : "") ||
      (await this.globalConfig("init.defaultBranch") ?? "");
    if (name !== "" && (await this.refExists(`refs/heads/${name}`))) return name;
    for (const candidate of ["main", "master"]) {
      if (await this.refExists(`refs/heads/${candidate}`)) return candidate;
    }
    return name || "main";
  }

  /** True when a ref exists. */
  async refExists(ref: string): Promise<boolean> {
    return (await this.run(["rev-parse", "--verify", "--quiet", ref], { allowFailure: true }))
      .code === 0;
  }

  /**
   * The commit id a ref points at. At the root, with the object batch open, a plain ref name is
   * resolved there (the same resolution, refs read afresh at each ask; the commit's bytes are
   * checked against its id); otherwise, or when it cannot answer, by `git rev-parse --verify`.
   */
  async revParse(ref: string, cwd?: string): Promise<string> {
    const name = this.#objects === undefined || (cwd !== undefined && cwd !== this.root)
      ? undefined
      : batchRefName(ref);
    const found = name === undefined ? undefined : await this.#objects?.readObject(name, "commit");
    return found?.id ?? await this.text(["rev-parse", "--verify", `${ref}^{commit}`], cwd);
  }

  /**
   * True when the work tree or index has changes. With `trackedOnly` (the branch guard's
   * question: would merges mix with local edits?) untracked files and edits to run
   * configuration and state (`isRunConfigPath`: bernstein.yaml, `.sdd/`, … — merges never
   * touch them, the run_config gate sees to that) do not count.
   */
  async isDirty(cwd?: string, trackedOnly = false): Promise<boolean> {
    if (!trackedOnly) {
      return (await this.text(["status", "--porcelain", "--untracked-files=all"], cwd)) !== "";
    }
    return (await this.changedTrackedPaths(cwd)).some((p) => !isRunConfigPath(p));
  }

  /** Repo-relative paths of tracked files changed in the index or work tree (both rename sides). */
  async changedTrackedPaths(cwd?: string): Promise<string[]> {
    const r = await this.run(["status", "--porcelain=v1", "-z", "--untracked-files=no"], { cwd });
    const fields = outputText(r.stdout).split("\0");
    const paths: string[] = [];
    for (let i = 0; i < fields.length; i++) {
      const entry = fields[i];
      if (entry.length < 4) continue;
      paths.push(entry.slice(3));
      // A rename or copy is followed by its source path as a field of its own.
      if (entry[0] === "R" || entry[0] === "C") paths.push(fields[++i] ?? "");
    }
    return paths;
  }

  /**
   * Runs worktree bookkeeping one at a time: concurrent `git worktree add` calls race on
   * `.git/worktrees/` (git 2.39 fails with "failed to read …/commondir").
   */
  #worktreeOps(fn: () => Promise<void>): Promise<void> {
    return this.exclusive(fn);
  }

  /**
   * Runs `fn` alone among the worktree changes and fetches of every `Git` of this repository
   * root in this process: a fetch must never meet a half-made or half-removed worktree.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const queue = REPOSITORY_QUEUES.get(this.root) ?? Promise.resolve();
    const next = queue.then(fn);
    REPOSITORY_QUEUES.set(this.root, next.catch(() => {}));
    return next;
  }

  /**
   * Creates a worktree at `path` on a new branch `branch` starting at `base`. Only the
   * registration waits in the worktree queue; the files are written afterwards, beside other
   * worktrees' changes (see {@linkcode Git.#populate}).
   */
  async addWorktree(path: string, branch: string, base: string): Promise<void> {
    await this.#worktreeOps(async () => {
      await this.run(["worktree", "add", "--quiet", "--no-checkout", "-b", branch, path, base]);
    });
    await this.#populate(path);
  }

  /**
   * Creates branch `branch` at `base` only if no such branch exists (one atomic `update-ref`
   * with an empty old value): true when created, false when it was already there. Then
   * {@linkcode Git.checkoutWorktree} needs no `git branch` of its own.
   */
  async createBranch(branch: string, base: string): Promise<boolean> {
    const ref = `refs/heads/${branch}`;
    const r = await this.run(["update-ref", ref, base, ""], { allowFailure: true });
    if (r.code === 0) return true;
    if (await this.refExists(ref)) return false;
    throw new GitError(
      `git update-ref ${ref} failed (exit ${r.code}): ${outputText(r.stderr).trim()}`,
    );
  }

  /** Creates a worktree at `path` checking out the existing branch `branch`. */
  async checkoutWorktree(path: string, branch: string): Promise<void> {
    await this.#worktreeOps(async () => {
      await this.run(["worktree", "add", "--quiet", "--no-checkout", path, branch]);
    });
    await this.#populate(path);
  }

  /**
   * Writes a registered worktree's index and files from its HEAD. Outside the worktree queue:
   * it touches only that worktree's own index and folder, and checking out a whole tree is the
   * one worktree step whose cost grows with the repository (under the queue every agent of a
   * run waited for every other agent's checkout).
   */
  async #populate(path: string): Promise<void> {
    await this.run(["reset", "--hard", "--quiet"], { cwd: path });
  }

  /**
   * Removes a worktree (its branch stays). The files go first, outside the worktree queue (the
   * same reasoning as {@linkcode Git.addWorktree}); only the unregistering waits in it.
   */
  async removeWorktree(path: string, force = false): Promise<void> {
    if (force) await emptyWorktreeFolder(path);
    await this.#worktreeOps(async () => {
      await this.run(["worktree", "remove", ...(force ? ["--force"] : []), path]);
    });
  }

  /** Undoes a half-made worktree: removes it if registered, prunes, deletes its branch. */
  discardWorktree(path: string, branch: string): Promise<void> {
    return this.#worktreeOps(async () => {
      await this.run(["worktree", "remove", "--force", path], { allowFailure: true });
      await Deno.remove(path, { recursive: true }).catch(() => {});
      await this.run(["worktree", "prune"], { allowFailure: true });
      await this.run(["update-ref", "-d", `refs/heads/${branch}`], { allowFailure: true });
    });
  }

  /** Prunes stale worktree metadata (after a crash removed a folder). */
  pruneWorktrees(): Promise<void> {
    return this.#worktreeOps(async () => {
      await this.run(["worktree", "prune"]);
    });
  }

  /** Stages everything in `cwd` and commits; returns the new commit, or undefined when clean. */
  async commitAll(cwd: string, message: string, author?: GitIdentity): Promise<string | undefined> {
    return await this.#commit(cwd, message, author, true)
      ? await this.revParse("HEAD", cwd)
      : undefined;
  }

  /**
   * Stages everything in `cwd` and commits; true when a commit was made, false when the tree
   * was clean. The run's commit: git's auto maintenance is left to {@linkcode Git.maintainAuto},
   * which the merge queue runs every few merges. The new commit's id is not read here: the
   * completion reads the branch's commit itself (clean tree or not) and pins it for the gates
   * and the merge.
   */
  commitChanges(cwd: string, message: string, author?: GitIdentity): Promise<boolean> {
    return this.#commit(cwd, message, author, false);
  }

  async #commit(
    cwd: string,
    message: string,
    author: GitIdentity | undefined,
    autoMaintenance: boolean,
  ): Promise<boolean> {
    await this.run(["add", "--all"], { cwd });
    const authorArgs = author ? [`--author=${author.name} <${author.email}>`] : [];
    const settings = autoMaintenance ? [] : NO_AUTO_MAINTENANCE;
    // No separate `diff --cached`: on a clean tree commit itself exits 1 and says so.
    const r = await this.run([...settings, "commit", "--no-verify", ...authorArgs, "-m", message], {
      cwd,
      allowFailure: true,
    });
    const out = outputText(r.stdout);
    if (r.code !== 0) {
      if (/nothing (added )?to commit/.test(out)) return false;
      throw new GitError(
        `git commit failed (exit ${r.code}): ${
          (out + outputText(r.stderr)).trim().split("\n").slice(-2).join(" | ")
        }`,
      );
    }
    return true;
  }

  /** Paths changed between `base` and `head` (merge-base diff, renames as add+delete). */
  async changedPaths(base: string, head: string): Promise<ChangedPath[]> {
    const out = outputText(
      (await this.run(["diff", "--name-status", "--no-renames", "-z", `${base}...${head}`])).stdout,
    );
    const parts = out.split("\0").filter((p) => p !== "");
    const changes: ChangedPath[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      changes.push({ status: parts[i], path: parts[i + 1] });
    }
    return changes;
  }

  /**
   * Changed paths with their modes between `base` and `head` (merge-base diff, no renames). With
   * the object batch open and `head` a one-parent chain down to `base` (so `base` is the merge
   * base), the two trees are compared here from their objects (src/orchestrator/_tree_diff.ts)
   * unless the repository's config could change what git diff prints; otherwise git diff.
   */
  async diffEntries(base: string, head: string): Promise<DiffEntry[]> {
    const batched = await this.#diffThroughBatch(base, head);
    if (batched !== undefined) return batched;
    const out = outputText(
      (await this.run([
        "diff",
        "--raw",
        "--no-renames",
        "--no-abbrev",
        "-z",
        `${base}...${head}`,
      ])).stdout,
    );
    return parseRawDiff(out);
  }

  /**
   * The raw headers and message of every commit in `base..head` (author, committer, message
   * as git stores them), for the `secrets` gate: a merge keeps the agent's commits.
   */
  async commitTexts(base: string, head: string): Promise<{ sha: string; bytes: Uint8Array }[]> {
    const chain = await this.#commitChain(base, head);
    if (chain !== undefined) return chain;
    const shas = (await this.text(["rev-list", `${base}..${head}`])).split("\n").filter(Boolean);
    const out: { sha: string; bytes: Uint8Array }[] = [];
    for (const sha of shas) {
      const bytes = await this.#fromBatch("commit", sha) ??
        (await this.run(["cat-file", "commit", sha])).stdout;
      out.push({ sha, bytes });
    }
    return out;
  }

  /**
   * `base..head` read through the object batch, newest first as rev-list prints it, when `head`
   * reaches `base` through commits of one parent each (an agent's branch, usually one commit):
   * then those commits are exactly the ones reachable from `head` and not from `base` (none of
   * them can be an ancestor of `base`, a descendant of each). Parents are the commit's own
   * `parent` lines (grafts and replacements are off for every call: SAFE_GIT_ENV; a shallow
   * repository is left to rev-list). Undefined — rev-list answers — for a merge, a root, a
   * commit the batch cannot serve, more than {@linkcode CHAIN_WALK_LIMIT} commits, or no batch.
   */
  async #commitChain(
    base: string,
    head: string,
  ): Promise<{ sha: string; bytes: Uint8Array }[] | undefined> {
    const objects = this.#objects;
    if (objects === undefined || batchName(base) === undefined) return undefined;
    if (await this.#shallow()) return undefined;
    const out: { sha: string; bytes: Uint8Array }[] = [];
    for (let sha = head; sha !== base;) {
      const name = batchName(sha);
      if (name === undefined || out.length === CHAIN_WALK_LIMIT) return undefined;
      const found = await objects.readObject(name, "commit");
      if (found === undefined || found.id !== sha) return undefined;
      const parent = soleParent(found.bytes, sha.length);
      if (parent === undefined) return undefined;
      out.push({ sha, bytes: found.bytes });
      sha = parent;
    }
    return out;
  }

  /** {@linkcode Git.diffEntries} from tree objects, or undefined when git diff must answer. */
  async #diffThroughBatch(base: string, head: string): Promise<DiffEntry[] | undefined> {
    const objects = this.#objects;
    if (objects === undefined || (await this.#commitChain(base, head)) === undefined) {
      return undefined;
    }
    if (await this.#diffConfigured()) return undefined;
    const treeOf = async (commit: string) => {
      const found = await objects.readObject(commit, "commit");
      if (found === undefined || found.id !== commit) return undefined;
      const line = new TextDecoder().decode(found.bytes.subarray(0, 5 + commit.length + 1));
      const m = /^tree ([0-9a-f]+)\n$/.exec(line);
      return m === null || m[1].length !== commit.length ? undefined : m[1];
    };
    const before = await treeOf(base);
    const after = await treeOf(head);
    if (before === undefined || after === undefined) return undefined;
    return await diffTrees((id) => objects.read(id, "tree"), before, after, base.length);
  }

  /**
   * True when the root repository's own config (or its worktree config) names anything that
   * could change what `git diff --raw` prints — an order file, an include that might — or
   * cannot be read. Global and system config are off for every call (SAFE_GIT_ENV).
   */
  async #diffConfigured(): Promise<boolean> {
    for (const name of ["config", "config.worktree"]) {
      let text: string;
      try {
        text = (await Deno.readTextFile(resolve(this.root, ".git", name))).toLowerCase();
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        return true;
      }
      if (text.includes("orderfile") || text.includes("include")) return true;
    }
    return false;
  }

  /** True unless the root's `.git` is a folder without a `shallow` file (rev-list cuts there). */
  async #shallow(): Promise<boolean> {
    try {
      if (!(await Deno.lstat(resolve(this.root, ".git"))).isDirectory) return true;
    } catch {
      return true;
    }
    try {
      await Deno.lstat(resolve(this.root, ".git", "shallow"));
      return true;
    } catch (error) {
      return !(error instanceof Deno.errors.NotFound);
    }
  }

  /** The bytes of `path` at `ref`, or undefined when it is not there. */
  async readBlob(ref: string, path: string): Promise<Uint8Array | undefined> {
    const batched = await this.#fromBatch("blob", ref, path);
    if (batched !== undefined) return batched;
    const r = await this.run(["show", `${ref}:${path}`], { allowFailure: true });
    return r.code === 0 ? r.stdout : undefined;
  }

  /**
   * What the repository's own config (`<gitDir>/config`, read as a file: includes are not
   * followed, nothing runs) says about hooks and included files, as repo-relative paths inside
   * the work tree: `core.hooksPath` and `include.path`/`includeIf.*.path` targets. The file's
   * bytes are read here and handed to git on stdin, so the answer is always that of the bytes
   * read; git parses them only when they differ from the last bytes it parsed (a run asks once
   * per task, and the file rarely changes).
   */
  async repoConfigPaths(gitDir: string): Promise<{ hooksPath?: string; included: string[] }> {
    const bytes = await Deno.readFile(`${gitDir}/config`).catch(() => undefined);
    const seen = this.#configSeen;
    let listing: string;
    if (seen !== undefined && bytes !== undefined && bytesEqual(seen.bytes, bytes)) {
      listing = seen.listing;
    } else {
      const r = bytes === undefined
        // Unreadable here: git says what it makes of the path, as it always did.
        ? await this.run(["config", "--file", `${gitDir}/config`, "--list", "-z"], {
          allowFailure: true,
        })
        : await this.run(["config", "--no-includes", "--file", "-", "--list", "-z"], {
          allowFailure: true,
          stdin: bytes,
        });
      listing = outputText(r.stdout);
      this.#configSeen = bytes === undefined ? undefined : { bytes, listing };
    }
    return this.#configPaths(listing);
  }

  /** The hooks path and included files of a `git config --list -z` listing (see above). */
  #configPaths(listing: string): { hooksPath?: string; included: string[] } {
    const inside = (value: string): string | undefined => {
      const abs = value.startsWith("/") ? value : `${this.root}/${value}`;
      const rel = abs.startsWith(`${this.root}/`) ? abs.slice(this.root.length + 1) : undefined;
      return rel?.replace(/\/+$/, "");
    };
    let hooksPath: string | undefined;
    const included: string[] = [];
    for (const item of listing.split("\0")) {
      const nl = item.indexOf("\n");
      if (nl <= 0) continue;
      const key = item.slice(0, nl).toLowerCase();
      const value = item.slice(nl + 1);
      if (key === "core.hookspath") hooksPath = inside(value);
      if (/^include(if\..*)?\.path$/.test(key)) {
        const rel = inside(value);
        if (rel !== undefined) included.push(rel);
      }
    }
    return { ...(hooksPath !== undefined ? { hooksPath } : {}), included };
  }

  /** The bytes of `path` at `ref`. */
  async showFile(ref: string, path: string): Promise<Uint8Array> {
    return await this.#fromBatch("blob", ref, path) ??
      (await this.run(["show", `${ref}:${path}`])).stdout;
  }

  /**
   * Merges `commit` (a commit id, or a branch name) into the branch checked out in `cwd` with a
   * merge commit. A conflict is aborted so the work tree is left as it was; the branch keeps the
   * work. Git's auto maintenance is left to {@linkcode Git.maintainAuto} (the merge queue runs
   * it).
   */
  async merge(commit: string, message: string, cwd?: string): Promise<MergeOutcome> {
    const r = await this.run(
      [...NO_AUTO_MAINTENANCE, "merge", "--no-ff", "--no-edit", "-m", message, commit],
      { cwd, allowFailure: true },
    );
    if (r.code === 0) return { ok: true, sha: await this.revParse("HEAD", cwd) };
    const output = (outputText(r.stdout) + outputText(r.stderr)).trim();
    const unmerged = await this.run(["diff", "--name-only", "--diff-filter=U", "-z"], {
      cwd,
      allowFailure: true,
    });
    const conflicts = outputText(unmerged.stdout).split("\0").filter((p) => p !== "");
    await this.run(["merge", "--abort"], { cwd, allowFailure: true });
    if (conflicts.length > 0) return { ok: false, reason: "conflict", conflicts, output };
    return { ok: false, reason: "failed", output };
  }

  /**
   * The repository housekeeping that git's commit and merge would each start on their own
   * (`git maintenance run --auto`: packs loose objects once there are enough of them). Bernstein
   * commits and merges without it ({@linkcode NO_AUTO_MAINTENANCE}: two processes per task
   * saved) and runs it here instead, every few merges and at the end of a run. Never fails the
   * caller: a run must not stop over housekeeping.
   */
  async maintainAuto(): Promise<void> {
    await this.exclusive(() =>
      this.run(["maintenance", "run", "--auto", "--quiet"], { allowFailure: true })
    )
      .catch(() => {});
  }

  /** True when `ancestor` is reachable from `ref` (e.g. a branch already merged into HEAD). */
  async isAncestor(ancestor: string, ref: string): Promise<boolean> {
    return (await this.run(["merge-base", "--is-ancestor", ancestor, ref], { allowFailure: true }))
      .code === 0;
  }

  /**
   * Deletes a local branch (after its work merged). Forced, only the ref goes (`update-ref -d`):
   * `git branch -D` also rewrites `.git/config` to drop a `branch.<name>` section bernstein never
   * writes, and a config file replaced mid-run races with an agent sandbox starting, which
   * mounts its own file over that path.
   */
  async deleteBranch(branch: string, force = false): Promise<void> {
    if (force) await this.run(["update-ref", "-d", `refs/heads/${branch}`]);
    else await this.run(["branch", "-d", branch]);
  }
}

/**
 * Deletes everything in a linked worktree's folder but its `.git` link file, so that `git
 * worktree remove` has nothing left to walk. Only a folder git itself would take for a linked
 * worktree (see {@linkcode isLinkedWorktree}) is touched: a path naming the main work tree or
 * any other folder is left to git, which refuses it as before. Best effort: whatever stays is
 * left to git too. Links are removed, never followed.
 */
async function emptyWorktreeFolder(path: string): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    if (!(await isLinkedWorktree(path))) return;
    entries = await Array.fromAsync(Deno.readDir(path));
  } catch {
    return;
  }
  await Promise.all(
    entries.filter((e) => e.name !== ".git").map((e) =>
      Deno.remove(`${path}/${e.name}`, { recursive: true }).catch(() => {})
    ),
  );
}

/**
 * True when `path/.git` is a plain file naming a worktree admin folder whose `gitdir` file
 * points back at it: git's own test of a linked worktree (the main work tree has a `.git`
 * folder).
 */
async function isLinkedWorktree(path: string): Promise<boolean> {
  const link = `${path}/.git`;
  if (!(await Deno.lstat(link)).isFile) return false;
  const m = /^gitdir: (.+?)\r?\n?$/.exec(await Deno.readTextFile(link));
  if (m === null) return false;
  // Both links may be relative (worktree.useRelativePaths): to the worktree, to the admin folder.
  const admin = resolve(path, m[1]);
  const back = resolve(admin, (await Deno.readTextFile(`${admin}/gitdir`)).trim());
  return await Deno.realPath(back) === await Deno.realPath(link);
}

/** Parses `git diff --raw -z` output: `:old new oldsha newsha status\0path\0` per entry. */
export function parseRawDiff(out: string): DiffEntry[] {
  const parts = out.split("\0");
  const entries: DiffEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:(\d{6}) (\d{6}) [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/.exec(parts[i]);
    if (m === null) continue;
    entries.push({ oldMode: m[1], newMode: m[2], status: m[3], path: parts[i + 1] });
  }
  return entries;
}
