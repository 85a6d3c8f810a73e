// CLI start-up: `bernstein --version` and `--help` next to a hello-world `deno run`.
// Goal (foundation issue): within 1.5x of hello-world.
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { v8FlagsArg } from "../runtime_flags.ts";
import { report } from "./_report.ts";

const root = fromFileUrl(new URL("../../", import.meta.url));
const hello = join(await Deno.makeTempDir(), "hello.ts");
await Deno.writeTextFile(hello, 'console.log("hello");\n');

async function median(args: string[], runs = 15): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      stdout: "null",
      stderr: "null",
    }).output();
    if (out.code !== 0) throw new Error(`${args.join(" ")} exited ${out.code}`);
    if (i >= 2) times.push(performance.now() - t); // two warm-up runs fill the module cache
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const base = await median(["run", "-q", hello]);
// With the compiled binaries' V8 flags, as they start.
const flags = v8FlagsArg();
const version = await median([
  "run",
  "-q",
  "--frozen",
  "-P=bernstein",
  flags,
  "main.ts",
  "--version",
]);
const help = await median(["run", "-q", "--frozen", "-P=bernstein", flags, "main.ts", "--help"]);
report("startup", "hello-world deno run", base, "ms (median of 15)");
report("startup", "bernstein --version", version, "ms (median of 15)");
report("startup", "bernstein --help", help, "ms (median of 15)");
report("startup", "--version / hello-world", version / base, "x (goal <= 1.5)");
