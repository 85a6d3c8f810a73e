// Process-group checks for tests that kill agents (Linux /proc).

/**
 * Pids of the processes of group `pgid` that are still alive. Zombies do not count: they are
 * dead, only not yet reaped (an orphan's zombie waits for PID 1, which in some containers never
 * reaps), yet `kill(-pgid, 0)` still succeeds on them.
 */
export function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue; // Gone between the listing and the read.
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") {
      live.push(Number(entry.name));
    }
  }
  return live;
}
