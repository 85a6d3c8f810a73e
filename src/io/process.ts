// Starting processes: a handle over a spawned child (output, exit, kill of its group), a run
// that collects its output, and the filtered environment children get.

import type { EnvReader } from "./env.ts";
import { SpawnError } from "./errors.ts";
import { procStatTable } from "./proc_stat.ts";

/** Options for {@linkcode runProcess} and {@linkcode spawnProcess}. */
export interface ProcessOptions {
  /** Working directory. */
  cwd?: string;
  /**
   * The child's complete environment. The parent's environment is never inherited
   * (`clearEnv`), so secrets reach a child only when listed here.
   */
  env?: Record<string, string>;
  /** Bytes written to stdin, then closed; stdin is `/dev/null` when absent. */
  stdin?: Uint8Array;
  /** Kill the whole process group after this many milliseconds. */
  timeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL on timeout or abort (default 2000 ms). */
  killGraceMs?: number;
  /** Aborting kills the process group. */
  signal?: AbortSignal;
  /** Called with each chunk of stdout as it arrives. */
  onStdout?: (chunk: Uint8Array) => void;
  /** Called with each chunk of stderr as it arrives. */
  onStderr?: (chunk: Uint8Array) => void;
  /** Keep at most this many bytes of each stream in the result (default 16 MiB). */
  maxCaptureBytes?: number;
  /**
   * The leader is a supervisor that reaps its children and exits once they are gone (bwrap):
   * a stop signals the rest of the group first and the leader only if it outlives them.
   * Killed together, the supervisor's child loses its parent in the same instant and is left
   * as a zombie under a pid 1 that may never reap it (a container's). Linux (/proc) only;
   * elsewhere the group is signalled as usual.
   */
  leaderLast?: boolean;
  /**
   * How the child gets its process group of its own. `"detach"` (default) is Deno's detached
   * spawn, which forks this whole process before the exec: on a busy machine that blocks the
   * event loop for 10-25 ms per child (a run starts ~15 git commands per task). `"setsid"`
   * spawns `setsid -- argv…` plainly: setsid(1) makes the new session and group inside the
   * child, then execs the program in place (same pid), and nothing of this process is copied
   * (~1 ms). Only where `setsid` is installed (Linux; elsewhere this is `"detach"`). A program
   * that is not there is then exit 127 from setsid rather than a {@linkcode SpawnError}: use it
   * for programs known to exist (git).
   */
  group?: "detach" | "setsid";
}

/** What a finished process did. */
export interface ProcessResult {
  /** Exit code (128 + signal number when killed by a signal). */
  code: number;
  /** Signal that ended the process, if any. */
  signal: Deno.Signal | null;
  /** Captured stdout (possibly truncated to `maxCaptureBytes`). */
  stdout: Uint8Array;
  /** Captured stderr (possibly truncated to `maxCaptureBytes`). */
  stderr: Uint8Array;
  /** True when the deadline killed the process. */
  timedOut: boolean;
  /** True when the abort signal killed the process. */
  aborted: boolean;
}

/** A running child process in its own process group. */
export interface ProcessHandle {
  /** Process id (also the process-group id). */
  readonly pid: number;
  /** Resolves when the process exits and its output is drained. */
  readonly done: Promise<ProcessResult>;
  /** SIGTERM the whole group, then SIGKILL after the grace period. */
  terminate(graceMs?: number): Promise<void>;
}

const decoder = new TextDecoder();

/** Text of captured output, decoded leniently (for messages, never for hashing). */
export function outputText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // The group is already gone: nothing to kill.
  }
}

/**
 * A stop of a child spawned through setsid: its group, or the child itself while setsid(1)
 * has not made the group yet. Only for a child not yet seen to exit (its pid is still its own).
 */
function stopGroupOrChild(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    try {
      Deno.kill(pid, signal);
    } catch {
      // Gone too: nothing to kill.
    }
  }
}

/** The live members of process group `pgid` other than its leader, read from /proc. */
async function groupMembersButLeader(pgid: number): Promise<number[]> {
  const out: number[] = [];
  // No /proc to ask: the caller falls back to signalling the group.
  for (const [pid, stat] of await procStatTable() ?? []) {
    if (pid !== pgid && stat.state !== "Z" && stat.pgrp === pgid) out.push(pid);
  }
  return out;
}

async function killMembers(pgid: number, signal: Deno.Signal): Promise<void> {
  for (const pid of await groupMembersButLeader(pgid)) {
    try {
      Deno.kill(pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}

/** How long a supervisor gets to reap its killed children and exit before the group kill. */
const LEADER_EXIT_MS = 2000;

const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid"];
let setsidPath: string | null | undefined;

/** The setsid(1) program on Linux, looked up once; null when there is none. */
function setsid(): string | null {
  if (setsidPath === undefined) {
    setsidPath = null;
    if (Deno.build.os === "linux") {
      for (const path of SETSID_PATHS) {
        try {
          if (Deno.statSync(path).isFile) {
            setsidPath = path;
            break;
          }
        } catch {
          // Not there (or not readable): try the next.
        }
      }
    }
  }
  return setsidPath;
}

async function drain(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onChunk?: (chunk: Uint8Array) => void,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  for await (const chunk of stream) {
    onChunk?.(chunk);
    if (kept < limit) {
      const take = chunk.subarray(0, limit - kept);
      parts.push(take);
      kept += take.length;
    }
  }
  const out = new Uint8Array(kept);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Starts `argv[0]` with `argv.slice(1)` in its own process group, with a cleared environment,
 * an optional deadline and output streaming. Never goes through a shell.
 *
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 *
 * const handle = spawnProcess(["echo", "hello"], { env: { PATH: "/usr/bin:/bin" } });
 * const result = await handle.done;
 * strictEqual(result.code, 0);
 * strictEqual(outputText(result.stdout), "hello\n");
 * ```
 */
export function spawnProcess(argv: readonly string[], options: ProcessOptions = {}): ProcessHandle {
  if (argv.length === 0) throw new SpawnError("empty argv");
  const viaSetsid = options.group === "setsid" ? setsid() : null;
  const child = startChild(argv, viaSetsid === null ? argv : [viaSetsid, "--", ...argv], {
    ...options,
    detached: viaSetsid === null,
  });
  const supervised = new SupervisedChild(child, options, viaSetsid !== null);
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    writer.write(options.stdin).then(() => writer.close()).catch(() => {
      // The child closed stdin early (it exited or does not read it): not an error here.
    });
  }
  const terminate = (graceMs?: number) => supervised.terminate(graceMs);
  const deadline = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    supervised.timedOut = true;
    terminate();
  }, options.timeoutMs);
  const onAbort = () => {
    supervised.aborted = true;
    terminate();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const limit = options.maxCaptureBytes ?? 16 * 1024 * 1024;
  const done = (async (): Promise<ProcessResult> => {
    const [stdout, stderr, s] = await Promise.all([
      drain(child.stdout, limit, options.onStdout),
      drain(child.stderr, limit, options.onStderr),
      supervised.status,
    ]);
    clearTimeout(deadline);
    supervised.clearKillTimer();
    options.signal?.removeEventListener("abort", onAbort);
    const { timedOut, aborted } = supervised;
    return { code: s.code, signal: s.signal, stdout, stderr, timedOut, aborted };
  })();
  return { pid: child.pid, done, terminate };
}

/** Spawns `command` (argv, or argv behind setsid) with a cleared environment and piped output. */
function startChild(
  argv: readonly string[],
  command: readonly string[],
  options: ProcessOptions & { detached: boolean },
): Deno.ChildProcess {
  try {
    return new Deno.Command(command[0], {
      args: command.slice(1),
      cwd: options.cwd,
      env: options.env ?? {},
      clearEnv: true,
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: options.detached,
    }).spawn();
  } catch (cause) {
    const reason = cause instanceof Deno.errors.NotFound ? "not found" : (cause as Error).message;
    throw new SpawnError(`cannot start ${argv[0]}: ${reason}`, { cause });
  }
}

/**
 * A started child and its process group: its exit (which kills what is left in the group),
 * and how it is stopped — SIGTERM, a grace period, then SIGKILL; with `leaderLast` the members
 * first and the leader (a sandbox's init) after them.
 */
class SupervisedChild {
  /** Resolves when the child exited (the group's leftovers killed). */
  readonly status: Promise<Deno.CommandStatus>;
  /** The deadline stopped it. */
  timedOut = false;
  /** The caller's signal stopped it. */
  aborted = false;
  readonly #pid: number;
  readonly #options: ProcessOptions;
  readonly #setsid: boolean;
  #exited = false;
  #killTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(child: Deno.ChildProcess, options: ProcessOptions, viaSetsid: boolean) {
    this.#pid = child.pid;
    this.#options = options;
    this.#setsid = viaSetsid;
    this.status = child.status.then((s) => {
      this.#exited = true;
      // Descendants left in the group would hold the output pipes open and run unsupervised.
      killGroup(this.#pid, "SIGKILL");
      return s;
    });
  }

  /** Stops the process group (see the class comment); resolves once it is done trying. */
  async terminate(graceMs = this.#options.killGraceMs ?? 2000): Promise<void> {
    if (this.#exited) return;
    const pid = this.#pid;
    // Through setsid(1) the group exists only once setsid has run: before that, the child.
    const stop = this.#setsid ? stopGroupOrChild : killGroup;
    if (this.#options.leaderLast) {
      await killMembers(pid, "SIGTERM");
      await this.#exitOrAfter(graceMs);
      if (this.#exited) return;
      await killMembers(pid, "SIGKILL");
      await this.#exitOrAfter(LEADER_EXIT_MS);
      if (!this.#exited) stop(pid, "SIGKILL");
      return;
    }
    stop(pid, "SIGTERM");
    await this.#exitOrAfter(graceMs);
    if (!this.#exited) stop(pid, "SIGKILL");
  }

  /** Clears a pending kill wait (the process is done). */
  clearKillTimer(): void {
    clearTimeout(this.#killTimer);
  }

  /** Resolves after `ms` or when the process exits, whichever is first. */
  #exitOrAfter(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#killTimer = setTimeout(resolve, ms);
      this.status.finally(() => {
        clearTimeout(this.#killTimer);
        resolve();
      });
    });
  }
}

/** Runs a process to completion; see {@linkcode spawnProcess}. */
export function runProcess(
  argv: readonly string[],
  options: ProcessOptions = {},
): Promise<ProcessResult> {
  return spawnProcess(argv, options).done;
}

/**
 * Builds a child environment from exact variable names read through `env`, plus explicit
 * extra values. Names are exact (no patterns) so every secret a child sees is named in code.
 */
export function buildChildEnv(
  names: readonly string[],
  env: EnvReader,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return { ...out, ...extra };
}
