// The syntax of rule patterns: a small regular-expression dialect (literals, `.`, classes,
// `\d \w \s` and their negations, groups, alternation, `* + ? {m,n}`, `^ $`) and fnmatch
// globs, parsed into one tree the linear-time compiler (_nfa.ts) turns into a program.
// Constructs that need backtracking are refused here, with the offset of the problem.

/** A character test. */
export type CharTest = (c: number) => boolean;

/** A pattern that cannot be compiled; `offset` is the code-unit index of the problem. */
export class PatternSyntaxError extends Error {
  override name = "PatternSyntaxError";
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** Limits that keep one pattern's program small. */
export const NFA_LIMITS = {
  /** Longest pattern text accepted. */
  maxPatternLength: 2000,
  /** Largest `{n,m}` count. */
  maxRepeat: 100,
  /** Largest compiled program (instructions). */
  maxProgram: 20_000,
} as const;

/** The parsed pattern. */
export type Node =
  | { kind: "char"; test: CharTest }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; node: Node; min: number; max: number | null }
  | { kind: "start" }
  | { kind: "end" };

const isDigit: CharTest = (c) => c >= 48 && c <= 57;
const isWord: CharTest = (c) =>
  isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpace: CharTest = (c) =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 ||
  c === 0xfeff;
const not = (t: CharTest): CharTest => (c) => !t(c);
const exactly = (x: number): CharTest => (c) => c === x;
const anyButNewline: CharTest = (c) => c !== 10;
const anything: CharTest = () => true;

const CLASS_ESCAPES: Record<string, CharTest> = {
  d: isDigit,
  D: not(isDigit),
  w: isWord,
  W: not(isWord),
  s: isSpace,
  S: not(isSpace),
};
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, r: 13, f: 12, v: 11, "0": 0 };

/** Parses the regex dialect. */
export class RegexParser {
  #pos = 0;
  constructor(readonly src: string) {}

  parse(): Node {
    const node = this.#alternation();
    if (this.#pos < this.src.length) {
      throw new PatternSyntaxError(`unmatched ')'`, this.#pos);
    }
    return node;
  }

  #peek(): string | undefined {
    return this.src[this.#pos];
  }

  #alternation(): Node {
    const options = [this.#sequence()];
    while (this.#peek() === "|") {
      this.#pos++;
      options.push(this.#sequence());
    }
    return options.length === 1 ? options[0] : { kind: "alt", options };
  }

  #sequence(): Node {
    const items: Node[] = [];
    while (this.#pos < this.src.length && this.#peek() !== "|" && this.#peek() !== ")") {
      items.push(this.#quantified());
    }
    return { kind: "seq", items };
  }

  #quantified(): Node {
    let node = this.#atom();
    for (;;) {
      const at = this.#pos;
      const c = this.#peek();
      let min: number;
      let max: number | null;
      if (c === "*") [min, max] = [0, null];
      else if (c === "+") [min, max] = [1, null];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{" && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.#pos))) {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.#pos)) as RegExpExecArray;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? null : Number(m[3]);
        if (min > NFA_LIMITS.maxRepeat || (max !== null && max > NFA_LIMITS.maxRepeat)) {
          throw new PatternSyntaxError(
            `a repeat count above ${NFA_LIMITS.maxRepeat} is not supported`,
            this.#pos,
          );
        }
        if (max !== null && max < min) {
          throw new PatternSyntaxError(`repeat range {${min},${max}} is out of order`, this.#pos);
        }
        this.#pos += m[0].length - 1;
      } else return node;
      this.#pos++;
      // A lazy marker changes which match is reported, never whether one exists.
      if (this.#peek() === "?") this.#pos++;
      if (node.kind === "start" || node.kind === "end") {
        throw new PatternSyntaxError("nothing to repeat", at);
      }
      node = { kind: "repeat", node, min, max };
    }
  }

  #atom(): Node {
    const at = this.#pos;
    const c = this.src[this.#pos++];
    switch (c) {
      case "^":
        return { kind: "start" };
      case "$":
        return { kind: "end" };
      case ".":
        return { kind: "char", test: anyButNewline };
      case "(":
        return this.#group(at);
      case "[":
        return { kind: "char", test: this.#charClass(at) };
      case "\\":
        return { kind: "char", test: this.#escape(at, false) };
      case "*":
      case "+":
      case "?":
        throw new PatternSyntaxError("nothing to repeat", at);
      case "{":
      case "}":
      case "]":
        return { kind: "char", test: exactly(c.charCodeAt(0)) };
      default: {
        const cp = this.src.codePointAt(at) as number;
        if (cp > 0xffff) this.#pos++;
        return { kind: "char", test: exactly(cp) };
      }
    }
  }

  #group(at: number): Node {
    if (this.#peek() === "?") {
      const rest = this.src.slice(this.#pos, this.#pos + 3);
      if (rest.startsWith("?:")) this.#pos += 2;
      else if (/^\?<[A-Za-z_]/.test(rest)) {
        const close = this.src.indexOf(">", this.#pos);
        if (close < 0) throw new PatternSyntaxError("unterminated group name", at);
        this.#pos = close + 1;
      } else {
        throw new PatternSyntaxError(
          "lookahead, lookbehind and inline flags are not supported (they need backtracking)",
          at,
        );
      }
    }
    const inner = this.#alternation();
    if (this.#peek() !== ")") throw new PatternSyntaxError("missing ')'", at);
    this.#pos++;
    return inner;
  }

  #escape(at: number, inClass: boolean): CharTest {
    const c = this.src[this.#pos++];
    if (c === undefined) throw new PatternSyntaxError("pattern ends with '\\'", at);
    if (c in CLASS_ESCAPES) return CLASS_ESCAPES[c];
    if (c in CONTROL_ESCAPES) return exactly(CONTROL_ESCAPES[c]);
    if (/[1-9]/.test(c)) {
      throw new PatternSyntaxError("backreferences are not supported (they need backtracking)", at);
    }
    if (c === "b" || c === "B") {
      if (inClass && c === "b") return exactly(8);
      throw new PatternSyntaxError("word boundaries are not supported", at);
    }
    if (c === "x" || c === "u") {
      const len = c === "x" ? 2 : 4;
      const hex = this.src.slice(this.#pos, this.#pos + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) {
        throw new PatternSyntaxError(`'\\${c}' needs ${len} hex digits`, at);
      }
      this.#pos += len;
      return exactly(parseInt(hex, 16));
    }
    if (/[A-Za-z0-9]/.test(c)) throw new PatternSyntaxError(`unknown escape '\\${c}'`, at);
    return exactly(c.charCodeAt(0));
  }

  #charClass(at: number): CharTest {
    let negate = false;
    if (this.#peek() === "^") {
      negate = true;
      this.#pos++;
    }
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      const c = this.src[this.#pos];
      if (c === undefined) throw new PatternSyntaxError("missing ']'", at);
      if (c === "]" && !first) {
        this.#pos++;
        break;
      }
      first = false;
      const lo = this.#classAtom();
      if (
        this.#peek() === "-" && this.src[this.#pos + 1] !== "]" &&
        this.src[this.#pos + 1] !== undefined && typeof lo === "number"
      ) {
        this.#pos++;
        const hi = this.#classAtom();
        if (typeof hi !== "number") throw new PatternSyntaxError("bad range in '[...]'", at);
        if (hi < lo) throw new PatternSyntaxError("range out of order in '[...]'", at);
        tests.push((x) => x >= lo && x <= hi);
      } else {
        tests.push(typeof lo === "number" ? exactly(lo) : lo);
      }
    }
    const inClass: CharTest = (x) => tests.some((t) => t(x));
    return negate ? not(inClass) : inClass;
  }

  /** One member of a class: a code point, or a test for an escape such as `\d`. */
  #classAtom(): number | CharTest {
    const c = this.src[this.#pos];
    if (c === "\\") {
      this.#pos++;
      const next = this.src[this.#pos];
      if (next !== undefined && next in CLASS_ESCAPES) {
        this.#pos++;
        return CLASS_ESCAPES[next];
      }
      this.#pos--;
      const start = this.#pos;
      this.#pos++;
      const test = this.#escape(start, true);
      // Single-character escapes are exact tests; recover the code point for ranges.
      const ch = this.src[start + 1];
      if (ch in CONTROL_ESCAPES) return CONTROL_ESCAPES[ch];
      if (ch === "b") return 8;
      if (ch === "x" || ch === "u") return parseInt(this.src.slice(start + 2, this.#pos), 16);
      if (/[^A-Za-z0-9]/.test(ch)) return ch.charCodeAt(0);
      return test;
    }
    const cp = this.src.codePointAt(this.#pos) as number;
    this.#pos += cp > 0xffff ? 2 : 1;
    return cp;
  }
}

/** Parses glob syntax (fnmatch: `*` any run, `?` one character, `[seq]`, `[!seq]`). */
export function parseGlob(src: string): Node {
  const items: Node[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "*") {
      while (src[i] === "*") i++;
      items.push({ kind: "repeat", node: { kind: "char", test: anything }, min: 0, max: null });
      continue;
    }
    if (c === "?") {
      items.push({ kind: "char", test: anything });
      i++;
      continue;
    }
    if (c === "[") {
      const close = src.indexOf("]", i + (src[i + 1] === "!" ? 3 : 2));
      if (close > 0) {
        let body = src.slice(i + 1, close);
        const negate = body.startsWith("!");
        if (negate) body = body.slice(1);
        const tests: CharTest[] = [];
        for (let j = 0; j < body.length; j++) {
          const lo = body.charCodeAt(j);
          if (body[j + 1] === "-" && j + 2 < body.length) {
            const hi = body.charCodeAt(j + 2);
            tests.push((x) => x >= lo && x <= hi);
            j += 2;
          } else tests.push(exactly(lo));
        }
        const test: CharTest = (x) => tests.some((t) => t(x));
        items.push({ kind: "char", test: negate ? not(test) : test });
        i = close + 1;
        continue;
      }
    }
    const cp = src.codePointAt(i) as number;
    items.push({ kind: "char", test: exactly(cp) });
    i += cp > 0xffff ? 2 : 1;
  }
  return { kind: "seq", items: [{ kind: "start" }, ...items, { kind: "end" }] };
}
