// `adapters check`: run the version probe and check every relied-on flag against the
// installed CLI's help (or, for flags the CLI hides from its help, a probe that uses it).
import { outputText, type ProcessResult, runProcess } from "../io/mod.ts";
import type { Adapter, FlagContract } from "./types.ts";

/** Runs a probe command; injected so the checks are testable with scripted outputs. */
export type ProbeRunner = (
  argv: readonly string[],
  options: { env: Record<string, string>; timeoutMs: number },
) => Promise<Pick<ProcessResult, "code" | "stdout" | "stderr" | "timedOut">>;

/** The real runner: no stdin, own process group, cleared env, deadline. */
export function systemProbeRunner(
  argv: readonly string[],
  options: { env: Record<string, string>; timeoutMs: number },
): Promise<ProcessResult> {
  return runProcess(argv, { env: options.env, timeoutMs: options.timeoutMs, killGraceMs: 500 });
}

/** Options for the probes. */
export interface ProbeOptions {
  /** Absolute path of the executable. */
  executable: string;
  /** Environment of the probes (PATH, a throwaway HOME, …). */
  env: Record<string, string>;
  /** Deadline of each probe in ms. */
  timeoutMs: number;
  /** Runner (default: real processes). */
  runner?: ProbeRunner;
}

/** What the version probe found. */
export interface VersionResult {
  /** The version string, when the probe printed one. */
  version?: string;
  /** Why there is none. */
  error?: string;
}

function combined(result: { stdout: Uint8Array; stderr: Uint8Array }): string {
  return `${outputText(result.stdout)}\n${outputText(result.stderr)}`;
}

/** Runs the adapter's version probe under the deadline. */
export async function probeVersion(
  adapter: Adapter,
  options: ProbeOptions,
): Promise<VersionResult> {
  const runner = options.runner ?? systemProbeRunner;
  let result;
  try {
    result = await runner([options.executable, ...adapter.version.args], options);
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (result.timedOut) return { error: `version probe timed out after ${options.timeoutMs} ms` };
  const text = combined(result);
  const match = adapter.version.pattern.exec(text);
  if (result.code !== 0) {
    const line = text.trim().split("\n")[0] ?? "";
    return { error: `version probe exited ${result.code}${line ? `: ${line}` : ""}` };
  }
  if (match === null) return { error: `no version in: ${text.trim().slice(0, 120)}` };
  return { version: match[1] };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// One earlier spelling on an option line: `-m, `, `--allowedTools, `, `-o FILE, `.
const EARLIER_SPELLING = String
  .raw`-{1,2}[A-Za-z0-9][\w-]*(?:[ =](?:<[^>]*>|\[[^\]]*\]|[A-Z_]+))?,\s*`;

/**
 * True when `flag` is documented as an option in help text: it starts an option line,
 * possibly after other spellings (`-p, --print`). A mention inside another option's
 * description does not count, so a removed flag is not hidden by a cross-reference.
 */
export function helpMentionsFlag(help: string, flag: string): boolean {
  const re = new RegExp(
    String.raw`^[ \t]*(?:${EARLIER_SPELLING})*${escapeRegExp(flag)}(?=$|[\s,=<])`,
    "m",
  );
  return re.test(help);
}

/** The result of checking one flag. */
export interface FlagCheck {
  /** The flag. */
  flag: string;
  /** Present in the installed CLI. */
  present: boolean;
  /** How it was checked: the help command, or a probe for a hidden flag. */
  via: string;
  /** Why it counts as missing (or a note). */
  detail?: string;
}

/** Checks every flag of the adapter's contract (help texts are fetched once per command). */
export async function checkFlags(adapter: Adapter, options: ProbeOptions): Promise<FlagCheck[]> {
  const runner = options.runner ?? systemProbeRunner;
  const helps = new Map<string, Promise<{ text: string; error?: string }>>();
  function helpFor(args: readonly string[]) {
    const key = args.join(" ");
    let cached = helps.get(key);
    if (cached === undefined) {
      cached = (async () => {
        try {
          const result = await runner([options.executable, ...args], options);
          if (result.timedOut) return { text: "", error: `'${key}' timed out` };
          return { text: combined(result) };
        } catch (error) {
          return { text: "", error: (error as Error).message };
        }
      })();
      helps.set(key, cached);
    }
    return cached;
  }
  async function checkOne(contract: FlagContract): Promise<FlagCheck> {
    if (contract.hidden !== undefined) {
      const via = contract.hidden.probe.join(" ");
      let result;
      try {
        result = await runner([options.executable, ...contract.hidden.probe], options);
      } catch (error) {
        return { flag: contract.flag, present: false, via, detail: (error as Error).message };
      }
      if (result.timedOut) {
        return { flag: contract.flag, present: false, via, detail: "probe timed out" };
      }
      const text = combined(result);
      const rejected = contract.hidden.unknown_option.test(text) && text.includes(contract.flag);
      return rejected
        ? { flag: contract.flag, present: false, via, detail: "the CLI rejects it as unknown" }
        : { flag: contract.flag, present: true, via, detail: "hidden from --help; accepted" };
    }
    const args = contract.help ?? ["--help"];
    const via = args.join(" ");
    const help = await helpFor(args);
    if (help.error !== undefined) {
      return { flag: contract.flag, present: false, via, detail: help.error };
    }
    return helpMentionsFlag(help.text, contract.flag)
      ? { flag: contract.flag, present: true, via }
      : { flag: contract.flag, present: false, via, detail: `not in '${via}' output` };
  }
  const out: FlagCheck[] = [];
  // Sequential: CLIs started in parallel (node start-up) would only compete for 2 cores.
  for (const contract of adapter.flags) out.push(await checkOne(contract));
  return out;
}
