// `deno task bench`: runs every benchmark script as its own process (so peak memory is per
// benchmark) and prints their figures. Each script prints JSON lines
// {"bench": name, "metric": name, "value": number, "unit": text}.
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

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
  "attachments.ts",
  "lineage.ts",
  "real_agents.ts",
  "compliance.ts",
];

interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
}

const here = fromFileUrl(new URL(".", import.meta.url));
const only = Deno.args[0];
const rows: Figure[] = [];
let failed = 0;
for (const script of SCRIPTS) {
  if (only && !script.startsWith(only)) continue;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--frozen", "-P=dev", join(here, script)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) {
    console.error(`bench ${script} failed with exit code ${out.code}`);
    failed++;
  }
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    if (!line.startsWith("{")) continue;
    const fig = JSON.parse(line) as Figure;
    rows.push(fig);
    console.log(
      `${fig.bench.padEnd(34)} ${fig.metric.padEnd(30)} ${
        String(fig.value).padStart(12)
      } ${fig.unit}`,
    );
  }
}
if (failed > 0) Deno.exit(1);
