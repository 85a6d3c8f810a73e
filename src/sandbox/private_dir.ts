// The run's private sandbox folder (sockets, git config copies) under the system's temp folder,
// and the sweep of the ones dead runs left: a run removes its own when it ends, but a killed run
// (kill -9, OOM, power) cannot, and each left one holds the copies of that run's git configs.
// A folder's name carries its run's pid and that process's kernel start time, so a later run
// can tell a dead run's folder from a live one's — and a folder whose owner it cannot identify
// (a name without them, no /proc to ask) is left alone.
import { dirname, join } from "node:path";
import { readProcStat } from "../io/mod.ts";

const PREFIX = "bernstein-sbx-";
const IDENTIFIED = /^bernstein-sbx-(\d+)-(\d+)-/;

/**
 * Makes a private per-run folder for sandbox files (mode 0700), named after this process
 * (`bernstein-sbx-<pid>-<start time>-…`), and removes the folders of runs that are gone.
 * `tmp` is the parent folder (default: the system's temp folder).
 */
export async function makeSandboxDir(tmp?: string): Promise<string> {
  const start = (await readProcStat(Deno.pid))?.startTime;
  const prefix = start === undefined ? PREFIX : `${PREFIX}${Deno.pid}-${start}-`;
  const dir = await Deno.makeTempDir({ prefix, dir: tmp });
  await sweepDeadRunDirs(dirname(dir));
  return dir;
}

/** Removes every identified sandbox folder in `parent` whose run is no longer alive. */
async function sweepDeadRunDirs(parent: string): Promise<void> {
  const candidates: { name: string; pid: number; start: string }[] = [];
  try {
    for await (const entry of Deno.readDir(parent)) {
      const match = IDENTIFIED.exec(entry.name);
      // A symlink or a file by that name is not ours to follow or remove.
      if (match && entry.isDirectory) {
        candidates.push({ name: entry.name, pid: Number(match[1]), start: match[2] });
      }
    }
  } catch {
    return; // the temp folder cannot be listed: nothing is swept
  }
  for (const c of candidates) {
    if (await runGone(c.pid, c.start)) {
      await Deno.remove(join(parent, c.name), { recursive: true }).catch(() => {});
    }
  }
}

/** True only when it is known that the process that made the folder has ended. */
async function runGone(pid: number, start: string): Promise<boolean> {
  const stat = await readProcStat(pid);
  if (stat === undefined) return false; // cannot tell
  return stat === null || stat.startTime !== start || stat.state === "Z";
}
