// Wall time of a real `bernstein run` per installed pinned agent CLI: the two-step plan of
// tests/e2e/real_agents/ (both steps by that CLI, in parallel) against the local model
// server — CLI start-up, two model turns per agent, the merges, lineage and audit. A CLI that
// is not installed is reported as skipped on stderr, with no figure.
import { startEgressSentinel, startModelServer } from "../../tests/e2e/model_servers/mod.ts";
import { REAL_CLIS, runReal, type StepSpec } from "../../tests/e2e/_real_run.ts";
import { withTempDir } from "../../tests/_helpers/temp.ts";
import { report } from "./_report.ts";

function steps(cli: string): StepSpec[] {
  return ["alpha", "beta"].map((name, i) => ({
    title: `Write ${name}`,
    cli,
    role: i === 0 ? "backend" : "docs",
    files: [`${name}.txt`],
    expect: [`${name}.txt`],
    description: `@model write ${name}.txt ${name}\n@model say wrote ${name}.txt`,
  }));
}

for (const cli of REAL_CLIS) {
  if (cli.exe === undefined) {
    console.error(`real_agents: ${cli.name}${cli.why}`);
    continue;
  }
  await withTempDir(async (dir) => {
    const server = startModelServer();
    const sentinel = startEgressSentinel();
    try {
      const run = await runReal(dir, { steps: steps(cli.name), server, sentinel });
      if (run.summary?.health !== "HEALTHY") {
        throw new Error(`${cli.name}: the run was not healthy:\n${run.cli.stderr}`);
      }
      report("real_agents", `${cli.name} ${cli.pin.version} two-step run`, run.seconds, "s");
    } finally {
      await sentinel.close();
      await server.close();
    }
  });
}
