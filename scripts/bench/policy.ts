// Tool-call policy: decisions per second with 200 rules (every call walks IMMUNE/SAFETY, the
// shell reader and every rule list), and the linear-time pattern engine on a catastrophic
// pattern — `^(a+)+$` on "aaaa…!" — against JavaScript's backtracking RegExp on the same
// pattern with the longest input it finishes in about 50 ms (each extra character doubles it),
// and the engine on 200 000 characters. References: the 1 ms per decision goal (a hook must not
// slow an agent down), and the backtracking engine's time.
import {
  compilePattern,
  decide,
  type ProtectedPlaces,
  type ToolCall,
} from "../../src/policy/mod.ts";
import { parseRulesFile } from "../../src/policy/rules.ts";
import { compare, report } from "./_report.ts";

const rules: string[] = ["always_allow:"];
for (let i = 0; i < 50; i++) {
  rules.push(`  - { id: aa-${i}, tool: grep, input_pattern: "^src/m${i}/.*" }`);
}
for (const kind of ["deny", "ask", "allow"]) {
  rules.push(`${kind}:`);
  for (let i = 0; i < 50; i++) {
    rules.push(
      `  - { id: ${kind}-${i}, tool: bash, input_field: command, input_pattern: ".*tool-${kind}-${i} .*" }`,
    );
  }
}
const parsed = parseRulesFile(rules.join("\n") + "\n", "rules.yaml");
if (parsed.problems.length > 0) throw new Error(parsed.problems[0].message);
const policy = { rules: parsed.rules, problems: [] };
const places: ProtectedPlaces = {
  cwd: "/r/.sdd/worktrees/s1",
  root: "/r",
  sdd: "/r/.sdd",
  home: "/r/.sdd/runtime/homes/s1",
  userHome: "/home/op",
};
const calls: ToolCall[] = [
  { tool: "Read", input: { file_path: "/r/.sdd/worktrees/s1/src/a.ts" } },
  { tool: "Bash", input: { command: "cd src && npm test -- --watch=false | tee out.log" } },
  { tool: "Grep", input: { pattern: "x", path: "/r/.sdd/worktrees/s1/src/m49/x" } },
  { tool: "Write", input: { file_path: "src/b.ts", content: "export const b = 1;\n".repeat(50) } },
];
const N = 20_000;
for (let i = 0; i < 2000; i++) decide(calls[i % calls.length], policy, places);
const t0 = performance.now();
for (let i = 0; i < N; i++) decide(calls[i % calls.length], policy, places);
const perDecisionMs = (performance.now() - t0) / N;
compare("policy", "decide, 200 rules (mixed calls), per decision", perDecisionMs, "ms", {
  value: 1,
  label: "goal",
  goal: "<= 1",
});

const evil = compilePattern("^(a+)+$");
const jsEvil = /^(a+)+$/;
let n = 10;
let jsMs = 0;
while (jsMs < 50 && n < 40) {
  n++;
  const t = performance.now();
  jsEvil.test("a".repeat(n) + "!");
  jsMs = performance.now() - t;
}
const t1 = performance.now();
evil.matches("a".repeat(n) + "!");
const oursSameMs = performance.now() - t1;
compare("policy", `^(a+)+$ on ${n} a's + '!' (linear engine)`, oursSameMs, "ms", {
  value: jsMs,
  label: "JS backtracking RegExp, same input",
});
const long = "a".repeat(200_000) + "!";
const t2 = performance.now();
evil.matches(long);
report("policy", "^(a+)+$ on 200 000 a's + '!' (linear engine)", performance.now() - t2, "ms");
