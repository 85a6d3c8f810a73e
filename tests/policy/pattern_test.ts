// The linear-time pattern engine: regex and glob semantics against JavaScript's own RegExp on
// a table of cases, refusals of constructs that need backtracking, and catastrophic patterns
// that finish (the step count is bounded by text × program, not by time).
import assert from "node:assert/strict";
import { compilePattern, patternKind, PatternSyntaxError } from "../../src/policy/mod.ts";

Deno.test("a pattern is a regex when it contains .*, ^ or $, else a glob", () => {
  assert.equal(patternKind("src/.*"), "regex");
  assert.equal(patternKind("^tests/"), "regex");
  assert.equal(patternKind("a$"), "regex");
  assert.equal(patternKind("tests/*"), "glob");
  assert.equal(patternKind("src/[ab].py"), "glob");
});

const REGEX_CASES: [string, string][] = [
  ["src/.*", "src/a.py"],
  ["src/.*", "lib/src/a.py"],
  ["^tests/", "tests/x"],
  ["^tests/", "a/tests/x"],
  ["pytest.*", "pytest -q tests/"],
  ["a(b|c)+d$", "abcbd"],
  ["a(b|c)+d$", "abcbdx"],
  ["[a-c]{2,3}x$", "abx"],
  ["[a-c]{2,3}x$", "abcdx"],
  ["[^/]*\\.py$", "a.py"],
  ["[^/]*\\.py$", "a/b.py"],
  ["\\d+\\s\\w+.*", "12 ab"],
  ["\\d+\\s\\w+.*", "x12 ab"],
  ["(?:foo|bar)?baz.*", "baz"],
  ["(?<name>ab)c.*", "abc"],
  ["a.c.*", "a\nc"],
  [".*rm -rf.*", "echo x && rm -rf /"],
  ["^$", ""],
  ["^$", "x"],
  ["x*$", ""],
  ["é+.*", "ééa"],
  ["[\\-a]+$", "-a-"],
  ["a{3}$", "aaa"],
  ["a{3}$", "aa"],
  ["a{2,}$", "aaaa"],
];

Deno.test("regex patterns match like an anchored-at-start JavaScript RegExp", () => {
  for (const [source, value] of REGEX_CASES) {
    const expected = new RegExp(`^(?:${source.replace(/^\^/, "")})`, "u").test(value);
    assert.equal(
      compilePattern(source).matches(value),
      expected,
      `${source} on ${JSON.stringify(value)}`,
    );
  }
});

Deno.test("glob patterns match the whole value and * crosses /", () => {
  const cases: [string, string, boolean][] = [
    ["tests/*", "tests/unit/a.py", true],
    ["tests/*", "src/tests/a.py", false],
    ["*.py", "a/b/c.py", true],
    ["*.py", "a.pyc", false],
    ["src/?.ts", "src/a.ts", true],
    ["src/?.ts", "src/ab.ts", false],
    ["[ab]*", "b-x", true],
    ["[!ab]*", "b-x", false],
    ["rm -rf", "rm -rf", true],
    ["rm -rf", "rm -rf /", false],
    ["*rm -rf*", "echo; rm -rf /", true],
    ["**/x", "a/b/x", true],
  ];
  for (const [source, value, want] of cases) {
    assert.equal(compilePattern(source).matches(value), want, `${source} on ${value}`);
  }
});

Deno.test("constructs that need backtracking are refused with the offset of the problem", () => {
  const cases: [string, number][] = [
    ["^(a)\\1$", 4],
    ["^(?=a).*", 1],
    ["^(?!a).*", 1],
    ["^(?<=a).*", 1],
    ["^(?i)abc", 1],
    ["^a{1000}", 2],
    ["^(ab", 1],
    ["^ab)", 3],
    ["^[ab", 1],
    ["^*a", 1],
    ["^\\q", 1],
    ["^a\\", 2],
  ];
  for (const [source, offset] of cases) {
    assert.throws(
      () => compilePattern(source),
      (e: unknown) => e instanceof PatternSyntaxError && e.offset === offset,
      source,
    );
  }
  assert.throws(() => compilePattern("^" + "a".repeat(3000)), PatternSyntaxError);
});

Deno.test("catastrophic patterns finish on long adversarial input", () => {
  // With a backtracking engine each of these takes exponential time on this input.
  const evil = ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^(.*a){20}$", "^(a*)*b$"];
  const text = "a".repeat(5000) + "!";
  for (const source of evil) {
    assert.equal(compilePattern(source).matches(text), false, source);
    assert.equal(compilePattern(source).matches("a".repeat(30)), !source.endsWith("b$"), source);
  }
});
