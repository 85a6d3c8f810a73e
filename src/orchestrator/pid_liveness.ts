// Whether a pid is still the process that was started: the kernel's start time, recorded for
// each agent, tells a live agent from a pid the system has since given to another process, and
// a liveness probe that does not count a zombie as alive; and the SIGKILL of an agent's process
// group for a run that must end it now.
import { type ProcStat, procStat, readProcStat } from "../io/mod.ts";

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
 * agent whose orchestrator died — is not alive). Synchronous: where /proc must be read through
 * cat(1) it blocks for a few milliseconds — for one-off checks outside a run's event loop
 * (`status`, `ps`, `stop`); {@linkcode isProcessAlive} does not block.
 */
export function processAlive(pid: number): boolean {
  if (!signalReaches(pid)) return false;
  return liveStat(procStat(pid));
}

/** {@linkcode processAlive} without blocking the event loop. */
export async function isProcessAlive(pid: number): Promise<boolean> {
  if (!signalReaches(pid)) return false;
  return liveStat(await readProcStat(pid));
}

/**
 * {@linkcode isProcessAlive} and {@linkcode processStartTime} from one read of the process's
 * stat: undefined when it is gone (or a zombie), else its kernel start time (null where it
 * cannot be read). For a start's look at each leftover agent: one cat(1) each, not two.
 */
export async function liveStartTime(
  pid: number,
): Promise<{ startTime: string | null } | undefined> {
  if (!signalReaches(pid)) return undefined;
  const stat = await readProcStat(pid);
  if (!liveStat(stat)) return undefined;
  return { startTime: stat?.startTime ?? null };
}

/** Whether a (harmless) signal reaches the pid: some process has it. */
function signalReaches(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

function liveStat(stat: ProcStat | null | undefined): boolean {
  if (stat === null) return false; // exited between the probe and the read
  return stat === undefined || stat.state !== "Z"; // no /proc: the signal probe is all there is
}

/** SIGKILLs the process group `pgid` (an agent's); nothing when it is gone already. */
export function killProcessGroup(pgid: number): void {
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
