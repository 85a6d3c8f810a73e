// Agent catalogs: definitions parsed from files, merged by priority, problems named by path.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  catalogPreamble,
  loadCatalogs,
  parseAgentDefinition,
  withCatalogRoles,
} from "../../src/orchestrator/mod.ts";
import { type Config, DEFAULT_CONFIG } from "../../src/config/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const CAT = { name: "c", priority: 50 };

Deno.test("a Markdown definition: front matter fields, the body as preamble, the role from the name", () => {
  const r = parseAgentDefinition(
    "---\nname: Security Reviewer\ndescription: Audits diffs.\nmodel: opus\ntools: [semgrep]\n---\n\nYou audit every diff.\n",
    "agents/sec.md",
    CAT,
  );
  ok(r.agent);
  strictEqual(r.agent.role, "security-reviewer");
  strictEqual(r.agent.model, "opus");
  strictEqual(catalogPreamble(r.agent), "You audit every diff.\n\nPreferred tools: semgrep.");
});

Deno.test("malformed definitions are named problems, never silent; an unknown adapter is an error", () => {
  const cases: [string, string, string][] = [
    ["a.md", "no front matter here", "no front matter"],
    ["b.md", "---\ndescription: x\n---\nbody", "needs a 'name'"],
    ["c.md", "---\nname: X\ntools: grep\n---\nbody", "'tools' must be a list"],
    ["d.md", "---\nname: X\n---\n", "the body (the prompt) is empty"],
    ["e.md", "---\nname: [\n---\nbody", ""],
  ];
  for (const [path, text, message] of cases) {
    const r = parseAgentDefinition(text, path, CAT);
    strictEqual(r.agent, undefined, path);
    ok(r.problem?.message.includes(message), `${path}: ${r.problem?.message}`);
    ok(r.problem?.location?.startsWith(path), path);
  }
  const bad = parseAgentDefinition("role: qa\ncli: clade\n", "q.yaml", CAT);
  strictEqual(bad.problem?.severity, "error");
  ok(bad.problem?.message.includes("unknown adapter 'clade'"));
});

Deno.test("catalogs merge by priority, then listed order; disabled and unsupported ones contribute nothing", async () => {
  await withTempDir(async (dir) => {
    const write = async (rel: string, text: string) => {
      await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, rel), text);
    };
    await write("team/.claude/agents/qa.md", "---\nname: qa\ncli: scripted\n---\nYou test.\n");
    await write("team/plugins/p/agents/docs.md", "---\nname: docs\n---\nYou write docs.\n");
    await write("team/README.md", "not an agent");
    await write("generic/qa.yaml", "role: qa\nmodel: haiku\nprompt: Generic QA.\n");
    await write("generic/lint.yaml", "role: linter\ncli: scripted\n");
    const set = await loadCatalogs(dir, [
      { name: "generic", type: "generic", path: "generic" },
      { name: "team", type: "plugin", path: "team", priority: 60 },
      { name: "off", type: "generic", path: "generic", enabled: false },
      { name: "remote", type: "plugin", path: "x", source_kind: "github" },
    ]);
    deepStrictEqual(set.agents.map((a) => [a.role, a.catalog]), [
      ["qa", "team"],
      ["docs", "team"],
      ["linter", "generic"],
    ]);
    deepStrictEqual(set.shadowed.map((a) => [a.role, a.catalog]), [["qa", "generic"]]);
    strictEqual(set.problems.length, 1);
    ok(set.problems[0].message.includes("source_kind 'github' is not supported yet"));
    const config = structuredClone(DEFAULT_CONFIG) as unknown as Config;
    config.role_model_policy = { qa: { model: "sonnet" } };
    const merged = withCatalogRoles(config, set);
    deepStrictEqual(merged.role_model_policy?.qa, { model: "sonnet", cli: "scripted" });
    deepStrictEqual(merged.role_model_policy?.linter, { cli: "scripted" });
  });
});
