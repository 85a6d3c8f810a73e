// A linear-time matcher for rule patterns: a small regular-expression dialect compiled to a
// Thompson NFA and run as a Pike VM (every state advanced in lock-step, at most one thread per
// state). Matching costs O(text length × program size) whatever the pattern, so a rule file
// cannot stall the policy with catastrophic backtracking (`(a+)+$` on "aaaa…b"), and no
// timer is needed to guard it. Features that need backtracking (backreferences, lookaround)
// are refused when the pattern is parsed (_pattern_syntax.ts).
import {
  type CharTest,
  NFA_LIMITS,
  type Node,
  parseGlob,
  PatternSyntaxError,
  RegexParser,
} from "./_pattern_syntax.ts";

export { NFA_LIMITS, PatternSyntaxError } from "./_pattern_syntax.ts";

/** One instruction of the compiled program. */
type Inst =
  | { op: "char"; test: CharTest; next: number }
  | { op: "split"; a: number; b: number }
  | { op: "jmp"; next: number }
  | { op: "start"; next: number }
  | { op: "end"; next: number }
  | { op: "match" };

// ---------------------------------------------------------------------------------------
// Compilation

class Compiler {
  readonly prog: Inst[] = [];

  #emit(inst: Inst): number {
    if (this.prog.length >= NFA_LIMITS.maxProgram) {
      throw new PatternSyntaxError(
        `the pattern compiles to more than ${NFA_LIMITS.maxProgram} states`,
        0,
      );
    }
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  /** Emits `node`; returns the index of its first instruction. Continues at prog.length. */
  compile(node: Node): void {
    switch (node.kind) {
      case "char": {
        const at = this.#emit({ op: "char", test: node.test, next: -1 });
        (this.prog[at] as { next: number }).next = at + 1;
        return;
      }
      case "start": {
        const at = this.#emit({ op: "start", next: -1 });
        (this.prog[at] as { next: number }).next = at + 1;
        return;
      }
      case "end": {
        const at = this.#emit({ op: "end", next: -1 });
        (this.prog[at] as { next: number }).next = at + 1;
        return;
      }
      case "seq":
        for (const item of node.items) this.compile(item);
        return;
      case "alt": {
        const jumps: number[] = [];
        for (let i = 0; i < node.options.length; i++) {
          if (i < node.options.length - 1) {
            const split = this.#emit({ op: "split", a: -1, b: -1 });
            (this.prog[split] as { a: number }).a = split + 1;
            this.compile(node.options[i]);
            jumps.push(this.#emit({ op: "jmp", next: -1 }));
            (this.prog[split] as { b: number }).b = this.prog.length;
          } else {
            this.compile(node.options[i]);
          }
        }
        for (const j of jumps) (this.prog[j] as { next: number }).next = this.prog.length;
        return;
      }
      case "repeat":
        this.#repeat(node.node, node.min, node.max);
        return;
    }
  }

  #repeat(node: Node, min: number, max: number | null): void {
    for (let i = 0; i < min; i++) this.compile(node);
    if (max === null) {
      // L: split body, out; body; jmp L
      const split = this.#emit({ op: "split", a: -1, b: -1 });
      (this.prog[split] as { a: number }).a = split + 1;
      this.compile(node);
      this.#emit({ op: "jmp", next: split });
      (this.prog[split] as { b: number }).b = this.prog.length;
      return;
    }
    const splits: number[] = [];
    for (let i = min; i < max; i++) {
      const split = this.#emit({ op: "split", a: -1, b: -1 });
      (this.prog[split] as { a: number }).a = split + 1;
      splits.push(split);
      this.compile(node);
    }
    for (const s of splits) (this.prog[s] as { b: number }).b = this.prog.length;
  }
}

/** A compiled pattern: `matches(text)` in time linear in the text. */
export interface Program {
  /** True when the pattern matches `text` from its start (a prefix match, or whole with `$`). */
  matches(text: string): boolean;
}

function toProgram(node: Node): Program {
  const compiler = new Compiler();
  compiler.compile(node);
  compiler.prog.push({ op: "match" });
  const prog = compiler.prog;
  return { matches: (text) => run(prog, text) };
}

/** Adds the thread at `pc` and everything reachable without consuming a character. */
function addThread(
  prog: readonly Inst[],
  list: number[],
  seen: Uint32Array,
  generation: number,
  pc: number,
  atStart: boolean,
  atEnd: boolean,
): boolean {
  const stack = [pc];
  let matched = false;
  while (stack.length > 0) {
    const at = stack.pop() as number;
    if (seen[at] === generation) continue;
    seen[at] = generation;
    const inst = prog[at];
    switch (inst.op) {
      case "jmp":
        stack.push(inst.next);
        break;
      case "split":
        stack.push(inst.b, inst.a);
        break;
      case "start":
        if (atStart) stack.push(inst.next);
        break;
      case "end":
        if (atEnd) stack.push(inst.next);
        break;
      case "match":
        matched = true;
        break;
      case "char":
        list.push(at);
        break;
    }
  }
  return matched;
}

function run(prog: readonly Inst[], text: string): boolean {
  const seen = new Uint32Array(prog.length);
  let generation = 1;
  let current: number[] = [];
  if (addThread(prog, current, seen, generation, 0, true, text.length === 0)) return true;
  let i = 0;
  while (i < text.length && current.length > 0) {
    const cp = text.codePointAt(i) as number;
    i += cp > 0xffff ? 2 : 1;
    generation++;
    const next: number[] = [];
    for (const pc of current) {
      const inst = prog[pc] as Extract<Inst, { op: "char" }>;
      if (
        inst.test(cp) && addThread(prog, next, seen, generation, inst.next, false, i >= text.length)
      ) {
        return true;
      }
    }
    current = next;
  }
  return false;
}

/** Compiles a regular expression (matched from the start of the text, like Python's re.match). */
export function compileRegex(source: string): Program {
  if (source.length > NFA_LIMITS.maxPatternLength) {
    throw new PatternSyntaxError(
      `the pattern is longer than ${NFA_LIMITS.maxPatternLength} characters`,
      NFA_LIMITS.maxPatternLength,
    );
  }
  return toProgram(new RegexParser(source).parse());
}

/** Compiles a glob (the whole text must match; `*` also crosses `/`, as in Python's fnmatch). */
export function compileGlob(source: string): Program {
  if (source.length > NFA_LIMITS.maxPatternLength) {
    throw new PatternSyntaxError(
      `the pattern is longer than ${NFA_LIMITS.maxPatternLength} characters`,
      NFA_LIMITS.maxPatternLength,
    );
  }
  return toProgram(parseGlob(source));
}
