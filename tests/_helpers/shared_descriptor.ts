// What a child process being started holds for a moment: a copy of every descriptor of this
// process, sharing their open file descriptions (and so their flock locks) until it execs. Tests
// make that copy with dup(2) through FFI (Linux: the descriptor is found by /proc/self/fd), so
// "the lock is released while a copy exists" is checked without racing a real fork.

/** True where {@linkcode shareDescriptor} works (Linux, with /proc and libc.so.6). */
export const CAN_SHARE_DESCRIPTORS: boolean = Deno.build.os === "linux";

/**
 * Duplicates this process's one open descriptor of `path` (as a forked child holds it before its
 * exec); returns the function that closes the copy. Throws unless exactly one descriptor of this
 * process has `path` open.
 */
export function shareDescriptor(path: string): () => void {
  const fds: number[] = [];
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (Deno.readLinkSync(`/proc/self/fd/${entry.name}`) === path) fds.push(Number(entry.name));
    } catch {
      // Closed between the listing and the readlink (the listing's own descriptor).
    }
  }
  if (fds.length !== 1) throw new Error(`${fds.length} descriptors of ${path} are open, not 1`);
  const libc = Deno.dlopen("libc.so.6", {
    dup: { parameters: ["i32"], result: "i32" },
    close: { parameters: ["i32"], result: "i32" },
  });
  const copy = libc.symbols.dup(fds[0]);
  if (copy < 0) {
    libc.close();
    throw new Error(`dup(${fds[0]}) failed`);
  }
  return () => {
    libc.symbols.close(copy);
    libc.close();
  };
}
