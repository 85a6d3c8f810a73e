// Rule files: the design's schema, matching (tool case-insensitive and by family, regex vs
// glob, input_field, content_patterns), and every bad input reported with file:line:col and
// its reach — unknown fields, duplicate ids, bad and catastrophic regexes, YAML errors,
// huge, unreadable and non-UTF-8 files — each making the calls it reaches `ask`, never allow.
import assert from "node:assert/strict";
import { join } from "node:path";
import { decide, loadPolicy, ruleMatches } from "../../src/policy/mod.ts";
import { parseAlwaysAllowFile, parseRulesFile } from "../../src/policy/rules.ts";
import { withTempDir } from "../_helpers/temp.ts";

const CWD = "/r/.sdd/worktrees/s1";
const PLACES = { cwd: CWD, root: "/r", sdd: "/r/.sdd" };

Deno.test("always_allow.yaml is a list with the design's schema", () => {
  const { rules, problems } = parseAlwaysAllowFile(
    [
      "- id: safe-grep-src",
      "  tool: grep",
      '  input_pattern: "src/.*"',
      "  input_field: path",
      "  content_patterns:",
      '    - "--include=*.py"',
      "  description: Recursive Python grep on src/ only",
    ].join("\n"),
    "aa.yaml",
  );
  assert.deepEqual(problems, []);
  assert.equal(rules.length, 1);
  const r = rules[0];
  assert.equal(r.kind, "always_allow");
  assert.equal(r.pattern.kind, "regex");
  assert.equal(r.source, "aa.yaml:1:3");
  const call = (path: string, extra: Record<string, unknown> = {}) => ({
    tool: "Grep",
    input: { pattern: "def", path, glob: "--include=*.py", ...extra },
  });
  assert.ok(ruleMatches(r, call(`${CWD}/src/pkg`), PLACES), "tool case-insensitive, path relative");
  assert.ok(!ruleMatches(r, call(`${CWD}/lib/src`), PLACES), "a regex matches from the start");
  assert.ok(!ruleMatches(r, call("/etc/src"), PLACES), "outside the worktree stays absolute");
  assert.ok(
    !ruleMatches(r, { tool: "Grep", input: { pattern: "def", path: `${CWD}/src/x` } }, PLACES),
    "every content pattern must appear",
  );
  assert.ok(
    ruleMatches(r, { ...call(`${CWD}/src/x`), tool: "search_file_content" }, PLACES),
    "family",
  );
  assert.ok(!ruleMatches(r, { ...call(`${CWD}/src/x`), tool: "Read" }, PLACES));
});

Deno.test("rules.yaml holds the four lists; input_field reaches any member", () => {
  const { rules, problems } = parseRulesFile(
    [
      "deny:",
      "  - id: no-rm-rf",
      "    tool: bash",
      "    input_field: command",
      '    input_pattern: ".*rm -rf.*"',
      "ask:",
      "  - id: ask-push",
      "    tool: Bash",
      "    input_field: command",
      "    input_pattern: git push*",
      "allow: []",
      "always_allow:",
    ].join("\n"),
    "rules.yaml",
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(rules.map((r) => [r.kind, r.id, r.source]), [
    ["deny", "no-rm-rf", "rules.yaml:2:5"],
    ["ask", "ask-push", "rules.yaml:7:5"],
  ]);
  const d = decide(
    { tool: "Bash", input: { command: "cd / && rm -rf tmp" } },
    { rules, problems },
    PLACES,
  );
  assert.equal(d.action, "deny");
  assert.equal(d.ruleId, "no-rm-rf");
  const a = decide({ tool: "exec_command", input: { cmd: "git push origin x" } }, {
    rules,
    problems,
  }, PLACES);
  assert.equal(a.decisionReason, "askRule", "command alias and bash family");
});

function problemsOf(text: string, file = "rules.yaml") {
  return parseRulesFile(text, file).problems.map((p) => [p.code, p.location, p.reach]);
}

Deno.test("every rule problem is reported with file:line:col and its reach", () => {
  assert.deepEqual(
    problemsOf("deny:\n  - id: x\n    tool: bash\n    input_pattern: a\n    colour: red\n"),
    [
      ["policy.unknown_field", "rules.yaml:5:5", ["bash"]],
    ],
  );
  assert.deepEqual(problemsOf("deny:\n  - id: Not_Kebab\n    tool: read\n    input_pattern: a\n"), [
    ["policy.rule_invalid", "rules.yaml:2:9", ["read"]],
  ]);
  assert.deepEqual(problemsOf("ask:\n  - id: a\n    input_pattern: a\n"), [
    ["policy.rule_invalid", "rules.yaml:2:5", "*"],
  ]);
  assert.deepEqual(
    problemsOf('deny:\n  - id: a\n    tool: bash\n    input_pattern: "^(a)\\\\1$"\n'),
    [
      ["policy.bad_pattern", "rules.yaml:4:25", ["bash"]],
    ],
  );
  assert.deepEqual(problemsOf("deny:\n  - id: a\n    tool: bash\n    input_pattern: ^(?=x)\n"), [
    ["policy.bad_pattern", "rules.yaml:4:21", ["bash"]],
  ]);
  assert.deepEqual(problemsOf("deny: [\n"), [["policy.yaml_syntax", "rules.yaml:2:1", "*"]]);
  assert.deepEqual(problemsOf("colours: []\n"), [["policy.unknown_field", "rules.yaml:1:1", "*"]]);
  assert.deepEqual(problemsOf("- id: a\n"), [["policy.rule_invalid", "rules.yaml:1:1", "*"]]);
  assert.deepEqual(
    problemsOf("deny:\n  - id: a\n    tool: x\n    input_pattern: a\n    content_patterns: [1]\n"),
    [
      ["policy.rule_invalid", "rules.yaml:5:23", ["x"]],
    ],
  );
  assert.deepEqual(problemsOf("deny: {a: 1}\n"), [["policy.rule_invalid", "rules.yaml:1:7", "*"]]);
});

async function project(dir: string, files: Record<string, string | Uint8Array>): Promise<string> {
  await Deno.mkdir(join(dir, ".bernstein"), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, ".bernstein", name);
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
  }
  return dir;
}

const GOOD = "- id: safe-read\n  tool: read\n  input_pattern: 'src/*'\n";

Deno.test("duplicate ids across both files are reported at the second one", async () => {
  await withTempDir(async (dir) => {
    await project(dir, {
      "always_allow.yaml": GOOD,
      "rules.yaml": "deny:\n  - id: safe-read\n    tool: bash\n    input_pattern: x\n",
    });
    const policy = await loadPolicy(dir);
    assert.deepEqual(policy.rules.map((r) => r.id), ["safe-read"]);
    assert.equal(policy.problems.length, 1);
    const p = policy.problems[0];
    assert.equal(p.code, "policy.duplicate_id");
    assert.equal(p.location, ".bernstein/rules.yaml:2:5");
    assert.match(p.message, /already used at .*always_allow\.yaml:1:3/);
    assert.deepEqual(p.reach, ["bash", "read"]);
  });
});

Deno.test("a file that cannot be used makes every call ask (ruleUnreadable), never allow", async () => {
  const cases: [string, Record<string, string | Uint8Array>, RegExp, number?][] = [
    [
      "non-UTF-8",
      { "rules.yaml": new Uint8Array([0x64, 0x65, 0x6e, 0x79, 0x3a, 0xff, 0x0a]) },
      /not UTF-8 \(invalid byte at offset 5\)/,
    ],
    [
      "huge",
      { "always_allow.yaml": "# " + "x".repeat(2000) + "\n" },
      /larger than 1000 bytes/,
      1000,
    ],
    ["a folder", { "rules.yaml/x": "" }, /not a regular file/],
    ["a YAML error", { "always_allow.yaml": "- id: [\n" }, /.*/],
    ["a catastrophic regex", {
      "always_allow.yaml": GOOD + "- id: evil\n  tool: '*'\n  input_pattern: ^(a+)+(?=b)\n",
    }, /lookahead/],
  ];
  for (const [name, files, message, max] of cases) {
    await withTempDir(async (dir) => {
      if ("rules.yaml/x" in files) {
        await Deno.mkdir(join(dir, ".bernstein", "rules.yaml"), { recursive: true });
      } else await project(dir, files);
      const policy = await loadPolicy(dir, max === undefined ? {} : { maxBytes: max });
      assert.ok(
        policy.problems.some((p) => message.test(p.message)),
        `${name}: ${JSON.stringify(policy.problems)}`,
      );
      // A call the always-allow rule (if it loaded) would allow is asked about instead.
      const d = decide({ tool: "Read", input: { file_path: `${dir}/src/a.ts` } }, policy, {
        cwd: dir,
      });
      assert.equal(d.action, "ask", name);
      assert.equal(d.decisionReason, "ruleUnreadable", name);
    });
  }
});

Deno.test("absent files are no rules; readable ones are listed with their counts", async () => {
  await withTempDir(async (dir) => {
    let policy = await loadPolicy(dir);
    assert.deepEqual(policy.files.map((f) => f.status), ["absent", "absent"]);
    await project(dir, { "always_allow.yaml": GOOD });
    policy = await loadPolicy(dir);
    assert.deepEqual(policy.files.map((f) => [f.status, f.rules]), [["loaded", 1], ["absent", 0]]);
    const d = decide({ tool: "Read", input: { file_path: "src/a.ts" } }, policy, { cwd: dir });
    assert.equal(d.decisionReason, "alwaysAllowRule");
  });
});
