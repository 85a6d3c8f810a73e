// What Linux's /proc says about a process: its state, process group and kernel start time.
// Deno lets only a process that holds every permission read anything under /proc (a read is
// `NotCapable` otherwise, whatever --allow-read says), and bernstein's binary does not hold
// them all. Where the direct read is refused, the same files are read by a program bernstein
// may run (cat(1), or the shell's built-in read for the whole table), so the checks that
// depend on them (a recycled pid is not an agent, a zombie is not alive, a sandbox's members
// end before its supervisor) hold in the binary as they do under `--allow-all`.

/** The fields of `/proc/<pid>/stat` bernstein uses. */
export interface ProcStat {
  /** One letter: R, S, D, Z (zombie), T, … */
  state: string;
  /** Process group id. */
  pgrp: number;
  /** Kernel start time (field 22: clock ticks since boot), as written by the kernel. */
  startTime: string;
}

/**
 * The stat line of one process: null when there is no such process, undefined where /proc
 * cannot be asked (not Linux, or neither the read nor cat(1) works). Synchronous: where the
 * direct read is refused it blocks on cat(1) for a few milliseconds — for rare checks; on a
 * busy path use {@linkcode readProcStat}.
 */
export function procStat(pid: number): ProcStat | null | undefined {
  const path = statPath(pid);
  if (path === undefined) return undefined;
  const direct = readDirect(path);
  return statOf(direct === undefined ? catOutput(runSync(CAT_PATHS, [path])) : direct);
}

/** {@linkcode procStat} without blocking: cat(1), where needed, runs while the caller waits. */
export async function readProcStat(pid: number): Promise<ProcStat | null | undefined> {
  const path = statPath(pid);
  if (path === undefined) return undefined;
  const direct = readDirect(path);
  return statOf(direct === undefined ? catOutput(await runAsync(CAT_PATHS, [path])) : direct);
}

function statPath(pid: number): string | undefined {
  if (Deno.build.os !== "linux" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return `/proc/${pid}/stat`;
}

function statOf(text: string | null | undefined): ProcStat | null | undefined {
  if (text === undefined || text === null) return text;
  return parseStatLine(text) ?? undefined;
}

/**
 * Every process's stat, keyed by the pid its `/proc` folder names (never by the line's own
 * first field, which a process cannot forge but whose command name it can fill with spaces,
 * parentheses and newlines). Undefined where /proc cannot be asked.
 */
export async function procStatTable(): Promise<Map<number, ProcStat> | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  const direct = readTableDirect();
  if (direct !== undefined) return direct;
  const out = await runAsync(SH_PATHS, ["-c", TABLE_SCRIPT]);
  return out === undefined || out.code !== 0 ? undefined : tableOf(out.stdout);
}

/**
 * Parses the text of a stat file. The command name (field 2) may hold spaces, parentheses and
 * newlines: the fields after it are counted from its LAST closing parenthesis.
 */
export function parseStatLine(text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(" ");
  const pgrp = Number(fields[2]);
  const startTime = fields[19];
  if (!/^[A-Za-z]$/.test(fields[0] ?? "") || !Number.isSafeInteger(pgrp)) return null;
  if (startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return { state: fields[0], pgrp, startTime };
}

/** Whether this process may read /proc itself (known after the first try). */
let directAllowed: boolean | undefined;

/** The file's text; null when it does not exist; undefined when the read is refused. */
function readDirect(path: string): string | null | undefined {
  if (directAllowed === false) return undefined;
  try {
    const text = Deno.readTextFileSync(path);
    directAllowed = true;
    return text;
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      directAllowed = false;
      return undefined;
    }
    return null; // NotFound (the process is gone) or ESRCH while reading
  }
}

const CAT_PATHS = ["/bin/cat", "/usr/bin/cat"];
const SH_PATHS = ["/bin/sh", "/usr/bin/sh"];

/** cat(1)'s answer: the file's text; null when cat says it is not there; undefined when none ran. */
function catOutput(out: Deno.CommandOutput | undefined): string | null | undefined {
  if (out === undefined) return undefined;
  return out.code === 0 ? new TextDecoder().decode(out.stdout) : null;
}

function readTableDirect(): Map<number, ProcStat> | undefined {
  if (directAllowed === false) return undefined;
  const table = new Map<number, ProcStat>();
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const text = readDirect(`/proc/${entry.name}/stat`);
      if (text === undefined) return undefined;
      const stat = text === null ? null : parseStatLine(text);
      if (stat !== null) table.set(Number(entry.name), stat);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      directAllowed = false;
    }
    return undefined;
  }
  directAllowed = true;
  return table;
}

/**
 * One shell reads every stat file with its built-in `read` (no process per file) and prints
 * `<folder pid>\t<first line>` NUL-terminated. `read` stops at the first newline, so a command
 * name holding one only shortens its own process's line: it cannot add a line for another pid.
 */
const TABLE_SCRIPT = 'for f in /proc/[0-9]*/stat; do IFS= read -r l < "$f" 2>/dev/null && ' +
  `p="\${f#/proc/}" && printf '%s\\t%s\\0' "\${p%/stat}" "$l"; done; exit 0`;

function tableOf(stdout: Uint8Array): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const record of new TextDecoder().decode(stdout).split("\0")) {
    const tab = record.indexOf("\t");
    const pid = record.slice(0, tab);
    if (tab < 0 || !/^\d+$/.test(pid)) continue;
    const stat = parseStatLine(record.slice(tab + 1));
    if (stat !== null) table.set(Number(pid), stat);
  }
  return table;
}

function command(path: string, args: string[]): Deno.Command {
  return new Deno.Command(path, {
    args,
    env: {},
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  });
}

/** Runs the first of `paths` that starts; undefined when none could be started. */
function runSync(paths: string[], args: string[]): Deno.CommandOutput | undefined {
  for (const path of paths) {
    try {
      return command(path, args).outputSync();
    } catch {
      // Not there (or not allowed): try the next.
    }
  }
  return undefined;
}

/** {@linkcode runSync} without blocking. */
async function runAsync(paths: string[], args: string[]): Promise<Deno.CommandOutput | undefined> {
  for (const path of paths) {
    try {
      return await command(path, args).output();
    } catch {
      // Not there (or not allowed): try the next.
    }
  }
  return undefined;
}
