// The built-in `git_safety` gate: what a change may never bring into the operator's branch,
// whether or not the agent ran in a sandbox. A symlink that points outside the repository (or
// into its .git or .sdd) would let a later agent or the operator write through it; a path under
// `.git` (in any spelling git or a file system folds to it) could plant hooks or config on
// checkout; a `.gitmodules` with a local URL or a command `update` runs or reads what the
// agent chose on the next submodule command; a hook folder, a tracked git config or a new
// attribute driver names a program git runs later. Pure checks over the diff, plus one async
// function that reads the blobs it needs.
import { dirname, posix } from "node:path";
import type { GateResult } from "./gates.ts";
import type { DiffEntry } from "./git.ts";

/** Reads a blob of the change: `side` `new` is the branch, `old` the merge base. */
export type BlobReader = (path: string, side: "old" | "new") => Promise<Uint8Array | undefined>;

/** Hook folders by convention (core.hooksPath often points at one of them). */
export const HOOK_FOLDERS: readonly string[] = [".githooks", ".husky", ".git-hooks", ".hooks"];

/** Attribute drivers git ships (no config, no program): these may be added freely. */
const BUILTIN_DIFF = new Set([
  "ada",
  "bash",
  "bibtex",
  "cpp",
  "csharp",
  "css",
  "dts",
  "elixir",
  "fortran",
  "fountain",
  "golang",
  "html",
  "java",
  "kotlin",
  "markdown",
  "matlab",
  "objc",
  "pascal",
  "perl",
  "php",
  "python",
  "ruby",
  "rust",
  "scheme",
  "tex",
]);
const BUILTIN_MERGE = new Set(["text", "binary", "union"]);

// Characters HFS+ ignores in names: `.g\u200cit` is `.git` there (git's own is_hfs_dotgit).
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** True when a path segment is `.git` as git, NTFS (`git~1`, trailing dots/spaces) or HFS+ see it. */
export function isDotGitSegment(segment: string): boolean {
  const folded = segment.replace(HFS_IGNORABLE, "").toLowerCase().replace(/[. ]+$/, "");
  return folded === ".git" || folded === "git~1";
}

/** True when any segment of a repo-relative path is `.git` (in any spelling). */
export function isUnderGitDir(path: string): boolean {
  return path.split("/").some(isDotGitSegment);
}

/**
 * Why a symlink at `linkPath` pointing at `target` is refused, or undefined when it stays
 * inside the repository (and out of its `.git` and `.sdd`).
 */
export function symlinkProblem(linkPath: string, target: string): string | undefined {
  if (target === "") return "an empty target";
  if (target.includes("\0")) return "a target with a NUL byte";
  if (target.startsWith("/") || /^[A-Za-z]:[\\/]/.test(target) || target.startsWith("\\")) {
    return `an absolute target (${target})`;
  }
  const resolved = posix.normalize(posix.join(dirname(linkPath), target.replaceAll("\\", "/")));
  if (resolved === ".." || resolved.startsWith("../")) {
    return `a target outside the repository (${target})`;
  }
  const first = resolved.split("/")[0];
  if (isUnderGitDir(resolved)) return `a target inside .git (${target})`;
  if (first === ".sdd") return `a target inside .sdd (${target})`;
  return undefined;
}

/** Problems of a `.gitmodules` text: local URLs, command updates, paths under `.git`. */
export function gitmodulesProblems(text: string): string[] {
  const problems: string[] = [];
  for (const raw of text.split("\n")) {
    const m = /^\s*([A-Za-z.]+)\s*=\s*(.*?)\s*$/.exec(raw);
    if (m === null) continue;
    const key = m[1].toLowerCase();
    const value = m[2].replace(/^"(.*)"$/, "$1");
    if (key === "url" && isLocalUrl(value)) {
      problems.push(`submodule url '${value}' is a local path`);
    }
    if (key === "update" && value.startsWith("!")) {
      problems.push(`submodule update '${value}' runs a command`);
    }
    if (key === "path" && (isUnderGitDir(value) || value.split("/").includes(".."))) {
      problems.push(`submodule path '${value}' is not a plain repository path`);
    }
  }
  return problems;
}

/** True for URLs git resolves on the local file system (a path, `file:`, `~`). */
export function isLocalUrl(url: string): boolean {
  if (/^file:/i.test(url)) return true;
  if (/^(\/|\.\.?(\/|$)|~)/.test(url)) return true;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return false;
  // scp-like `host:path` is remote; anything else without a scheme is a local path.
  return !/^[^/:]+:/.test(url);
}

/** Attribute drivers (`filter=x`, `diff=x`, `merge=x`) a `.gitattributes` text names. */
export function attributeDrivers(text: string): string[] {
  const out = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    for (const token of line.split(/\s+/).slice(1)) {
      const m = /^(filter|diff|merge)=(.+)$/.exec(token);
      if (m === null) continue;
      const [, kind, name] = m;
      if (kind === "diff" && BUILTIN_DIFF.has(name)) continue;
      if (kind === "merge" && BUILTIN_MERGE.has(name)) continue;
      out.add(`${kind}=${name}`);
    }
  }
  return [...out].sort();
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Options of {@linkcode gitSafetyGate}. */
export interface GitSafetyInput {
  /** The change. */
  entries: readonly DiffEntry[];
  /** Reads blobs. */
  read: BlobReader;
  /** The repository's `core.hooksPath`, when it is a folder inside the repository. */
  hooksPath?: string;
  /** Repo-relative files the repository's config includes (`include.path`). */
  includedConfig?: readonly string[];
}

const decoder = new TextDecoder();

/**
 * The `git_safety` gate: refuses a change that adds or modifies a symlink leaving the
 * repository, a file under `.git`, a `.gitmodules` with a local URL or a command, a hook
 * file, a tracked git config, or an attribute driver that runs a program. Names every path.
 */
export async function gitSafetyGate(input: GitSafetyInput): Promise<GateResult> {
  const problems: string[] = [];
  const hookFolders = [...HOOK_FOLDERS, ...(input.hooksPath ? [input.hooksPath] : [])];
  for (const e of input.entries) {
    if (e.status === "D") continue;
    const path = e.path;
    if (isUnderGitDir(path)) {
      problems.push(`${path}: a file under .git`);
      continue;
    }
    if (e.newMode === "120000") {
      const target = decoder.decode(await input.read(path, "new") ?? new Uint8Array());
      const why = symlinkProblem(path, target);
      if (why !== undefined) problems.push(`${path}: a symlink with ${why}`);
    }
    if (e.newMode === "160000") problems.push(`${path}: a submodule (gitlink) added by the change`);
    const name = basenameOf(path);
    if (name === ".gitmodules") {
      const text = decoder.decode(await input.read(path, "new") ?? new Uint8Array());
      for (const p of gitmodulesProblems(text)) problems.push(`${path}: ${p}`);
    }
    if (hookFolders.some((dir) => path === dir || path.startsWith(`${dir.replace(/\/$/, "")}/`))) {
      problems.push(`${path}: a git hook file`);
    }
    if (name === ".gitconfig" || (input.includedConfig ?? []).includes(path)) {
      problems.push(`${path}: a tracked git config`);
    }
    if (name === ".gitattributes") {
      const before = attributeDrivers(
        decoder.decode(await input.read(path, "old") ?? new Uint8Array()),
      );
      const after = attributeDrivers(
        decoder.decode(await input.read(path, "new") ?? new Uint8Array()),
      );
      const added = after.filter((d) => !before.includes(d));
      if (added.length > 0) {
        problems.push(`${path}: adds attribute driver(s) ${added.join(", ")} (a program git runs)`);
      }
    }
  }
  if (problems.length === 0) {
    return {
      gate: "git_safety",
      ok: true,
      reason:
        `${input.entries.length} changed path(s): no symlink escape, .git path, local submodule or git hook/config`,
      durationMs: 0,
    };
  }
  return {
    gate: "git_safety",
    ok: false,
    reason: `the change is unsafe to merge: ${problems.join("; ")}`,
    durationMs: 0,
  };
}
