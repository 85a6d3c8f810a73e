// Writes an invocation's planned files into the spawn's private HOME and its attachment copies
// into the worktree, each checked to stay inside its root (no `..`, no symlink escape).

import { dirname, isAbsolute, relative } from "node:path";
import { checkRelativePath, resolveInside, writeFileAtomic } from "../io/mod.ts";
import type { Invocation } from "./types.ts";

/**
 * Prepares the spawn's HOME: creates the child's TMPDIR when it lies under HOME, then writes
 * the invocation's planned files (creating folders), each checked to stay inside HOME (no
 * `..`, no symlink escape); then the attachment copies into the worktree (`cwd`), each checked
 * to stay inside it. Returns the absolute paths written.
 */
export async function writeInvocationFiles(
  invocation:
    & Pick<Invocation, "files">
    & Partial<Pick<Invocation, "worktree_files" | "cwd">>
    & { env?: Readonly<Record<string, string>> },
  home: string,
): Promise<string[]> {
  const tmp = invocation.env?.TMPDIR;
  if (tmp !== undefined) {
    const rel = relative(home, tmp);
    if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) {
      await Deno.mkdir(await resolveInside(home, rel), { recursive: true, mode: 0o700 });
    }
  }
  const written: string[] = [];
  for (const file of invocation.files) {
    checkRelativePath(file.path, "adapter file");
    const target = await resolveInside(home, file.path);
    await Deno.mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await writeFileAtomic(target, file.content, { mode: file.mode });
    // writeFileAtomic's mode applies to a new temp file; chmod covers umask differences.
    await Deno.chmod(target, file.mode);
    written.push(target);
  }
  for (const file of invocation.worktree_files ?? []) {
    if (invocation.cwd === undefined) throw new Error("worktree files need the invocation's cwd");
    checkRelativePath(file.path, "attachment copy");
    // A repository may track a symlink where the copy goes: it must not lead out of the tree.
    const target = await resolveInside(invocation.cwd, file.path);
    await Deno.mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await writeFileAtomic(target, file.bytes, { mode: 0o600 });
    await Deno.chmod(target, 0o600);
    written.push(target);
  }
  return written;
}
