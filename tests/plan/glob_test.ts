import { ok, strictEqual, throws } from "node:assert/strict";
import {
  compileGlob,
  globLiteralPrefix,
  GlobSyntaxError,
  matchesTaskFilter,
  parseTaskFilter,
  unmatchedPatterns,
} from "../../src/plan/mod.ts";

function matches(pattern: string, path: string): boolean {
  return compileGlob(pattern).test(path);
}

Deno.test("glob: * and ? stay inside one segment", () => {
  ok(matches("src/*.ts", "src/a.ts"));
  ok(!matches("src/*.ts", "src/a/b.ts"));
  ok(matches("src/?.ts", "src/a.ts"));
  ok(!matches("src/?.ts", "src/ab.ts"));
  ok(matches("*", ".hidden"));
  ok(!matches("*.ts", "a.tsx"));
});

Deno.test("glob: ** spans zero or more segments in the middle, one or more at the end", () => {
  ok(matches("tests/**/*_test.ts", "tests/a_test.ts"));
  ok(matches("tests/**/*_test.ts", "tests/x/y/a_test.ts"));
  ok(!matches("tests/**/*_test.ts", "src/a_test.ts"));
  ok(matches("src/**", "src/a"));
  ok(matches("src/**", "src/a/b/c"));
  ok(!matches("src/**", "src"));
  ok(matches("**/*.md", "README.md"));
  ok(matches("**/*.md", "docs/x/README.md"));
});

Deno.test("glob: classes, negated classes and literal regex characters", () => {
  ok(matches("a[0-9].txt", "a7.txt"));
  ok(!matches("a[0-9].txt", "ab.txt"));
  ok(matches("a[!0-9].txt", "ab.txt"));
  ok(!matches("a[!0-9].txt", "a/.txt"));
  ok(matches("a+b(c).txt", "a+b(c).txt"));
  ok(!matches("a.txt", "abtxt"));
  ok(matches("{a,b}", "{a,b}"));
  throws(() => compileGlob("src/[a.ts"), GlobSyntaxError);
});

Deno.test("glob literal prefix is the wildcard-free leading folder", () => {
  strictEqual(globLiteralPrefix("src/api/*.ts"), "src/api");
  strictEqual(globLiteralPrefix("src/**/x.ts"), "src");
  strictEqual(globLiteralPrefix("*.ts"), "");
  strictEqual(globLiteralPrefix("docs/readme.md"), "docs");
});

Deno.test("task filter: comma-separated ids and globs, blank means everything", () => {
  strictEqual(parseTaskFilter(undefined), undefined);
  strictEqual(parseTaskFilter(" , "), undefined);
  const f = parseTaskFilter("fix-login, docs-*,1.?-x");
  ok(f);
  ok(matchesTaskFilter(f, "fix-login"));
  ok(!matchesTaskFilter(f, "fix-login2"));
  ok(matchesTaskFilter(f, "docs-readme"));
  ok(matchesTaskFilter(f, "1.2-x"));
  ok(!matchesTaskFilter(f, "api"));
  ok(matchesTaskFilter(undefined, "anything"));
  strictEqual(unmatchedPatterns(f, ["fix-login", "api"]).join(","), "docs-*,1.?-x");
  throws(() => parseTaskFilter("a,[b"), (e: unknown) => {
    ok(e instanceof Error);
    strictEqual((e as { code?: string }).code, "backlog.bad_filter");
    strictEqual((e as { exitCode?: number }).exitCode, 2);
    return true;
  });
});
