// Enforces docs/DESIGN.md: inward dependencies, mod.ts-only imports across folders, the
// verifier's closed module set, and a start-up path that loads no YAML, zod or crypto.
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { relative } from "node:path";
import { REPO_ROOT } from "./_helpers/cli.ts";
import { forbiddenApiIn, verifierModuleProblem } from "./_helpers/verifier_rules.ts";

interface GraphModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier: string }; isDynamic?: boolean }[];
}

async function moduleGraph(entry: string): Promise<GraphModule[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)).modules as GraphModule[];
}

/** Runtime modules reachable from `entry`, optionally through static imports only. */
async function reachable(entry: string, staticOnly: boolean): Promise<Set<string>> {
  const modules = new Map((await moduleGraph(entry)).map((m) => [m.specifier, m]));
  const rootSpec = new URL(entry, `file://${REPO_ROOT}`).href;
  const seen = new Set<string>();
  const stack = [rootSpec];
  while (stack.length > 0) {
    const spec = stack.pop() as string;
    if (seen.has(spec)) continue;
    seen.add(spec);
    for (const dep of modules.get(spec)?.dependencies ?? []) {
      if (!dep.code) continue; // type-only import
      if (staticOnly && dep.isDynamic) continue;
      stack.push(dep.code.specifier);
    }
  }
  return seen;
}

function local(spec: string): string | undefined {
  return spec.startsWith("file://") ? relative(REPO_ROOT, new URL(spec).pathname) : undefined;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${REPO_ROOT}${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...await sourceFiles(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

Deno.test("the verifier reaches only its closed module set and no write, env, net or run API", async () => {
  const problems: string[] = [];
  for (const spec of await reachable("verify.ts", false)) {
    const path = local(spec);
    const problem = verifierModuleProblem(spec, path);
    if (problem !== undefined) problems.push(`verify.ts reaches ${problem}`);
    if (path?.endsWith(".ts")) {
      const api = forbiddenApiIn(await Deno.readTextFile(`${REPO_ROOT}${path}`));
      if (api !== undefined) problems.push(`${path} (in the verifier graph) uses ${api}`);
    }
  }
  ok(problems.length === 0, problems.join("\n"));
});

Deno.test("bernstein start-up (--version, --help, command table) loads no YAML, zod or crypto", async () => {
  for (const entry of ["src/cli/mod.ts", "src/meta/mod.ts"]) {
    for (const spec of await reachable(entry, true)) {
      ok(!spec.startsWith("npm:"), `${entry} statically loads ${spec}`);
      const path = local(spec) ?? spec;
      ok(
        !/^src\/(config|crypto|audit|lineage|verify|orchestrator|adapters|tasks|server)\//.test(
          path,
        ),
        `${entry} statically loads ${path}`,
      );
      ok(spec !== "node:util" && spec !== "node:crypto", `${entry} statically loads ${spec}`);
    }
  }
});

Deno.test("the pack writer loads node:zlib only when a pack is built (every run imports it)", async () => {
  // node:zlib costs 15-65 ms to evaluate; the writer's modules reach it only through
  // loadNativeCrc32's dynamic import and the deflate worker, started by URL for a pack build.
  for (const spec of await reachable("src/compliance/mod.ts", true)) {
    ok(spec !== "node:zlib", `src/compliance/mod.ts statically loads ${spec}`);
  }
});

Deno.test("the sandbox's network init loads its two files only (every agent start loads it)", async () => {
  // main.ts imports src/sandbox/net_init.ts alone for `__sandbox-init`: each module more, and
  // node:path above all (~8 ms of CPU), is paid once per agent.
  const loaded = [...await reachable("src/sandbox/net_init.ts", false)].map((s) => local(s) ?? s);
  deepStrictEqual(loaded.sort(), ["src/sandbox/_wire.ts", "src/sandbox/net_init.ts"]);
});

// Lower rank = more inward. A folder may import its own rank or lower, never higher.
const RANK: Record<string, number> = {
  errors: 0,
  meta: 0,
  canonical: 1,
  crypto: 2,
  io: 2,
  config: 3,
  tlog: 3,
  audit: 4,
  cas: 4,
  lineage: 5,
  pack_format: 5,
  verify: 5,
  compliance: 6,
  ledger: 4,
  plan: 4,
  policy: 4,
  providers: 4,
  sandbox: 4,
  tasks: 5,
  adapters: 5,
  attachments: 6,
  report: 6,
  storage: 6,
  notify: 6,
  github: 6,
  server: 7,
  orchestrator: 8,
  workers: 8.5,
  fleet: 6,
  cli: 9,
};

const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function folderOf(path: string): string | undefined {
  return /^src\/([a-z0-9_]+)\//.exec(path)?.[1];
}

Deno.test("imports point inward, cross folders only through mod.ts, and never reach private files", async () => {
  const files = await sourceFiles("src");
  const problems: string[] = [];
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file) as string;
    ok(from in RANK, `src/${from}/ has no rank in tests/architecture_test.ts`);
    const text = await Deno.readTextFile(`${REPO_ROOT}${file}`);
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith(".")) continue;
      const target = relative(REPO_ROOT, new URL(spec, `file://${REPO_ROOT}${file}`).pathname);
      if (target === "deno.json") continue;
      const to = folderOf(target);
      if (to === undefined) {
        problems.push(`${file} imports ${target} outside src/`);
        continue;
      }
      if (to === from) {
        // Inside a folder anything goes, except reaching into a subfolder's private files.
        if (
          /\/_[a-z0-9_]+\.ts$/.test(target) && target.split("/").length > file.split("/").length
        ) {
          problems.push(`${file} imports private ${target}`);
        }
        continue;
      }
      if (!/\/mod\.ts$/.test(target)) {
        problems.push(`${file} imports ${target}; cross-folder imports go through mod.ts`);
      }
      if (to === "cli") problems.push(`${file} imports the CLI (${target})`);
      if (RANK[to] > RANK[from]) {
        problems.push(`${file} (${from}) imports outward ${target} (${to})`);
      }
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)?.add(to);
    }
  }
  // No folder-level cycles.
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (node: string, path: string[]) => {
    if (done.has(node)) return;
    if (visiting.has(node)) {
      problems.push(`import cycle: ${[...path, node].join(" -> ")}`);
      return;
    }
    visiting.add(node);
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    visiting.delete(node);
    done.add(node);
  };
  for (const node of edges.keys()) visit(node, []);
  ok(problems.length === 0, problems.join("\n"));
});

Deno.test("files are snake_case, folders have mod.ts, no index.ts and no default exports", async () => {
  const files = [
    ...await sourceFiles("src"),
    ...await sourceFiles("tests"),
    ...await sourceFiles("scripts"),
  ];
  const problems: string[] = [];
  const folders = new Set<string>();
  for (const file of files) {
    const name = file.split("/").pop() as string;
    if (!/^_?[a-z0-9]+(_[a-z0-9]+)*\.ts$/.test(name)) problems.push(`${file}: not snake_case`);
    if (name === "index.ts") problems.push(`${file}: no index.ts`);
    if (file.startsWith("src/")) folders.add(file.slice(0, file.lastIndexOf("/")));
    const text = await Deno.readTextFile(`${REPO_ROOT}${file}`);
    if (/^\s*export\s+default\b/m.test(text)) problems.push(`${file}: default export`);
  }
  for (const folder of folders) {
    const has = await Deno.stat(`${REPO_ROOT}${folder}/mod.ts`).then(() => true, () => false);
    if (!has) problems.push(`${folder}/ has no mod.ts`);
  }
  ok(problems.length === 0, problems.join("\n"));
});

/** The comment a file opens with (`//` lines or a `/** … *\/` block), or "" when it opens with code. */
function openingComment(text: string): string {
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && lines[i].trim() === "") i++;
  if (lines[i]?.startsWith("/**") || lines[i]?.startsWith("/*")) {
    const end = text.indexOf("*/", text.indexOf("/*"));
    return end < 0 ? "" : text.slice(text.indexOf("/*") + 2, end);
  }
  const out: string[] = [];
  for (; i < lines.length && lines[i].startsWith("//"); i++) out.push(lines[i].slice(2));
  return out.join(" ");
}

Deno.test("every src file opens with a paragraph saying what it is for", async () => {
  const problems: string[] = [];
  for (const file of await sourceFiles("src")) {
    const words = openingComment(await Deno.readTextFile(`${REPO_ROOT}${file}`))
      .replace(/[*@{}]/g, " ").split(/\s+/).filter((w) => /[a-z]/i.test(w));
    if (words.length < 5) {
      problems.push(`${file}: no opening paragraph (a comment saying what the file is for)`);
    }
  }
  ok(problems.length === 0, problems.join("\n"));
});

/** Lines of src/ that build a path under `.sdd/` by hand instead of through src/io's layout. */
function handBuiltSddPaths(file: string, text: string): string[] {
  // `join(<sdd>, "runs", …)`, `join(…, "worktrees", <session>)` and run tags parsed back out of
  // a run id skip the id and name checks; `join(<sdd>, "audit" | "runtime" | …)` and
  // `join(<root>, ".sdd")` spell the layout again. src/io/sdd_layout.ts owns the folder and
  // file names under .sdd/ (sddFolder, sddFile, runtimePath, backlogFolder, runFile,
  // sessionLayout, sddOf); the folders own what is inside their own subfolder.
  const runsOrWorktrees = /join\([^)]*["'](runs|worktrees)["']\s*,/;
  const sddThenName = /join\(\s*[\w.#]*[sS]dd\w*\s*,\s*["'`]/;
  const dotSdd = /join\([^)]*["']\.sdd["']/;
  const sddTemplate = /\$\{[\w.#]*[sS]dd\}\//;
  const tagParsed = /[rR]unId\.split\(["']-["']\)/;
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    const code = line.replace(/^\s*(\*|\/\/).*$/, "");
    if (
      (runsOrWorktrees.test(code) && !/gitDir/.test(code)) || sddThenName.test(code) ||
      dotSdd.test(code) || sddTemplate.test(code)
    ) {
      problems.push(`${file}:${i + 1}: hand-built .sdd path: ${line.trim()}`);
    }
    if (tagParsed.test(code)) problems.push(`${file}:${i + 1}: run tag parsed: ${line.trim()}`);
  });
  return problems;
}

Deno.test("paths under .sdd/ come from src/io's .sdd layout, never joined by hand", async () => {
  const problems: string[] = [];
  for (const file of await sourceFiles("src")) {
    if (file === "src/io/sdd_layout.ts") continue;
    problems.push(...handBuiltSddPaths(file, await Deno.readTextFile(`${REPO_ROOT}${file}`)));
  }
  ok(problems.length === 0, problems.join("\n"));
});

Deno.test("the .sdd path check catches each way of building one by hand", () => {
  const bad = [
    'const d = join(sdd, "audit");',
    "const p = join(project.sdd, `runtime`, name);",
    'const c = new CasStore(join(options.sdd, "cas"));',
    'const s = join(this.#sdd, "keys", "agents");',
    'const r = join(root, ".sdd");',
    'const w = join(sdd, "worktrees", session);',
    "const k = `${places.sdd}/keys`;",
    'const tag = runId.split("-").pop();',
  ];
  for (const line of bad) {
    equal(handBuiltSddPaths("x.ts", line).length, 1, line);
  }
  const good = [
    'const d = sddFolder(sdd, "audit");',
    "const p = join(runtimeDir(sdd), name);",
    '// join(sdd, "audit") in a comment',
    ' * `join(sdd, "audit")` in a doc comment',
    'const q = join(lineageDir, "log.jsonl");',
  ];
  for (const line of good) {
    equal(handBuiltSddPaths("x.ts", line).length, 0, line);
  }
});

/** Names a mod.ts re-exports (`export { a, type B, c as d } from "./x.ts"`) or declares. */
function exportedNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/export\s*(?:type\s*)?\{([^}]*)\}\s*from/g)) {
    for (const part of m[1].split(",")) {
      const t = part.trim().replace(/^type\s+/, "");
      if (t !== "") names.push((t.split(/\s+as\s+/).pop() ?? t).trim());
    }
  }
  for (
    const m of text.matchAll(
      /^export\s+(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
    )
  ) names.push(m[1]);
  return names;
}

Deno.test("every name a folder's mod.ts exports is used outside that folder (export what callers use)", async () => {
  const everything = [
    ...await sourceFiles("src"),
    ...await sourceFiles("tests"),
    ...await sourceFiles("scripts"),
    "main.ts",
    "verify.ts",
  ];
  const texts = new Map<string, string>();
  for (const f of everything) texts.set(f, await Deno.readTextFile(`${REPO_ROOT}${f}`));
  const problems: string[] = [];
  for (const mod of everything.filter((f) => /^src\/.+\/mod\.ts$/.test(f))) {
    const folder = mod.slice(0, -"mod.ts".length);
    const segment = folder.split("/").at(-2);
    // Callers: files outside the folder itself (its subfolders count) that import this mod.ts.
    const callers = everything.filter((f) => {
      if (f.slice(0, f.lastIndexOf("/") + 1) === folder) return false;
      const text = texts.get(f) ?? "";
      return text.includes(`/${segment}/mod.ts"`) ||
        (f.startsWith(folder) && text.includes(`"../mod.ts"`));
    });
    const own = texts.get(mod) ?? "";
    for (const name of exportedNames(own)) {
      const word = new RegExp(`\\b${name.replace("$", "\\$")}\\b`);
      // The mod's own runnable examples are callers too.
      const inExample = [...own.matchAll(/```ts\n([\s\S]*?)```/g)].some((m) => word.test(m[1]));
      if (!inExample && !callers.some((c) => word.test(texts.get(c) ?? ""))) {
        problems.push(`${mod} exports ${name}, which nothing outside ${folder} uses`);
      }
    }
  }
  ok(problems.length === 0, problems.join("\n"));
});
