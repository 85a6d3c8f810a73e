/**
 * The condition language of conditional dependencies (`depends_on: [{step: run-tests, condition:
 * "status == 'failed'"}]`): a small expression over the upstream's `status`, `result` and
 * `output`, parsed into a tree and evaluated by walking it — never `eval`, no other names, no
 * calls, no numbers. Every value is a string, a list of strings or a boolean; types are
 * checked when the plan loads, so evaluation cannot fail.
 *
 * ```
 * expr    := or
 * or      := and ("or" and)*
 * and     := not ("and" not)*
 * not     := "not" not | primary
 * primary := "(" expr ")" | "true" | "false" | value OP value
 * OP      := "==" | "!=" | "in" | "not in" | "contains"
 * value   := NAME | STRING | "[" (STRING ("," STRING)*)? "]"
 * NAME    := status | result | output
 * STRING  := '…' | "…"   (escapes: \\ \' \" \n \t)
 * ```
 *
 * `a in [..]` is membership, `a in "s"` and `s contains a` are substring tests; `==` and `!=`
 * compare strings. `and`/`or` short-circuit. At most 1,000 characters and 32 levels of nesting.
 *
 * @example
 * ```ts
 * const c = parseCondition("status == 'failed' and output contains 'FAIL'");
 * if (c.ok) evaluateCondition(c.condition, { status: "failed", result: "", output: "1 FAIL" });
 * ```
 */

/** The names a condition may read. */
export const CONDITION_NAMES = ["status", "result", "output"] as const;

/** What a condition is evaluated against: the upstream task's outcome. */
export interface ConditionContext {
  /** `done`, `failed`, `cancelled` or `skipped`. */
  status: string;
  /** Why it failed (its terminal reason), or its agent's summary when it was done. */
  result: string;
  /** The output of its failed check (gate or completion signal), else "". */
  output: string;
}

/** Longest condition text accepted. */
export const MAX_CONDITION_LENGTH = 1000;
const MAX_DEPTH = 32;

type Value =
  | { kind: "name"; name: typeof CONDITION_NAMES[number] }
  | { kind: "string"; value: string }
  | { kind: "list"; items: string[] };

/** A parsed condition. */
export type Condition =
  | { kind: "bool"; value: boolean }
  | { kind: "not"; operand: Condition }
  | { kind: "and" | "or"; left: Condition; right: Condition }
  | { kind: "compare"; op: "==" | "!=" | "in" | "not in" | "contains"; left: Value; right: Value };

/** What {@linkcode parseCondition} returns. */
export type ParsedCondition =
  | { ok: true; condition: Condition; text: string }
  | { ok: false; problem: string; column: number };

type Token =
  | { t: "name" | "string" | "op" | "punct" | "word"; v: string; at: number }
  | { t: "end"; v: ""; at: number };

class ConditionSyntaxError extends Error {
  constructor(message: string, readonly column: number) {
    super(message);
  }
}

const WORDS = new Set(["and", "or", "not", "in", "contains", "true", "false"]);
const ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  n: "\n",
  t: "\t",
};

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const at = i + 1;
    if (c === "'" || c === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new ConditionSyntaxError("unterminated string", at);
        const d = text[i];
        if (d === c) break;
        if (d === "\\") {
          const e = ESCAPES[text[i + 1] ?? ""];
          if (e === undefined) {
            throw new ConditionSyntaxError(`unknown escape '\\${text[i + 1] ?? ""}'`, i + 1);
          }
          value += e;
          i += 2;
          continue;
        }
        value += d;
        i++;
      }
      i++;
      out.push({ t: "string", v: value, at });
      continue;
    }
    if (text.startsWith("==", i) || text.startsWith("!=", i)) {
      out.push({ t: "op", v: text.slice(i, i + 2), at });
      i += 2;
      continue;
    }
    if ("()[],".includes(c)) {
      out.push({ t: "punct", v: c, at });
      i++;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
    if (word === undefined) throw new ConditionSyntaxError(`unexpected '${c}'`, at);
    if (WORDS.has(word)) out.push({ t: "word", v: word, at });
    else if ((CONDITION_NAMES as readonly string[]).includes(word)) {
      out.push({ t: "name", v: word, at });
    } else {
      throw new ConditionSyntaxError(
        `unknown name '${word}' (a condition reads ${CONDITION_NAMES.join(", ")})`,
        at,
      );
    }
    i += word.length;
  }
  out.push({ t: "end", v: "", at: text.length + 1 });
  return out;
}

class Parser {
  #i = 0;
  constructor(readonly tokens: Token[]) {}

  get #peek(): Token {
    return this.tokens[this.#i];
  }

  #is(t: Token["t"], v?: string): boolean {
    const k = this.#peek;
    return k.t === t && (v === undefined || k.v === v);
  }

  #take(): Token {
    return this.tokens[this.#i++];
  }

  #expect(t: Token["t"], v: string, what: string): void {
    if (!this.#is(t, v)) throw this.#error(`expected ${what}`);
    this.#take();
  }

  #error(message: string): ConditionSyntaxError {
    const k = this.#peek;
    const found = k.t === "end" ? "end of condition" : `'${k.v}'`;
    return new ConditionSyntaxError(`${message}, found ${found}`, k.at);
  }

  parse(): Condition {
    const c = this.#or(0);
    if (!this.#is("end")) throw this.#error("expected 'and', 'or' or the end");
    return c;
  }

  #or(depth: number): Condition {
    let left = this.#and(depth);
    while (this.#is("word", "or")) {
      this.#take();
      left = { kind: "or", left, right: this.#and(depth) };
    }
    return left;
  }

  #and(depth: number): Condition {
    let left = this.#not(depth);
    while (this.#is("word", "and")) {
      this.#take();
      left = { kind: "and", left, right: this.#not(depth) };
    }
    return left;
  }

  #not(depth: number): Condition {
    if (depth > MAX_DEPTH) throw this.#error(`nested more than ${MAX_DEPTH} levels`);
    if (this.#is("word", "not")) {
      this.#take();
      return { kind: "not", operand: this.#not(depth + 1) };
    }
    return this.#primary(depth);
  }

  #primary(depth: number): Condition {
    if (this.#is("punct", "(")) {
      this.#take();
      const inner = this.#or(depth + 1);
      this.#expect("punct", ")", "')'");
      return inner;
    }
    if (this.#is("word", "true") || this.#is("word", "false")) {
      return { kind: "bool", value: this.#take().v === "true" };
    }
    const at = this.#peek.at;
    const left = this.#value();
    let op: "==" | "!=" | "in" | "not in" | "contains";
    if (this.#is("op")) op = this.#take().v as "==" | "!=";
    else if (this.#is("word", "in")) {
      this.#take();
      op = "in";
    } else if (this.#is("word", "contains")) {
      this.#take();
      op = "contains";
    } else if (this.#is("word", "not") && this.tokens[this.#i + 1]?.v === "in") {
      this.#i += 2;
      op = "not in";
    } else {
      throw this.#error("expected ==, !=, in, not in or contains after a value");
    }
    const right = this.#value();
    return checkTypes({ kind: "compare", op, left, right }, at);
  }

  #value(): Value {
    const k = this.#peek;
    if (k.t === "name") {
      this.#take();
      return { kind: "name", name: k.v as typeof CONDITION_NAMES[number] };
    }
    if (k.t === "string") {
      this.#take();
      return { kind: "string", value: k.v };
    }
    if (this.#is("punct", "[")) {
      this.#take();
      const items: string[] = [];
      if (!this.#is("punct", "]")) {
        for (;;) {
          if (!this.#is("string")) throw this.#error("a list holds strings only");
          items.push(this.#take().v);
          if (!this.#is("punct", ",")) break;
          this.#take();
        }
      }
      this.#expect("punct", "]", "',' or ']'");
      return { kind: "list", items };
    }
    throw this.#error("expected status, result, output, a string or a list");
  }
}

function checkTypes(c: Condition & { kind: "compare" }, at: number): Condition {
  const listLeft = c.left.kind === "list";
  const listRight = c.right.kind === "list";
  if (listLeft) throw new ConditionSyntaxError(`a list cannot be the left side of ${c.op}`, at);
  if (listRight && c.op !== "in" && c.op !== "not in") {
    throw new ConditionSyntaxError(`${c.op} compares strings; a list goes after 'in'`, at);
  }
  return c;
}

/** Parses a condition, or says what is wrong with it and at which 1-based column. */
export function parseCondition(text: string): ParsedCondition {
  if (text.length > MAX_CONDITION_LENGTH) {
    return {
      ok: false,
      problem: `longer than ${MAX_CONDITION_LENGTH} characters`,
      column: MAX_CONDITION_LENGTH + 1,
    };
  }
  try {
    return { ok: true, condition: new Parser(tokenize(text)).parse(), text };
  } catch (error) {
    if (error instanceof ConditionSyntaxError) {
      return { ok: false, problem: error.message, column: error.column };
    }
    throw error;
  }
}

function valueOf(v: Value, ctx: ConditionContext): string | readonly string[] {
  switch (v.kind) {
    case "name":
      return ctx[v.name];
    case "string":
      return v.value;
    case "list":
      return v.items;
  }
}

/** Evaluates a parsed condition against an upstream's outcome. */
export function evaluateCondition(c: Condition, ctx: ConditionContext): boolean {
  switch (c.kind) {
    case "bool":
      return c.value;
    case "not":
      return !evaluateCondition(c.operand, ctx);
    case "and":
      return evaluateCondition(c.left, ctx) && evaluateCondition(c.right, ctx);
    case "or":
      return evaluateCondition(c.left, ctx) || evaluateCondition(c.right, ctx);
    case "compare": {
      const left = valueOf(c.left, ctx) as string;
      const right = valueOf(c.right, ctx);
      switch (c.op) {
        case "==":
          return left === right;
        case "!=":
          return left !== right;
        case "in":
          return right.includes(left);
        case "not in":
          return !right.includes(left);
        case "contains":
          return left.includes(right as string);
      }
    }
  }
}
