// Walks every key of the configuration schema and fails for any key that no code outside
// src/config reads (comments do not count), unless it is on the documented not-implemented
// list (NOT_IMPLEMENTED in src/config/not_implemented.ts) — so a key that validates and does
// nothing cannot come back unnoticed. (A listed key may already be read by a part that is not
// wired into the run yet; whoever wires it removes the entry.)
import { ok } from "node:assert/strict";
import { configKeys, keyMatches, NOT_IMPLEMENTED } from "../../src/config/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

/**
 * Names the code gives a map it reads keys from, when the name is not the key's own: the
 * role's policy is `policy`, an adapter's settings are `settings`, and so on. Key patterns
 * use `*` for any map key or list index.
 */
const HELD_AS: Readonly<Record<string, { names: readonly string[]; files: RegExp }>> = {
  "role_model_policy.*": { names: ["policy"], files: /^src\/orchestrator\// },
  "role_model_policy.*.ladder.*": { names: ["step", "rung"], files: /^src\/orchestrator\// },
  "local_endpoints.*": {
    names: ["endpoint", "profile"],
    files: /^src\/(adapters\/|orchestrator\/endpoint_certification\.ts$)/,
  },
  "cells.*": { names: ["c", "cell"], files: /^src\/orchestrator\/(scheduler|prompt)\.ts$/ },
  "provider_availability": { names: ["pa"], files: /^src\/orchestrator\/provider_routing\.ts$/ },
  "provider_availability.roles.*": {
    names: ["spec"],
    files: /^src\/orchestrator\/provider_routing\.ts$/,
  },
  "provider_availability.roles.*.chain.*": {
    names: ["e", "element"],
    files: /^src\/(orchestrator|providers)\//,
  },
  "tuning.providers": {
    names: ["tuning"],
    files: /^src\/orchestrator\/endpoint_certification\.ts$/,
  },
  "adapters.*": { names: ["settings", "scripted"], files: /^src\/adapters\// },
  "adapters.*.models": { names: ["m"], files: /^src\/adapters\/generic\.ts$/ },
  "quality_gates.tests": { names: ["gate"], files: /^src\/orchestrator\// },
  "quality_gates.lint": { names: ["gate"], files: /^src\/orchestrator\// },
  "tuning.spawn": { names: ["tuning"], files: /^src\/orchestrator\// },
  "tuning.server": { names: ["tuning"], files: /^src\/server\// },
  "tuning.storage": { names: ["tuning"], files: /^src\/storage\// },
  "catalogs.*": { names: ["entry", "c"], files: /^src\/orchestrator\/catalogs\.ts$/ },
  "tuning.policy": { names: ["tuning"], files: /^src\/(orchestrator|cli)\/(run_)?policy\.ts$/ },
};

/** Keys read by a helper function of src/config that code elsewhere calls. */
const READ_THROUGH: readonly { keys: readonly string[]; fn: string; file: string }[] = [
  {
    keys: ["tuning.orchestrator.max_agent_runtime_s", "tuning.orchestrator.scope_runtime_s.*"],
    fn: "agentDeadlineSeconds",
    file: "src/config/defaults.ts",
  },
];

async function sources(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(`${REPO_ROOT}${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) { for (const [p, t] of await sources(path)) out.set(p, t); }
    else if (e.name.endsWith(".ts")) out.set(path, await Deno.readTextFile(`${REPO_ROOT}${path}`));
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Source text without comments, so a key named in a comment does not count as read. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
}

/** Files outside src/config that read `key`, as `<holder>.leaf` or `<holder>?.leaf`. */
function readers(key: string, code: ReadonlyMap<string, string>): string[] {
  const segs = key.split(".");
  const leaf = segs[segs.length - 1];
  const parentKey = segs.slice(0, -1).join(".");
  const dot = (holder: string) => `\\b${escape(holder)}\\??\\.${escape(leaf)}\\b`;
  const patterns: string[] = [];
  if (segs.length === 1) patterns.push(dot("config"));
  if (segs.length > 1 && segs[segs.length - 2] !== "*") patterns.push(dot(segs[segs.length - 2]));
  // A map entry read by its name: `role_model_policy?.[task.role]?.cli`.
  if (segs.length > 2 && segs[segs.length - 2] === "*" && segs[segs.length - 3] !== "*") {
    patterns.push(
      `\\b${escape(segs[segs.length - 3])}\\??\\.\\[[^\\]]+\\]\\??\\.${escape(leaf)}\\b`,
    );
  }
  const everywhere = patterns.length > 0 ? new RegExp(patterns.join("|")) : undefined;
  const held = HELD_AS[parentKey];
  const scoped = held ? new RegExp(held.names.map(dot).join("|")) : undefined;
  const found = [...code].filter(([path, text]) =>
    everywhere?.test(text) || (scoped !== undefined && held?.files.test(path) && scoped.test(text))
  ).map(([path]) => path);
  for (const through of READ_THROUGH) {
    if (!through.keys.some((k) => keyMatches(k, key))) continue;
    const callers = [...code].filter(([, t]) => t.includes(`${through.fn}(`));
    if (callers.length > 0) {
      found.push(`${through.file} (${through.fn}, called by ${callers[0][0]})`);
    }
  }
  return found;
}

Deno.test("every configuration key is read by some code or listed as not implemented", async () => {
  const all = await sources("src");
  const code = new Map(
    [...all].filter(([p]) => !p.startsWith("src/config/")).map(([p, t]) => [p, withoutComments(t)]),
  );
  const problems: string[] = [];
  for (const k of configKeys()) {
    if (!k.leaf) continue;
    const read = readers(k.key, code);
    const listed = NOT_IMPLEMENTED.find((e) => keyMatches(e.key, k.key));
    if (read.length === 0 && listed === undefined) {
      problems.push(`${k.key}: no code reads it and it is not in NOT_IMPLEMENTED`);
    }
  }
  ok(problems.length === 0, problems.join("\n"));
});

Deno.test("every not-implemented entry names a key of the schema and its owner", () => {
  const keys = configKeys().map((k) => k.key);
  for (const entry of NOT_IMPLEMENTED) {
    ok(keys.some((k) => keyMatches(entry.key, k)), `${entry.key} is not a key of the schema`);
    ok(entry.issue === null || entry.issue > 0, `${entry.key}: issue must be a number or null`);
  }
});

Deno.test("every leaf key has a one-line description in the schema", () => {
  const missing = configKeys().filter((k) => k.leaf && k.description === "").map((k) => k.key);
  ok(missing.length === 0, `keys without .describe(): ${missing.join(", ")}`);
});
