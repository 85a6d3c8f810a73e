// Reading the rule files of a project (the I/O edge of the policy): `.bernstein/always_allow.yaml`
// and `.bernstein/rules.yaml` under the repository root. A file that is absent holds no rules;
// a file that cannot be read, is larger than the limit or is not UTF-8 is a problem whose
// reach is every tool, so the engine asks about every call rather than allow one.
import { join } from "node:path";
import { readUpTo } from "../io/mod.ts";
import type { EffectivePolicy } from "./engine.ts";
// The parser is loaded only for a project that has a rule file: it brings the yaml package,
// CommonJS, ~70 ms of CPU to evaluate, which every bernstein start paid.
import type { ParsedRuleFile, PolicyRule, RuleProblem } from "./rules.ts";

/** The rule files, relative to the repository root, in the order they are read. */
export const RULE_FILES = [".bernstein/always_allow.yaml", ".bernstein/rules.yaml"] as const;

/** Default size limit of one rule file (`tuning.policy.max_rule_file_bytes`). */
export const DEFAULT_MAX_RULE_FILE_BYTES = 1024 * 1024;

/** What was found of one rule file. */
export interface RuleFileStatus {
  /** Path as given (absolute). */
  path: string;
  /** absent, loaded, or unreadable. */
  status: "absent" | "loaded" | "unreadable";
  /** Rules taken from it. */
  rules: number;
}

/** The effective policy of a project with what was read. */
export interface LoadedPolicy extends EffectivePolicy {
  /** One entry per rule file. */
  files: RuleFileStatus[];
}

/** Reads at most `max` bytes; the text, or why it cannot be used. */
async function readRuleText(path: string, max: number): Promise<
  { text: string } | { absent: true } | { problem: string }
> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { absent: true };
    return { problem: `cannot be read: ${(error as Error).message}` };
  }
  try {
    const info = await file.stat();
    if (!info.isFile) return { problem: "is not a regular file" };
    const bytes = await readUpTo(file, max + 1);
    if (bytes.length > max) return { problem: `is larger than ${max} bytes` };
    try {
      return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } catch {
      const bad = firstBadUtf8(bytes);
      return { problem: `is not UTF-8 (invalid byte at offset ${bad})` };
    }
  } catch (error) {
    return { problem: `cannot be read: ${(error as Error).message}` };
  } finally {
    file.close();
  }
}

function firstBadUtf8(bytes: Uint8Array): number {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let lo = 0;
  let hi = bytes.length;
  // The shortest prefix that fails to decode ends at the bad byte (or a cut sequence).
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    try {
      decoder.decode(bytes.subarray(0, mid + 1));
      lo = mid + 1;
    } catch {
      hi = mid;
    }
  }
  return lo;
}

/**
 * Loads the rule files under `root`. Never throws for a bad file: every problem is in
 * `problems` with `file:line:col` and its reach.
 *
 * @example
 * ```ts
 * const policy = await loadPolicy("/repo");
 * for (const p of policy.problems) console.error(`${p.location}: ${p.message}`);
 * ```
 */
export async function loadPolicy(
  root: string,
  options: { maxBytes?: number } = {},
): Promise<LoadedPolicy> {
  const max = options.maxBytes ?? DEFAULT_MAX_RULE_FILE_BYTES;
  const files: RuleFileStatus[] = [];
  const rules: PolicyRule[] = [];
  const problems: RuleProblem[] = [];
  for (const rel of RULE_FILES) {
    const path = join(root, rel);
    const read = await readRuleText(path, max);
    if ("absent" in read) {
      files.push({ path, status: "absent", rules: 0 });
      continue;
    }
    if ("problem" in read) {
      problems.push({
        code: "policy.file_unreadable",
        message: `${rel} ${read.problem}`,
        location: path,
        reach: "*",
      });
      files.push({ path, status: "unreadable", rules: 0 });
      continue;
    }
    // Locations name the file relative to the root (`.bernstein/rules.yaml:3:5`).
    const parser = await import("./rules.ts");
    const parsed: ParsedRuleFile = rel.endsWith("always_allow.yaml")
      ? parser.parseAlwaysAllowFile(read.text, rel)
      : parser.parseRulesFile(read.text, rel);
    rules.push(...parsed.rules);
    problems.push(...parsed.problems);
    files.push({ path, status: "loaded", rules: parsed.rules.length });
  }
  const unique = rules.length === 0
    ? { rules, problems: [] }
    : (await import("./rules.ts")).dropDuplicateIds(rules);
  return { rules: unique.rules, problems: [...problems, ...unique.problems], files };
}
