// Completion signals: does a step's worktree show the work is there? The decision for each
// signal is a pure function of what was observed; observing (file system, processes) goes
// through an injected `SignalEdges`, whose real implementation confines every path to the
// worktree (no `..`, no symlink escapes) and runs commands with an env allowlist and deadline.
import type { CommandIsolator } from "./gates.ts";
import { join } from "node:path";
import { compareCodePoints } from "../canonical/mod.ts";
import { DEFAULT_TUNING } from "../config/mod.ts";
import {
  buildChildEnv,
  checkRelativePath,
  type EnvReader,
  outputText,
  PathEscapeError,
  readUpTo,
  resolveInside,
  runProcess,
  SpawnError,
} from "../io/mod.ts";
import { compileGlob, type CompletionSignal, globLiteralPrefix } from "../plan/mod.ts";

/** What is at a path inside the worktree. */
export type PathProbe =
  | { kind: "file" | "directory" | "other" }
  | { kind: "missing" }
  | { kind: "refused"; reason: string };

/** The start of a file's text, or why it could not be read. */
export type ReadProbe =
  | { ok: true; text: string; truncated: boolean }
  | { ok: false; missing: boolean; reason: string };

/** Paths matching a glob inside the worktree. */
export interface GlobProbe {
  /** Matching relative paths, sorted. */
  matches: string[];
  /** Matching entries not counted because they leave the worktree (reasons). */
  refused: string[];
  /** The walk stopped at its entry limit. */
  truncated: boolean;
  /** The glob itself was refused (bad syntax, escapes the worktree). */
  invalid?: string;
}

/** How a command ended, or why it did not start. */
export type CommandProbe =
  | { started: true; code: number; timedOut: boolean; output: string }
  | { started: false; reason: string };

/** The observations the evaluator needs; {@linkcode worktreeEdges} is the real one. */
export interface SignalEdges {
  /** What is at `path` (relative to the worktree). */
  inspect(path: string): Promise<PathProbe>;
  /** The text of the file at `path`. */
  readText(path: string): Promise<ReadProbe>;
  /** Entries matching `pattern`. */
  glob(pattern: string): Promise<GlobProbe>;
  /** Runs `command` in the worktree with a deadline. */
  run(command: readonly string[], timeoutMs: number): Promise<CommandProbe>;
}

/** One observation, tagged by what was observed. */
export type SignalObservation =
  | { kind: "path"; probe: PathProbe }
  | { kind: "read"; probe: ReadProbe }
  | { kind: "glob"; probe: GlobProbe }
  | { kind: "run"; probe: CommandProbe; timeoutMs: number };

/** The verdict on one signal. */
export interface SignalResult {
  /** Position in the step's `completion_signals`. */
  index: number;
  /** The signal. */
  signal: CompletionSignal;
  /** Whether it is met. */
  met: boolean;
  /** Why, in a few words (`src/a.ts does not exist`, `exit 1: 2 tests failed`). */
  reason: string;
  /** Tail of a command's output (`test_passes` only). */
  output?: string;
}

/** The verdict on a step: met when every signal is met (and when there are none). */
export interface CompletionReport {
  /** All signals met. */
  met: boolean;
  /** One result per signal, in order. */
  results: SignalResult[];
}

/** Variables a `test_passes` command sees by default (values from the injected env). */
export const DEFAULT_SIGNAL_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TERM",
];

function describe(signal: CompletionSignal): string {
  switch (signal.kind) {
    case "path_exists":
      return signal.path;
    case "glob_exists":
      return signal.glob;
    case "file_contains":
      return signal.path;
    case "test_passes":
      return signal.command.join(" ");
  }
}

function lastLine(text: string): string {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const line = lines.at(-1) ?? "";
  return line.length > 200 ? line.slice(0, 197) + "..." : line;
}

/**
 * Decides one signal from what was observed. Pure. A regex is matched with the `m` and `u`
 * flags (`^`/`$` match at line ends).
 */
export function decideSignal(
  signal: CompletionSignal,
  observation: SignalObservation,
): { met: boolean; reason: string } {
  const what = describe(signal);
  switch (signal.kind) {
    case "path_exists": {
      if (observation.kind !== "path") break;
      const p = observation.probe;
      if (p.kind === "missing") return { met: false, reason: `${what} does not exist` };
      if (p.kind === "refused") return { met: false, reason: `${what} refused: ${p.reason}` };
      return { met: true, reason: `${what} exists (${p.kind})` };
    }
    case "glob_exists":
      if (observation.kind !== "glob") break;
      return decideGlob(what, observation.probe);
    case "file_contains":
      if (observation.kind !== "read") break;
      return decideFileContains(what, signal, observation.probe);
    case "test_passes": {
      if (observation.kind !== "run") break;
      const c = observation.probe;
      if (!c.started) return { met: false, reason: `${what} did not start: ${c.reason}` };
      if (c.timedOut) {
        return { met: false, reason: `${what} timed out after ${observation.timeoutMs / 1000}s` };
      }
      if (c.code === 0) return { met: true, reason: `${what} passed (exit 0)` };
      const tail = lastLine(c.output);
      return { met: false, reason: `${what} failed (exit ${c.code})${tail ? `: ${tail}` : ""}` };
    }
  }
  return {
    met: false,
    reason:
      `${what}: internal error: a ${observation.kind} observation cannot decide a ${signal.kind} signal`,
  };
}

type Decision = { met: boolean; reason: string };

/** A `glob_exists` signal from the matches found. */
function decideGlob(what: string, g: GlobProbe): Decision {
  if (g.invalid !== undefined) return { met: false, reason: `${what} refused: ${g.invalid}` };
  if (g.matches.length > 0) {
    const n = g.matches.length;
    return {
      met: true,
      reason: `${what} matches ${n} path${n === 1 ? "" : "s"} (first: ${g.matches[0]})`,
    };
  }
  const notes = [
    g.refused.length > 0 ? `${g.refused.length} match(es) refused: ${g.refused[0]}` : "",
    g.truncated ? "the search stopped at its entry limit" : "",
  ].filter(Boolean);
  return {
    met: false,
    reason: `${what} matches nothing${notes.length ? ` (${notes.join("; ")})` : ""}`,
  };
}

/** A `file_contains` signal from the file read (substring, or regex with `m` and `u`). */
function decideFileContains(
  what: string,
  signal: Extract<CompletionSignal, { kind: "file_contains" }>,
  r: Extract<SignalObservation, { kind: "read" }>["probe"],
): Decision {
  if (!r.ok) {
    return {
      met: false,
      reason: r.missing ? `${what} does not exist` : `${what} cannot be read: ${r.reason}`,
    };
  }
  const cut = r.truncated ? " (only the start of the file was searched)" : "";
  if ("contains" in signal) {
    return r.text.includes(signal.contains)
      ? { met: true, reason: `${what} contains ${JSON.stringify(signal.contains)}` }
      : {
        met: false,
        reason: `${what} does not contain ${JSON.stringify(signal.contains)}${cut}`,
      };
  }
  let re: RegExp;
  try {
    re = new RegExp(signal.regex, "mu");
  } catch (error) {
    return {
      met: false,
      reason: `invalid regex /${signal.regex}/: ${(error as Error).message}`,
    };
  }
  return re.test(r.text)
    ? { met: true, reason: `${what} matches /${signal.regex}/` }
    : { met: false, reason: `${what} does not match /${signal.regex}/${cut}` };
}

/** Options of {@linkcode evaluateCompletionSignals}. */
export interface EvaluateOptions {
  /** Deadline of a `test_passes` command without its own `timeout_s` (default: the gate timeout). */
  defaultTimeoutMs?: number;
}

/**
 * Observes and decides every signal of a step, in order (all of them, so each gets a reason);
 * commands run one at a time.
 *
 * @example
 * ```ts ignore
 * const edges = worktreeEdges(".sdd/worktrees/s1", { env: processEnv });
 * const report = await evaluateCompletionSignals(step.completion_signals, edges);
 * if (!report.met) console.log(report.results.filter((r) => !r.met).map((r) => r.reason));
 * ```
 */
export async function evaluateCompletionSignals(
  signals: readonly CompletionSignal[],
  edges: SignalEdges,
  options: EvaluateOptions = {},
): Promise<CompletionReport> {
  const results: SignalResult[] = [];
  for (const [index, signal] of signals.entries()) {
    let observation: SignalObservation;
    switch (signal.kind) {
      case "path_exists":
        observation = { kind: "path", probe: await edges.inspect(signal.path) };
        break;
      case "glob_exists":
        observation = { kind: "glob", probe: await edges.glob(signal.glob) };
        break;
      case "file_contains":
        observation = { kind: "read", probe: await edges.readText(signal.path) };
        break;
      case "test_passes": {
        const timeoutMs = signal.timeout_s !== undefined
          ? signal.timeout_s * 1000
          : options.defaultTimeoutMs ?? DEFAULT_TUNING.gates.timeout_s * 1000;
        observation = { kind: "run", probe: await edges.run(signal.command, timeoutMs), timeoutMs };
        break;
      }
    }
    const verdict = decideSignal(signal, observation);
    const output = observation.kind === "run" && observation.probe.started
      ? observation.probe.output
      : undefined;
    results.push({ index, signal, ...verdict, ...(output !== undefined ? { output } : {}) });
  }
  return { met: results.every((r) => r.met), results };
}

/** Options of {@linkcode worktreeEdges}. */
export interface WorktreeEdgeOptions {
  /** Where `test_passes` commands read their allowed variables from. */
  env: EnvReader;
  /** Variables a command may see (default {@linkcode DEFAULT_SIGNAL_ENV}); nothing else leaks. */
  envAllowlist?: readonly string[];
  /** Most bytes of a file `file_contains` searches (default 8 MiB). */
  maxReadBytes?: number;
  /** Most directory entries a glob walk visits (default 100 000). */
  maxGlobEntries?: number;
  /** Most bytes of command output kept for the report (default 4 KiB, the tail). */
  maxOutputBytes?: number;
  /** Runs commands in the agent's isolation (default: directly). */
  isolate?: CommandIsolator;
}

function refusal(error: unknown): string | undefined {
  return error instanceof PathEscapeError ? error.message : undefined;
}

async function confined(root: string, path: string): Promise<string | { refused: string }> {
  try {
    checkRelativePath(path);
    return await resolveInside(root, path);
  } catch (error) {
    const reason = refusal(error);
    if (reason !== undefined) return { refused: reason };
    throw error;
  }
}

/**
 * The real edges for a worktree: paths are resolved inside it (symlinks followed and refused
 * when they leave it), commands run there through `runProcess` with a cleared environment
 * plus the allowlist, their own process group and a deadline.
 */
export function worktreeEdges(worktree: string, options: WorktreeEdgeOptions): SignalEdges {
  const maxRead = options.maxReadBytes ?? 8 * 1024 * 1024;
  const maxEntries = options.maxGlobEntries ?? 100_000;
  const maxOutput = options.maxOutputBytes ?? 4096;
  return {
    inspect: (path) => inspectInside(worktree, path),
    readText: (path) => readTextInside(worktree, path, maxRead),
    glob: (pattern) => globInside(worktree, pattern, maxEntries),
    run: (command, timeoutMs) => runInside(worktree, command, timeoutMs, options, maxOutput),
  };
}

type Edge<K extends keyof SignalEdges> = Awaited<ReturnType<SignalEdges[K]>>;

/** What `path` is inside the worktree (refused when it leaves it). */
async function inspectInside(worktree: string, path: string): Promise<Edge<"inspect">> {
  const at = await confined(worktree, path);
  if (typeof at !== "string") return { kind: "refused", reason: at.refused };
  try {
    const info = await Deno.stat(at);
    return { kind: info.isFile ? "file" : info.isDirectory ? "directory" : "other" };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { kind: "missing" };
    throw error;
  }
}

/** The text of a regular file inside the worktree, at most `maxRead` bytes of it. */
async function readTextInside(
  worktree: string,
  path: string,
  maxRead: number,
): Promise<Edge<"readText">> {
  const at = await confined(worktree, path);
  if (typeof at !== "string") return { ok: false, missing: false, reason: at.refused };
  let file: Deno.FsFile;
  try {
    file = await Deno.open(at, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: false, missing: true, reason: "not found" };
    }
    return { ok: false, missing: false, reason: (error as Error).message };
  }
  try {
    const info = await file.stat();
    if (!info.isFile) return { ok: false, missing: false, reason: "not a regular file" };
    const buf = await readUpTo(file, Math.min(info.size, maxRead));
    return { ok: true, text: new TextDecoder().decode(buf), truncated: info.size > maxRead };
  } finally {
    file.close();
  }
}

/** The worktree's paths matching `pattern` (sorted), walking at most `maxEntries` entries. */
async function globInside(
  worktree: string,
  pattern: string,
  maxEntries: number,
): Promise<Edge<"glob">> {
  let regex: RegExp;
  try {
    checkRelativePath(pattern, "glob");
    regex = compileGlob(pattern);
  } catch (error) {
    return { matches: [], refused: [], truncated: false, invalid: (error as Error).message };
  }
  const prefix = globLiteralPrefix(pattern);
  const start = prefix === "" ? worktree : await confined(worktree, prefix);
  if (typeof start !== "string") {
    return { matches: [], refused: [], truncated: false, invalid: start.refused };
  }
  const matches: string[] = [];
  const refused: string[] = [];
  const truncated = await walkGlob([start, prefix], maxEntries, async (entry, child) => {
    if (!regex.test(child)) return;
    if (!entry.isSymlink) return void matches.push(child);
    const at = await confined(worktree, child);
    if (typeof at === "string") matches.push(child);
    else refused.push(at.refused);
  });
  return { matches: matches.sort(compareCodePoints), refused, truncated };
}

/**
 * Walks the folders under `start` (outside `.git`, not into symlinked folders: their targets
 * may lie outside the worktree), telling `visit` each entry and its worktree-relative path;
 * true when it stopped at `maxEntries`.
 */
async function walkGlob(
  start: [string, string],
  maxEntries: number,
  visit: (entry: Deno.DirEntry, child: string) => Promise<void>,
): Promise<boolean> {
  let visited = 0;
  const stack: [string, string][] = [start];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [dir, rel] = next;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        continue;
      }
      throw error;
    }
    for (const entry of entries) {
      if (++visited > maxEntries) return true;
      if (entry.name === ".git") continue;
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      await visit(entry, child);
      if (entry.isDirectory) stack.push([join(dir, entry.name), child]);
    }
  }
  return false;
}

/** Runs a signal's command in the worktree: exit code, timeout and the tail of its output. */
async function runInside(
  worktree: string,
  command: readonly string[],
  timeoutMs: number,
  options: WorktreeEdgeOptions,
  maxOutput: number,
): Promise<Edge<"run">> {
  const argv = [...command];
  if (argv[0].includes("/")) {
    // A program path is resolved inside the worktree, never against the parent's cwd.
    const at = await confined(worktree, argv[0]);
    if (typeof at !== "string") return { started: false, reason: at.refused };
    argv[0] = at;
  }
  const env = buildChildEnv(options.envAllowlist ?? DEFAULT_SIGNAL_ENV, options.env);
  let release: (() => Promise<void>) | undefined;
  try {
    const run = options.isolate
      ? await options.isolate(argv, { cwd: worktree, env })
      : { argv, env };
    release = "release" in run ? run.release : undefined;
    const result = await runProcess(run.argv, {
      cwd: worktree,
      env: run.env,
      timeoutMs,
      killGraceMs: 1000,
      leaderLast: "leaderLast" in run ? run.leaderLast : undefined,
    });
    const all = new Uint8Array(result.stdout.length + result.stderr.length);
    all.set(result.stdout);
    all.set(result.stderr, result.stdout.length);
    const tail = all.subarray(Math.max(0, all.length - maxOutput));
    return {
      started: true,
      code: result.code,
      timedOut: result.timedOut,
      output: outputText(tail),
    };
  } catch (error) {
    if (error instanceof SpawnError) return { started: false, reason: error.message };
    throw error;
  } finally {
    await release?.().catch(() => {});
  }
}
