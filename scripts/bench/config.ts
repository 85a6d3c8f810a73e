// Configuration parse + validate time of big files: 100 KB and 1 MB of role_model_policy
// entries (valid) and 1 MB of unknown keys (every one a warning, collapsed). Parsing is
// linear: the 1 MB figure is about ten times the 100 KB one. References: the 1 s goal for a
// 1 MB file, and the yaml library's own duplicate-key check (`uniqueKeys: true`, quadratic),
// which the loader used before, timed on the 100 KB file.
import { parseDocument } from "yaml";
import { parseYamlLayer, resolveConfig } from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { report } from "./_report.ts";

function policyFile(bytes: number): string {
  const lines = ["max_agents: 4", "role_model_policy:"];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const entry = `  role_${i}:\n    cli: claude\n    model: sonnet\n    effort: high\n` +
      `    ladder: [{model: opus}, {cli: codex, model: gpt-5}]\n`;
    lines.push(entry.trimEnd());
    size += entry.length;
  }
  return lines.join("\n") + "\n";
}

function unknownKeysFile(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `unknown_setting_number_${i}: some value ${i}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n") + "\n";
}

function loadMs(text: string): number {
  const best: number[] = [];
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    const parsed = parseYamlLayer(text, "bernstein.yaml", "bernstein.yaml");
    const r = resolveConfig({ layers: [parsed.layer], env: mapEnv({}) });
    best.push(performance.now() - t0);
    if (parsed.problems.length > 0) throw new Error(parsed.problems[0].message);
    if (r.problems.some((p) => p.severity === "error")) throw new Error("bench file is invalid");
  }
  return Math.min(...best);
}

const GOAL_1MB_MS = 1000;
const small = policyFile(100 * 1024);
const large = policyFile(1024 * 1024);
const smallMs = loadMs(small);
const largeMs = loadMs(large);
const unknownMs = loadMs(unknownKeysFile(1024 * 1024));
const t0 = performance.now();
parseDocument(small, { uniqueKeys: true });
const quadraticMs = performance.now() - t0;

report("config", "parse+validate 100 KB", smallMs, "ms");
report(
  "config",
  "parse+validate 1 MB",
  largeMs,
  `ms (goal ${GOAL_1MB_MS} ms: ${(largeMs / GOAL_1MB_MS).toFixed(2)}× of it)`,
);
report("config", "1 MB / 100 KB", largeMs / smallMs, "× (10 = linear)");
report("config", "parse+validate 1 MB unknown keys", unknownMs, "ms (warnings collapsed)");
report(
  "config",
  "reference: uniqueKeys:true 100 KB",
  quadraticMs,
  `ms (${(quadraticMs / smallMs).toFixed(1)}× ours; the old quadratic check)`,
);
