// What a manager's prompt says about `cells:` (the number form asks for that many parallel work
// cells; the list form names the cells and their roles) — and that other roles are not told.
import { ok, strictEqual } from "node:assert/strict";
import { buildPromptBody } from "../../src/orchestrator/mod.ts";

function prompt(role: string, cells?: number | { name: string; roles?: string[] }[]): string {
  return buildPromptBody({
    taskId: "t1",
    title: "Plan the work",
    description: "Implement API auth",
    role,
    ownedFiles: [],
    signals: [],
    attempt: 1,
    ...(cells === undefined ? {} : { cells }),
  });
}

Deno.test("a manager is asked for N parallel work cells with the number form of cells", () => {
  const text = prompt("manager", 3);
  ok(text.includes("## Work cells\nSplit the work into 3 parallel work cells: 3 groups of"), text);
  ok(text.indexOf("## Work cells") < text.indexOf("## How to report"));
});

Deno.test("a manager is told the named cells and their roles with the list form", () => {
  const text = prompt("manager", [{ name: "api", roles: ["backend", "qa"] }, { name: "empty" }]);
  ok(text.includes("- api: backend, qa\n- empty: (no roles)"), text);
});

Deno.test("only managers hear about cells; without cells nothing is added", () => {
  strictEqual(prompt("backend", 3).includes("Work cells"), false);
  strictEqual(prompt("manager").includes("Work cells"), false);
});
