import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  type BacklogCheck,
  checkBacklog,
  loadBacklog,
  PlanLoadError,
  readBacklog,
  splitFrontMatter,
} from "../../src/plan/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

function errs(result: BacklogCheck) {
  return result.problems.filter((p) => p.severity === "error");
}

const FIX_LOGIN = `---
title: Fix the login redirect
role: backend
priority: 1
scope: small
files: [src/login.ts]
completion_signals:
  - file_contains: {path: src/login.ts, contains: "redirect"}
---
The login page redirects to /home even when a \`next\` parameter is given.

Keep the existing tests green.
`;

const DOCS_YAML = `title: Document the login flow
description: Write docs/login.md.
role: docs
priority: 3
depends_on: [fix-login]
`;

const HEADING_ONLY = `# Tidy the README

Remove the stale badges.
`;

Deno.test("backlog loads YAML and Markdown items in file-name order with front matter and body", () => {
  const result = checkBacklog([
    { name: "fix-login.md", text: FIX_LOGIN },
    { name: "docs-login.yaml", text: DOCS_YAML },
    { name: "readme.md", text: HEADING_ONLY },
    { name: "notes.txt", text: "ignored" },
  ]);
  deepStrictEqual(result.problems, []);
  const graph = result.graph;
  ok(graph);
  deepStrictEqual(graph.steps.map((s) => s.id), ["docs-login", "fix-login", "readme"]);
  const [docs, fix, readme] = graph.steps;
  strictEqual(fix.title, "Fix the login redirect");
  strictEqual(
    fix.description,
    "The login page redirects to /home even when a `next` parameter is given.\n\nKeep the existing tests green.",
  );
  strictEqual(fix.priority, 1);
  deepStrictEqual(fix.files, ["src/login.ts"]);
  deepStrictEqual(fix.completion_signals, [
    { kind: "file_contains", path: "src/login.ts", contains: "redirect" },
  ]);
  deepStrictEqual(docs.depends_on, ["fix-login"]);
  strictEqual(docs.description, "Write docs/login.md.");
  strictEqual(readme.title, "Tidy the README");
  strictEqual(readme.role, "backend");
  strictEqual(fix.field, "backlog[fix-login]");
  strictEqual(fix.location, ".sdd/backlog/open/fix-login.md:1:1");
  deepStrictEqual(graph.stages, [{
    name: "backlog",
    depends_on: [],
    step_ids: ["docs-login", "fix-login", "readme"],
  }]);
});

Deno.test("front matter errors point at the file's own line numbers", () => {
  const text = "---\ntitle: T\npriority: 9\nscope: huge\n---\nbody\n";
  const result = checkBacklog([{ name: "a.md", text }]);
  deepStrictEqual(errs(result).map((e) => [e.location, e.message]), [
    [".sdd/backlog/open/a.md:3:11", "priority: 9 is not one of: 1 (critical), 2 (normal), 3 (low)"],
    [".sdd/backlog/open/a.md:4:8", "scope: 'huge' is not one of: small, medium, large, xl"],
  ]);
  strictEqual(result.graph, undefined);
});

Deno.test("Markdown without a title, an unclosed front matter, or two descriptions is refused", () => {
  const noTitle = checkBacklog([{ name: "a.md", text: "---\nrole: qa\n---\nJust text.\n" }]);
  strictEqual(errs(noTitle)[0].code, "plan.missing_field");
  ok(errs(noTitle)[0].message.includes("'# heading'"));
  const unclosed = checkBacklog([{ name: "b.md", text: "---\ntitle: T\nbody\n" }]);
  deepStrictEqual(errs(unclosed).map((e) => [e.code, e.location]), [[
    "backlog.front_matter",
    ".sdd/backlog/open/b.md:1:1",
  ]]);
  const twice = checkBacklog([{
    name: "c.md",
    text: "---\ntitle: T\ndescription: D\n---\nBody.\n",
  }]);
  deepStrictEqual(errs(twice).map((e) => [e.code, e.location]), [[
    "backlog.description_twice",
    ".sdd/backlog/open/c.md:3:1",
  ]]);
  deepStrictEqual(splitFrontMatter("no front matter\n"), { yaml: "", body: "no front matter\n" });
});

Deno.test("backlog item keys are checked like plan steps; the id comes from the file name", () => {
  const result = checkBacklog([
    { name: "a.yaml", text: "id: other\ntitle: T\nattachments: shot.png\nprioritty: 1\n" },
    { name: "bad name!.yaml", text: "title: T\n" },
  ]);
  deepStrictEqual(errs(result).map((e) => [e.code, e.location, e.hint ?? ""]), [
    ["plan.unknown_key", ".sdd/backlog/open/a.yaml:1:1", "an item's id is its file name ('a')"],
    ["attach.invalid", ".sdd/backlog/open/a.yaml:3:14", "write 'attachments: [shot.png]'"],
    ["plan.unknown_key", ".sdd/backlog/open/a.yaml:4:1", "did you mean 'priority'?"],
    ["backlog.bad_id", ".sdd/backlog/open/bad name!.yaml:1:1", ""],
  ]);
});

Deno.test("duplicate ids, unknown and cyclic dependencies are errors; closed ones are satisfied", () => {
  const dup = checkBacklog([
    { name: "a.md", text: "# A\n" },
    { name: "a.yaml", text: "title: A again\n" },
  ]);
  deepStrictEqual(errs(dup).map((e) => e.code), ["backlog.duplicate_id"]);
  const unknown = checkBacklog([{ name: "a.yaml", text: "title: A\ndepends_on: [fix-logn]\n" }, {
    name: "fix-login.md",
    text: "# F\n",
  }]);
  deepStrictEqual(errs(unknown).map((e) => [e.code, e.location, e.hint]), [[
    "backlog.unknown_dependency",
    ".sdd/backlog/open/a.yaml:2:14",
    "did you mean 'fix-login'?",
  ]]);
  const closed = checkBacklog([{ name: "a.yaml", text: "title: A\ndepends_on: [done-1]\n" }], {
    closedIds: ["done-1"],
  });
  deepStrictEqual(closed.problems, []);
  deepStrictEqual(closed.graph?.steps[0].depends_on, []);
  const cycle = checkBacklog([
    { name: "a.yaml", text: "title: A\ndepends_on: [b]\n" },
    { name: "b.yaml", text: "title: B\ndepends_on: [a]\n" },
  ]);
  deepStrictEqual(errs(cycle).map((e) => [e.code, e.message]), [[
    "backlog.dependency_cycle",
    "depends_on: backlog items form a cycle: a → b → a",
  ]]);
});

Deno.test("BERNSTEIN_TASK_FILTER selects items by id or glob and warns about patterns that match nothing", () => {
  const files = [
    { name: "fix-login.md", text: FIX_LOGIN },
    { name: "docs-login.yaml", text: DOCS_YAML },
    { name: "readme.md", text: HEADING_ONLY },
  ];
  const result = checkBacklog(files, { filter: "fix-*,readme,nope" });
  deepStrictEqual(result.graph?.steps.map((s) => s.id), ["fix-login", "readme"]);
  deepStrictEqual(result.items.map((i) => [i.id, i.selected]), [
    ["docs-login", false],
    ["fix-login", true],
    ["readme", true],
  ]);
  deepStrictEqual(result.problems.map((p) => [p.severity, p.code, p.message]), [[
    "warning",
    "backlog.filter_unmatched",
    "BERNSTEIN_TASK_FILTER pattern 'nope' selects no backlog item",
  ]]);
  const missingDep = checkBacklog(files, { filter: "docs-login" });
  deepStrictEqual(errs(missingDep).map((e) => [e.code, e.location, e.message]), [[
    "backlog.filtered_dependency",
    ".sdd/backlog/open/docs-login.yaml:5:14",
    "depends_on[0]: depends on 'fix-login', which BERNSTEIN_TASK_FILTER leaves out",
  ]]);
  // Items the filter leaves out are not checked for their dependencies.
  const skipped = checkBacklog([...files, {
    name: "zz.yaml",
    text: "title: Z\ndepends_on: [gone]\n",
  }], {
    filter: "readme",
  });
  deepStrictEqual(errs(skipped), []);
});

Deno.test("readBacklog reads .sdd/backlog/open from disk, refuses symlink escapes, and an absent folder is empty", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const empty = await readBacklog(sdd);
    deepStrictEqual(empty.graph?.steps, []);
    const open = join(sdd, "backlog", "open");
    const closed = join(sdd, "backlog", "closed");
    await Deno.mkdir(open, { recursive: true });
    await Deno.mkdir(closed, { recursive: true });
    await Deno.writeTextFile(join(open, "fix-login.md"), FIX_LOGIN);
    await Deno.writeTextFile(join(open, "after.yaml"), "title: After\ndepends_on: [old]\n");
    await Deno.writeTextFile(join(closed, "old.md"), "# Old\n");
    await Deno.writeTextFile(join(open, ".hidden.md"), "not an item");
    const loaded = await loadBacklog(sdd);
    deepStrictEqual(loaded.graph.steps.map((s) => s.id), ["after", "fix-login"]);
    await Deno.writeTextFile(join(dir, "outside.md"), "# Secret\n");
    await Deno.symlink(join(dir, "outside.md"), join(open, "leak.md"));
    const refused = await readBacklog(sdd);
    strictEqual(refused.graph, undefined);
    deepStrictEqual(errs(refused).map((e) => [e.code, e.location]), [[
      "backlog.unreadable",
      ".sdd/backlog/open/leak.md",
    ]]);
    try {
      await loadBacklog(sdd);
      ok(false, "expected an error");
    } catch (e) {
      ok(e instanceof PlanLoadError);
      strictEqual(e.code, "backlog.unreadable");
    }
  });
});
