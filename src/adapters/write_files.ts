import { dirname } from "node:path";
import { checkRelativePath, resolveInside, writeFileAtomic } from "../io/mod.ts";
import type { Invocation } from "./types.ts";

/**
 * Writes an invocation's planned files under the spawn's HOME (creating folders), each
 * checked to stay inside it (no `..`, no symlink escape). Returns the absolute paths.
 */
export async function writeInvocationFiles(
  invocation: Pick<Invocation, "files">,
  home: string,
): Promise<string[]> {
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
  return written;
}
