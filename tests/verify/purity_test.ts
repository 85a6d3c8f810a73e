// The verifier's module graph (src/verify, and the pure src/lineage it builds on) stays inside
// the folders the read-only `bernstein-verify` may load, and never writes, spawns, reads the
// environment or opens the network (DESIGN.md: "The verifier stays tiny").
import { deepStrictEqual, ok } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { REPO_ROOT } from "../_helpers/cli.ts";

const ALLOWED_LOCAL = [
  "src/verify/",
  "src/lineage/",
  "src/canonical/",
  "src/crypto/",
  "src/errors/",
  "src/meta/",
  "deno.json",
];
const ALLOWED_NODE = ["node:crypto", "node:buffer", "node:path"];
const FORBIDDEN = [
  /Deno\.Command/,
  /Deno\.(write|writeFile|writeTextFile|mkdir|remove|rename|chmod|create|truncate|symlink|link)\w*\(/,
  /Deno\.env/,
  /\bfetch\(/,
  /Deno\.(connect|listen|serve)/,
  /write:\s*true/,
];

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
      if (spec.startsWith("file://")) {
        const rel = fromFileUrl(spec).slice(REPO_ROOT.length);
        if (!ALLOWED_LOCAL.some((p) => rel.startsWith(p)) || rel.startsWith("src/lineage/store/")) {
          bad.push(rel);
          continue;
        }
        if (!rel.endsWith(".ts")) continue;
        const text = await Deno.readTextFile(fromFileUrl(spec));
        for (const rule of FORBIDDEN) if (rule.test(text)) bad.push(`${rel}: ${rule}`);
        if (entry === "src/lineage/mod.ts" && /\bDeno\./.test(text)) bad.push(`${rel}: Deno API`);
      } else if (spec.startsWith("node:")) {
        if (!ALLOWED_NODE.includes(spec)) bad.push(spec);
      } else if (spec.startsWith("npm:")) {
        // The pack reader inflates with fflate; hashing and signatures come from @noble.
        if (!spec.startsWith("npm:/@noble/") && !spec.startsWith("npm:/fflate@")) bad.push(spec);
      } else {
        bad.push(spec);
      }
    }
    deepStrictEqual(bad, []);
    ok(modules.length > 5);
  });
}
