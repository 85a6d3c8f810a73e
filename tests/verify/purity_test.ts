// The verifier's module graph (src/verify, and the pure src/lineage it builds on) stays inside
// the folders the read-only `bernstein-verify` may load, and never writes, spawns, reads the
// environment or opens the network (DESIGN.md: "The verifier stays tiny").
import { deepStrictEqual, ok } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { forbiddenApiIn, verifierModuleProblem } from "../_helpers/verifier_rules.ts";

async function graph(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `--config=${REPO_ROOT}deno.json`, entry],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  return info.modules.map((m) => m.specifier);
}

for (const entry of ["src/verify/mod.ts", "src/lineage/mod.ts"]) {
  Deno.test(`${entry}: only verifier-safe modules, and none that writes, spawns or reads env`, async () => {
    const modules = await graph(`${REPO_ROOT}${entry}`);
    const bad: string[] = [];
    for (const spec of modules) {
      const rel = spec.startsWith("file://")
        ? fromFileUrl(spec).slice(REPO_ROOT.length)
        : undefined;
      const problem = verifierModuleProblem(spec, rel);
      if (problem !== undefined) bad.push(problem);
      if (rel === undefined || !rel.endsWith(".ts")) continue;
      const text = await Deno.readTextFile(fromFileUrl(spec));
      const api = forbiddenApiIn(text);
      if (api !== undefined) bad.push(`${rel}: ${api}`);
      // The pure lineage model touches no Deno API at all (reads included).
      if (entry === "src/lineage/mod.ts" && /\bDeno\./.test(text)) bad.push(`${rel}: Deno API`);
    }
    deepStrictEqual(bad, []);
    ok(modules.length > 5);
  });
}
