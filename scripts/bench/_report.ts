// Shared by benchmark scripts: print one figure, read peak memory.

/** Prints one figure as a JSON line for scripts/bench/mod.ts. */
export function report(bench: string, metric: string, value: number, unit: string): void {
  console.log(JSON.stringify({ bench, metric, value: Math.round(value * 100) / 100, unit }));
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

/** Peak resident memory of a finished child, from `/usr/bin/time -v`-free means: run it and poll. */
export async function timeCommand(
  argv: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ ms: number; code: number; peakMiB: number }> {
  const start = performance.now();
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: options.cwd,
    env: options.env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let peak = 0;
  const poll = setInterval(() => {
    try {
      const s = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const m = /VmHWM:\s+(\d+) kB/.exec(s);
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // The process has exited between polls.
    }
  }, 20);
  const out = await child.output();
  clearInterval(poll);
  return { ms: performance.now() - start, code: out.code, peakMiB: peak };
}
