// The repository's own git state — `.git/config`, hooks, info/attributes, grafts, alternates,
// per-worktree config — as it was when the run started. Without a sandbox an agent shares the
// operator's user and can write all of it (`git config core.fsmonitor /tmp/x.sh` from its
// worktree writes the shared `.git/config`); bernstein's own git calls are immune (git.ts), but
// the operator's next `git status` is not. So the run snapshots that state, checks it before
// every merge (the built-in `git_state` gate refuses the task, naming the paths) and at the end
// of the run, and puts the snapshot back whenever it changed.
import { join, relative } from "node:path";
import { bytesEqual } from "../canonical/mod.ts";
import type { GateResult } from "./gates.ts";

/** One file of the snapshot: its bytes and mode, or null when it did not exist. */
type Entry = { bytes: Uint8Array; mode: number | null } | null;

/** The git state a run protects (paths relative to the git folder, `/`-separated). */
export interface GitStateSnapshot {
  /** The git folder. */
  gitDir: string;
  /** File → content (null: absent). */
  files: Map<string, Entry>;
}

/** Files protected by path (relative to the git folder). */
const FIXED = ["config", "info/attributes", "info/grafts", "objects/info/alternates", "commondir"];

async function readEntry(path: string): Promise<Entry> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink) {
      return {
        bytes: new TextEncoder().encode(`symlink:${await Deno.readLink(path)}`),
        mode: null,
      };
    }
    if (!info.isFile) return { bytes: new TextEncoder().encode("not-a-file"), mode: null };
    return { bytes: await Deno.readFile(path), mode: info.mode };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw error;
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) out.push(...await listFiles(path));
      else out.push(path);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out;
}

/** The protected paths present now: the fixed ones, every hook, every worktree's config. */
async function protectedPaths(gitDir: string): Promise<string[]> {
  const paths = new Set(FIXED);
  for (const file of await listFiles(join(gitDir, "hooks"))) {
    paths.add(relative(gitDir, file).split("\\").join("/"));
  }
  try {
    for await (const e of Deno.readDir(join(gitDir, "worktrees"))) {
      if (e.isDirectory) paths.add(`worktrees/${e.name}/config.worktree`);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return [...paths].sort();
}

/** Reads the protected git state of the repository whose git folder is `gitDir`. */
export async function snapshotGitState(gitDir: string): Promise<GitStateSnapshot> {
  const files = new Map<string, Entry>();
  for (const path of await protectedPaths(gitDir)) {
    files.set(path, await readEntry(join(gitDir, path)));
  }
  return { gitDir, files };
}

function same(a: Entry, b: Entry): boolean {
  if (a === null || b === null) return a === b;
  // The bytes themselves, not two hashes of them: every gate compares ~20 files.
  return a.mode === b.mode && bytesEqual(a.bytes, b.bytes);
}

/** One difference from the snapshot. */
export interface GitStateChange {
  /** Path relative to the repository root's parent view: `.git/config`, `.git/hooks/x`. */
  path: string;
  /** `added`, `changed` or `removed`. */
  change: "added" | "changed" | "removed";
}

/** What differs from the snapshot now. */
export async function gitStateChanges(snapshot: GitStateSnapshot): Promise<GitStateChange[]> {
  const now = await snapshotGitState(snapshot.gitDir);
  const changes: GitStateChange[] = [];
  const names = new Set([...snapshot.files.keys(), ...now.files.keys()]);
  for (const name of [...names].sort()) {
    const before = snapshot.files.get(name) ?? null;
    const after = now.files.get(name) ?? null;
    if (same(before, after)) continue;
    changes.push({
      path: `.git/${name}`,
      change: before === null ? "added" : after === null ? "removed" : "changed",
    });
  }
  return changes;
}

/** Puts the snapshot back: changed files rewritten, added ones removed, removed ones restored. */
export async function restoreGitState(snapshot: GitStateSnapshot): Promise<void> {
  const now = await snapshotGitState(snapshot.gitDir);
  const names = new Set([...snapshot.files.keys(), ...now.files.keys()]);
  for (const name of names) {
    const before = snapshot.files.get(name) ?? null;
    const after = now.files.get(name) ?? null;
    if (same(before, after)) continue;
    const path = join(snapshot.gitDir, name);
    // lstat-based remove: a planted symlink is removed, never followed.
    await Deno.remove(path, { recursive: true }).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    if (before !== null) {
      await Deno.writeFile(path, before.bytes, { mode: before.mode ?? 0o644, createNew: true });
      if (before.mode !== null) await Deno.chmod(path, before.mode & 0o7777);
    }
  }
}

/**
 * The `git_state` gate: passes when the protected git state is as the run found it; otherwise
 * fails naming every changed path, and puts the state back so nothing planted stays.
 */
export async function gitStateGate(snapshot: GitStateSnapshot): Promise<GateResult> {
  const changes = await gitStateChanges(snapshot);
  if (changes.length === 0) {
    return {
      gate: "git_state",
      ok: true,
      reason: "the repository's git config and hooks are as the run found them",
      durationMs: 0,
    };
  }
  await restoreGitState(snapshot);
  return {
    gate: "git_state",
    ok: false,
    reason: `the repository's git state changed while the agent ran (restored): ${
      changes.map((c) => `${c.path} ${c.change}`).join(", ")
    }`,
    durationMs: 0,
  };
}
