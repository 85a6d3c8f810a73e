// Rule files, parsed into rules with their positions: `.bernstein/always_allow.yaml` (a list
// of always-allow rules) and `.bernstein/rules.yaml` (a mapping with `always_allow`, `deny`,
// `ask` and `allow` lists). Every problem — YAML syntax, an unknown field, a duplicate id, a
// pattern the linear-time engine refuses — is reported with `file:line:col` and with its
// reach: the tool its rule names, or every tool when the rule (or the file) cannot be read.
// A call inside a problem's reach is asked about, never allowed (see engine.ts).
import type { ErrorCode } from "../errors/mod.ts";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type Scalar } from "yaml";
import { type CompiledPattern, compilePattern, isPatternError } from "./pattern.ts";
import { RULE_KINDS, type RuleKind } from "./rule_kinds.ts";

/** Members a rule may have. */
export const RULE_FIELDS = [
  "id",
  "tool",
  "input_pattern",
  "input_field",
  "content_patterns",
  "description",
] as const;

/** One parsed rule. */
export interface PolicyRule {
  /** Which list it is in. */
  kind: RuleKind;
  /** Unique kebab-case id. */
  id: string;
  /** Tool name or family as written (matched case-insensitively; `*` for any tool). */
  tool: string;
  /** The compiled `input_pattern`. */
  pattern: CompiledPattern;
  /** The input member matched (default `path`). */
  input_field: string;
  /** Strings that must all appear in the call's content. */
  content_patterns: string[];
  /** What it is for. */
  description?: string;
  /** `file:line:col` of the rule. */
  source: string;
}

/** A problem in a rule file. */
export interface RuleProblem {
  /** Stable code (`policy.rule_invalid`, `policy.duplicate_id`, …). */
  code: ErrorCode;
  /** One line. */
  message: string;
  /** `file:line:col`, or the file. */
  location: string;
  /** Tools (lower case) whose calls the broken part could decide; `*` for every tool. */
  reach: "*" | string[];
}

/** The result of parsing one file. */
export interface ParsedRuleFile {
  /** Rules that parsed. */
  rules: PolicyRule[];
  /** Problems. */
  problems: RuleProblem[];
}

const ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Ctx {
  file: string;
  lines: LineCounter;
  problems: RuleProblem[];
}

function at(ctx: Ctx, node: Node | null | undefined, fallback?: Node | null): string {
  const range = node?.range ?? fallback?.range;
  if (range === undefined || range === null) return ctx.file;
  const { line, col } = ctx.lines.linePos(range[0]);
  return `${ctx.file}:${line}:${col}`;
}

function problem(
  ctx: Ctx,
  code: ErrorCode,
  message: string,
  location: string,
  reach: RuleProblem["reach"],
): void {
  ctx.problems.push({ code, message, location, reach });
}

function pairOf(map: Node, key: string): { key: Node; value: Node | null } | undefined {
  if (!isMap(map)) return undefined;
  for (const p of map.items) {
    if (isScalar(p.key) && p.key.value === key) {
      return { key: p.key as Node, value: (p.value ?? null) as Node | null };
    }
  }
  return undefined;
}

function stringAt(node: Node | null): string | undefined {
  return isScalar(node) && typeof node.value === "string" ? node.value : undefined;
}

/** Column of offset `i` of a pattern inside its scalar (quoted scalars start one later). */
function patternLocation(ctx: Ctx, node: Scalar, i: number): string {
  const start = node.range?.[0];
  if (start === undefined) return ctx.file;
  const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE" ? 1 : 0;
  const { line, col } = ctx.lines.linePos(start + quoted + i);
  return `${ctx.file}:${line}:${col}`;
}

/** One rule being read: where it is, what it is called in messages, which tools a problem reaches. */
interface RuleSite {
  ctx: Ctx;
  node: Node;
  where: string;
  reach: RuleProblem["reach"];
}

function ruleProblem(site: RuleSite, code: ErrorCode, message: string, location: string): void {
  problem(site.ctx, code, message, location, site.reach);
}

function parseRule(ctx: Ctx, node: Node, kind: RuleKind, where: string): PolicyRule | undefined {
  if (!isMap(node)) {
    problem(ctx, "policy.rule_invalid", `${where} must be a mapping`, at(ctx, node), "*");
    return undefined;
  }
  const tool = stringAt(pairOf(node, "tool")?.value ?? null)?.trim();
  const site: RuleSite = { ctx, node, where, reach: tool ? [tool.toLowerCase()] : "*" };
  const before = ctx.problems.length;
  checkRuleFields(site, node.items);
  const id = requiredString(site, "id");
  if (id && !ID.test(id.text)) {
    ruleProblem(
      site,
      "policy.rule_invalid",
      `${where}.id '${id.text}' is not kebab-case`,
      at(ctx, id.node),
    );
  }
  requiredString(site, "tool");
  const pattern = readInputPattern(site);
  const field = readInputField(site);
  const contents = readContentPatterns(site);
  const description = readDescription(site);
  if (ctx.problems.length > before || !id || !tool || !pattern) return undefined;
  const rule: PolicyRule = {
    kind,
    id: id.text,
    tool,
    pattern,
    input_field: field,
    content_patterns: contents,
    source: at(ctx, node),
  };
  if (description !== undefined) rule.description = description;
  return rule;
}

/** A problem for every key that is not a rule field. */
function checkRuleFields(site: RuleSite, items: readonly { key: unknown }[]): void {
  for (const p of items) {
    const key = isScalar(p.key) ? String(p.key.value) : undefined;
    if (key === undefined || !(RULE_FIELDS as readonly string[]).includes(key)) {
      ruleProblem(
        site,
        "policy.unknown_field",
        `${site.where}: unknown field '${key ?? "?"}' (one of ${RULE_FIELDS.join(", ")})`,
        at(site.ctx, p.key as Node, site.node),
      );
    }
  }
}

/** A required non-empty string field and its node (a problem when it is missing or empty). */
function requiredString(site: RuleSite, name: string): { text: string; node: Node } | undefined {
  const pair = pairOf(site.node, name);
  const text = stringAt(pair?.value ?? null);
  if (text === undefined || text.trim() === "") {
    ruleProblem(
      site,
      "policy.rule_invalid",
      `${site.where}.${name}: required, a non-empty string`,
      at(site.ctx, pair?.value ?? pair?.key, site.node),
    );
    return undefined;
  }
  return { text, node: pair?.value as Node };
}

/** `input_pattern`, compiled (a problem pointing into the pattern when it does not compile). */
function readInputPattern(site: RuleSite): CompiledPattern | undefined {
  const patternText = requiredString(site, "input_pattern");
  if (patternText === undefined) return undefined;
  try {
    return compilePattern(patternText.text);
  } catch (error) {
    if (!isPatternError(error)) throw error;
    ruleProblem(
      site,
      "policy.bad_pattern",
      `${site.where}.input_pattern: ${error.message}`,
      patternLocation(site.ctx, patternText.node as Scalar, error.offset),
    );
    return undefined;
  }
}

/** `input_field` (default `path`): a member name of the tool's input. */
function readInputField(site: RuleSite): string {
  const fieldPair = pairOf(site.node, "input_field");
  if (fieldPair === undefined) return "path";
  const text = stringAt(fieldPair.value);
  if (text !== undefined && FIELD.test(text)) return text;
  ruleProblem(
    site,
    "policy.rule_invalid",
    `${site.where}.input_field: a member name such as path or command`,
    at(site.ctx, fieldPair.value, fieldPair.key),
  );
  return "path";
}

/** `content_patterns`: a list of non-empty strings (empty when absent). */
function readContentPatterns(site: RuleSite): string[] {
  const cpPair = pairOf(site.node, "content_patterns");
  if (cpPair === undefined) return [];
  const items = isSeq(cpPair.value) ? cpPair.value.items.map((i) => stringAt(i as Node)) : [];
  if (!isSeq(cpPair.value) || items.some((text) => text === undefined || text === "")) {
    ruleProblem(
      site,
      "policy.rule_invalid",
      `${site.where}.content_patterns: a list of non-empty strings`,
      at(site.ctx, cpPair.value, cpPair.key),
    );
    return [];
  }
  return items.filter((text) => text !== undefined);
}

/** `description`, when it is a string (a problem when it is something else). */
function readDescription(site: RuleSite): string | undefined {
  const descPair = pairOf(site.node, "description");
  if (descPair === undefined) return undefined;
  const text = stringAt(descPair.value);
  if (text === undefined) {
    ruleProblem(
      site,
      "policy.rule_invalid",
      `${site.where}.description: a string`,
      at(site.ctx, descPair.value, descPair.key),
    );
  }
  return text;
}

function parseList(ctx: Ctx, node: Node | null, kind: RuleKind, where: string): PolicyRule[] {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  if (!isSeq(node)) {
    problem(ctx, "policy.rule_invalid", `${where} must be a list of rules`, at(ctx, node), "*");
    return [];
  }
  const out: PolicyRule[] = [];
  node.items.forEach((item, i) => {
    const rule = parseRule(ctx, item as Node, kind, `${where}[${i}]`);
    if (rule !== undefined) out.push(rule);
  });
  return out;
}

function parseYaml(text: string, file: string): { ctx: Ctx; root: Node | null } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const ctx: Ctx = { file, lines, problems: [] };
  for (const e of doc.errors) {
    const { line, col } = lines.linePos(e.pos[0]);
    problem(
      ctx,
      "policy.yaml_syntax",
      e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, ""),
      `${file}:${line}:${col}`,
      "*",
    );
  }
  return { ctx, root: doc.errors.length > 0 ? null : (doc.contents as Node | null) };
}

/** Parses `.bernstein/always_allow.yaml`: a list of always-allow rules. */
export function parseAlwaysAllowFile(text: string, file: string): ParsedRuleFile {
  const { ctx, root } = parseYaml(text, file);
  if (ctx.problems.length > 0) return { rules: [], problems: ctx.problems };
  // The design also accepts the file holding an `always_allow:` mapping.
  const list = isMap(root) && pairOf(root, "always_allow") !== undefined
    ? (pairOf(root, "always_allow") as { value: Node | null }).value
    : root;
  const rules = parseList(ctx, list, "always_allow", "always_allow");
  return { rules, problems: ctx.problems };
}

/** Parses `.bernstein/rules.yaml`: `always_allow`, `deny`, `ask` and `allow` lists. */
export function parseRulesFile(text: string, file: string): ParsedRuleFile {
  const { ctx, root } = parseYaml(text, file);
  if (ctx.problems.length > 0) return { rules: [], problems: ctx.problems };
  if (root === null || (isScalar(root) && root.value === null)) return { rules: [], problems: [] };
  if (!isMap(root)) {
    problem(
      ctx,
      "policy.rule_invalid",
      `the file must be a mapping of ${RULE_KINDS.join(", ")}`,
      at(ctx, root),
      "*",
    );
    return { rules: [], problems: ctx.problems };
  }
  const rules: PolicyRule[] = [];
  for (const p of root.items) {
    const key = isScalar(p.key) ? String(p.key.value) : "?";
    if (!(RULE_KINDS as readonly string[]).includes(key)) {
      problem(
        ctx,
        "policy.unknown_field",
        `unknown list '${key}' (one of ${RULE_KINDS.join(", ")})`,
        at(ctx, p.key as Node),
        "*",
      );
      continue;
    }
    rules.push(...parseList(ctx, (p.value ?? null) as Node | null, key as RuleKind, key));
  }
  return { rules, problems: ctx.problems };
}

/**
 * Drops every rule whose id an earlier rule already uses (across all files, in order),
 * reporting each at its own position with the first one's.
 */
export function dropDuplicateIds(rules: readonly PolicyRule[]): ParsedRuleFile {
  const seen = new Map<string, PolicyRule>();
  const kept: PolicyRule[] = [];
  const problems: RuleProblem[] = [];
  for (const r of rules) {
    const first = seen.get(r.id);
    if (first === undefined) {
      seen.set(r.id, r);
      kept.push(r);
    } else {
      problems.push({
        code: "policy.duplicate_id",
        message: `rule id '${r.id}' is already used at ${first.source}`,
        location: r.source,
        reach: [r.tool.toLowerCase(), first.tool.toLowerCase()],
      });
    }
  }
  return { rules: kept, problems };
}
