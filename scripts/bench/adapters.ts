// Adapter output parsing: how fast a run's stdout becomes progress events, for the two stream
// shapes most agents use (Claude-style stream-json, codex JSONL), fed in 4 KiB chunks as a
// child process delivers them. Also the scripted agent's start-to-exit time (the no-op agent
// of the orchestration-overhead benchmark).
import { fileURLToPath } from "node:url";
import { getAdapter, StreamingParse } from "../../src/adapters/mod.ts";
import { mapEnv, spawnProcess } from "../../src/io/mod.ts";
import { peakRssMiB, report } from "./_report.ts";

const fixtures = fileURLToPath(new URL("../../fixtures/adapters/", import.meta.url));

function stream(lines: string[], turns: number): Uint8Array {
  const body: string[] = [lines[0]];
  for (let i = 0; i < turns; i++) body.push(...lines.slice(1, -1));
  body.push(lines[lines.length - 1]);
  return new TextEncoder().encode(body.join("\n") + "\n");
}

async function parseFigures(cli: string, file: string): Promise<void> {
  const lines = (await Deno.readTextFile(`${fixtures}${cli}/${file}`)).trimEnd().split("\n");
  const bytes = stream(lines, 5000);
  const adapter = getAdapter(cli);
  let events = 0;
  const runs = 5;
  const start = performance.now();
  for (let r = 0; r < runs; r++) {
    const parse = new StreamingParse(adapter.parser());
    for (let i = 0; i < bytes.length; i += 4096) {
      events += parse.push(bytes.subarray(i, i + 4096)).length;
    }
    const last = parse.finish({ code: 0 });
    if (!last.result.ok) throw new Error(`${cli}: the benchmark stream did not parse as success`);
  }
  const seconds = (performance.now() - start) / 1000;
  report(`adapters.parse.${cli}`, "throughput", (bytes.length * runs) / seconds / 1e6, "MB/s");
  report(`adapters.parse.${cli}`, "events", events / seconds, "events/s");
}

await parseFigures("claude", "text_reply.stdout.jsonl");
await parseFigures("codex", "text_reply.stdout.jsonl");

// The scripted agent with one write instruction, spawned as the run loop will.
const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-" });
const home = `${dir}/home`;
await Deno.mkdir(`${home}/tmp`, { recursive: true });
const times: number[] = [];
for (let i = 0; i < 12; i++) {
  const inv = getAdapter("scripted").build({
    prompt: "@agent write out.txt x",
    cwd: dir,
    home,
    env: mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" }),
    executable: Deno.execPath(),
  });
  const t = performance.now();
  const done = await spawnProcess(inv.argv, { cwd: dir, env: inv.env, stdin: inv.stdin }).done;
  if (done.code !== 0) throw new Error(`scripted agent exited ${done.code}`);
  if (i >= 2) times.push(performance.now() - t); // the first runs fill Deno's module cache
}
times.sort((a, b) => a - b);
report("adapters.scripted_agent", "spawn_to_exit_p50", times[Math.floor(times.length / 2)], "ms");
report("adapters", "peak_rss", peakRssMiB(), "MiB");
await Deno.remove(dir, { recursive: true });
