// Shared by benchmark scripts: print one figure (alone, or beside its reference with the
// ratio), and measure a whole command from outside: wall time, CPU time and peak memory.

/** One printed figure (a JSON line read by scripts/bench/mod.ts). */
export interface Figure {
  /** Benchmark script. */
  bench: string;
  /** What was measured. */
  metric: string;
  /** The figure. */
  value: number;
  /** Its unit. */
  unit: string;
  /** The reference it is judged against, in the same unit (measured in the same run, or a goal). */
  ref?: number;
  /** What the reference is. */
  refLabel?: string;
  /** value / ref. */
  ratio?: number;
  /** The goal for the ratio, in words (`<= 0.33`). */
  goal?: string;
}

const round = (v: number) => Math.round(v * 100) / 100;

/** Prints one figure as a JSON line for scripts/bench/mod.ts. */
export function report(bench: string, metric: string, value: number, unit: string): void {
  console.log(JSON.stringify({ bench, metric, value: round(value), unit } satisfies Figure));
}

/** A reference figure: a measurement of the same run, or the goal itself. */
export interface Reference {
  /** In the figure's unit; undefined when it could not be measured (said by `label`). */
  value: number | undefined;
  /** What it is (`python3 + OpenSSL reference`, `goal`, or why it is missing). */
  label: string;
  /** The goal for value / reference, in words. */
  goal?: string;
}

/** Prints a figure beside its reference and the ratio (none when the reference is missing). */
export function compare(
  bench: string,
  metric: string,
  value: number,
  unit: string,
  reference: Reference,
): void {
  const fig: Figure = { bench, metric, value: round(value), unit, refLabel: reference.label };
  if (reference.value !== undefined && reference.value > 0) {
    fig.ref = round(reference.value);
    fig.ratio = Math.round((value / reference.value) * 1000) / 1000;
  }
  if (reference.goal !== undefined) fig.goal = reference.goal;
  console.log(JSON.stringify(fig));
}

/** Peak resident memory of this process in MiB (Linux VmHWM), or NaN elsewhere. */
export function peakRssMiB(): number {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system) this process has used so far, or NaN off Linux. */
export function cpuSeconds(): number {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // CLK_TCK = 100
  } catch {
    return NaN;
  }
}

/** What {@linkcode timeCommand} measured. */
export interface CommandFigures {
  /** Wall time. */
  ms: number;
  /** User + system CPU time of the command and the children it waited for. */
  cpuMs: number;
  /** Peak resident memory of the largest process, MiB. */
  peakMiB: number;
  /** Exit code. */
  code: number;
  /** Its stdout. */
  stdout: string;
  /** Its stderr. */
  stderr: string;
}

const GNU_TIME = "/usr/bin/time";

function hasGnuTime(): boolean {
  try {
    return Deno.statSync(GNU_TIME).isFile;
  } catch {
    return false;
  }
}

/**
 * Runs a command and measures it: wall time from here, CPU time and peak RSS from the kernel's
 * own accounting of the finished child (through GNU time, `/usr/bin/time`), or by sampling
 * /proc every 20 ms where GNU time is missing. CPU time is what to compare on a busy machine.
 */
export async function timeCommand(
  argv: string[],
  options: { cwd?: string; env?: Record<string, string>; clearEnv?: boolean } = {},
): Promise<CommandFigures> {
  const gnu = hasGnuTime();
  const out = gnu ? await Deno.makeTempFile({ prefix: "bench-time-" }) : "";
  const full = gnu ? [GNU_TIME, "-q", "-f", "%e %U %S %M", "-o", out, ...argv] : argv;
  const start = performance.now();
  const child = new Deno.Command(full[0], {
    args: full.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.clearEnv,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let peak = 0;
  let ticks = 0;
  const poll = gnu ? undefined : setInterval(() => {
    try {
      const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      const stat = Deno.readTextFileSync(`/proc/${child.pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks = Math.max(ticks, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process has exited between polls.
    }
  }, 20);
  const result = await child.output();
  const ms = performance.now() - start;
  clearInterval(poll);
  const dec = new TextDecoder();
  let cpuMs = ticks * 10;
  if (gnu) {
    const [, user, system, maxKiB] = (await Deno.readTextFile(out)).trim().split("\n").pop()
      ?.split(" ").map(Number) ?? [];
    await Deno.remove(out);
    cpuMs = (user + system) * 1000;
    peak = maxKiB / 1024;
  }
  return {
    ms,
    cpuMs,
    peakMiB: peak,
    code: result.code,
    stdout: dec.decode(result.stdout),
    stderr: dec.decode(result.stderr),
  };
}

/** The load average of the last minute (NaN off Linux): printed with figures taken under load. */
export function loadAverage(): number {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    return NaN;
  }
}
