// Whether a pid is still the process that was started: the kernel's start time, recorded for
// each agent, tells a live agent from a pid the system has since given to another process, and
// a liveness probe that does not count a zombie as alive.
import { procStat, readProcStat } from "../io/mod.ts";

/**
 * The kernel's start time of a process (Linux: field 22 of `/proc/<pid>/stat`, clock ticks
 * since boot), or null where it cannot be read. Recorded for each agent, it tells a pid that
 * is still that agent from a pid the system has since given to another process.
 */
export async function processStartTime(pid: number): Promise<string | null> {
  return (await readProcStat(pid))?.startTime ?? null;
}

/**
 * True when a process with this pid exists and has not exited (a zombie nobody reaped — an
 * agent whose orchestrator died — is not alive).
 */
export function processAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return false;
  }
  const stat = procStat(pid);
  if (stat === null) return false; // exited between the probe and the read
  return stat === undefined || stat.state !== "Z"; // no /proc: the signal probe is all there is
}
