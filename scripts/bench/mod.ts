// `deno task bench [NAME]`: runs every benchmark script (or those whose name starts with NAME)
// as its own process (so peak memory is per benchmark) and prints their figures as they come,
// each beside its reference and the ratio where it has one, with the load average at the start
// and the end (figures taken on a busy machine say so). Each script prints JSON lines (see
// `Figure` in _report.ts).
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import type { Figure } from "./_report.ts";

/** Benchmark scripts, in print order. Each is run with the `dev` permission set. */
const SCRIPTS: string[] = [
  "startup.ts",
  "run.ts",
  "ledger.ts",
  "config.ts",
  "tasks.ts",
  "claims.ts",
  "server.ts",
  "audit.ts",
  "adapters.ts",
  "crypto.ts",
  "policy.ts",
  "attachments.ts",
  "lineage.ts",
  "real_agents.ts",
  "compliance.ts",
];

/** One printed line: the figure, then its reference and the ratio when it has one. */
function formatFigure(fig: Figure): string {
  const head = `${fig.bench.padEnd(12)} ${fig.metric.padEnd(56)} ${
    String(fig.value).padStart(10)
  } ${fig.unit}`;
  if (fig.refLabel === undefined) return head;
  const ref = fig.ref === undefined ? "n/a" : `${fig.ref} ${fig.unit}`;
  const ratio = fig.ratio === undefined ? "" : `  ratio ${fig.ratio}x`;
  const goal = fig.goal === undefined ? "" : ` (goal ${fig.goal})`;
  return `${head.padEnd(86)}  | ref ${ref} [${fig.refLabel}]${ratio}${goal}`;
}

/** Opt-in scripts: run only when named (they take minutes and gigabytes of disk). */
const OPT_IN: string[] = ["compliance_scale.ts", "workers.ts"];

/** Prints the figures a script writes, as they come (a long script shows progress). */
async function printFigures(stream: ReadableStream<Uint8Array>): Promise<void> {
  const decoder = new TextDecoder();
  let partial = "";
  const line = (text: string) => {
    if (text.startsWith("{")) console.log(formatFigure(JSON.parse(text) as Figure));
  };
  for await (const chunk of stream) {
    const parts = (partial + decoder.decode(chunk, { stream: true })).split("\n");
    partial = parts.pop() ?? "";
    parts.forEach(line);
  }
  line(partial + decoder.decode());
}

const here = fromFileUrl(new URL(".", import.meta.url));
const only = Deno.args[0];
let failed = 0;
const loadavg = () => {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
};
console.log(`bench: load average ${loadavg()} at start (${navigator.hardwareConcurrency} cores)`);
for (const script of [...SCRIPTS, ...OPT_IN]) {
  const optIn = OPT_IN.includes(script);
  if (optIn ? only !== script.replace(/\.ts$/, "") : only && !script.startsWith(only)) continue;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--frozen", "-P=dev", join(here, script)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  await printFigures(child.stdout);
  const status = await child.status;
  if (status.code !== 0) {
    console.error(`bench ${script} failed with exit code ${status.code}`);
    failed++;
  }
}
console.log(`bench: load average ${loadavg()} at the end`);
if (failed > 0) Deno.exit(1);
