// The rule lists a rule file holds, in precedence order. Apart from the parser (rules.ts) so
// that naming them does not load the parser and the yaml package under it.

/** The rule lists, in precedence order. */
export const RULE_KINDS = ["always_allow", "deny", "ask", "allow"] as const;

/** One of {@linkcode RULE_KINDS}. */
export type RuleKind = typeof RULE_KINDS[number];
