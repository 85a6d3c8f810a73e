// The one statement of the verifier's closed module set (docs/DESIGN.md: "The verifier stays
// tiny"), used by tests/architecture_test.ts (from verify.ts) and tests/verify/purity_test.ts
// (from src/verify and src/lineage), so the two can never drift apart.

/** Local modules the verifier may load (repo-relative paths). */
export const VERIFIER_LOCAL: readonly RegExp[] = [
  /^verify\.ts$/,
  /^deno\.json$/,
  /^src\/(verify|pack_format|canonical|crypto|errors|meta)\/[a-z0-9_]+\.ts$/,
  /^src\/(lineage|compliance)\/[a-z0-9_]+\.ts$/, // the pure top level only, not subfolders
];

/** npm packages the verifier may load (inflate, hashing, signatures). */
export const VERIFIER_NPM = /^npm:\/?(fflate|@noble\/(ed25519|hashes))@/;

/** Node built-ins it may load; node:path is pure string handling and needs no permission. */
export const VERIFIER_NODE: ReadonlySet<string> = new Set([
  "node:crypto",
  "node:buffer",
  "node:path",
]);

/** APIs no verifier module may mention: writes, processes, env, network. */
export const VERIFIER_FORBIDDEN: readonly RegExp[] = [
  /\bDeno\.(Command|run)\b/,
  /\bDeno\.(write|writeFile|writeTextFile|mkdir|remove|rename|chmod|create|truncate|symlink|link)\w*\b/,
  /\bDeno\.env\b/,
  /\bfetch\(/,
  /\bDeno\.(connect|listen|serve)\b/,
  /write:\s*true/,
];

/** Why a module spec breaks the verifier's rules, or undefined when it is allowed. */
export function verifierModuleProblem(
  spec: string,
  localPath: string | undefined,
): string | undefined {
  if (localPath !== undefined) {
    return VERIFIER_LOCAL.some((re) => re.test(localPath))
      ? undefined
      : `${localPath} is outside the verifier's module set`;
  }
  return VERIFIER_NPM.test(spec) || VERIFIER_NODE.has(spec)
    ? undefined
    : `${spec} is not allowed in the verifier`;
}

/** The forbidden API a module's text (comments stripped) mentions, if any. */
export function forbiddenApiIn(text: string): string | undefined {
  const code = text.replace(/^\s*(\/\/|\*).*$/gm, "");
  for (const rule of VERIFIER_FORBIDDEN) {
    const m = rule.exec(code);
    if (m) return m[0];
  }
  return undefined;
}
