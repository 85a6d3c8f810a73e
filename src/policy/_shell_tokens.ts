// Shell text as tokens: words (quotes and escapes removed, computed parts kept as written and
// marked), control operators and redirections, with here-document bodies skipped and the text
// of every substitution (`$(…)`, backticks, `<(…)`) collected so it can be read too. Problems
// (unbalanced quotes, an unclosed here-document) are collected, never thrown.

/** One word of a command: its text with quotes removed, and whether it is computed. */
export interface ShellWord {
  /** The literal text (quotes and escapes removed; computed parts kept as written). */
  text: string;
  /** Part of it is computed at run time ($VAR, $(…), `…`) or expanded (unquoted glob, ~). */
  dynamic: boolean;
}

/** One token. */
export type Token =
  | { kind: "word"; word: ShellWord }
  | { kind: "op"; op: string }
  | { kind: "redirect"; op: string };

/** Splits shell text into tokens; `problems` and the `nested` substitution texts on the side. */
export class Tokenizer {
  #i = 0;
  readonly tokens: Token[] = [];
  readonly problems: string[] = [];
  readonly nested: string[] = [];
  #heredocs: { tag: string; strip: boolean }[] = [];

  constructor(readonly src: string) {}

  run(): void {
    while (this.#i < this.src.length) {
      const c = this.src[this.#i];
      if (c === "\n") {
        this.tokens.push({ kind: "op", op: ";" });
        this.#i++;
        this.#readHeredocBodies();
      } else if (c === " " || c === "\t" || c === "\r") this.#i++;
      else if (c === "#") this.#skipComment();
      else if (this.#operator()) continue;
      else this.#word();
    }
    if (this.#heredocs.length > 0) {
      this.problems.push(`here document '${this.#heredocs[0].tag}' is never closed`);
    }
  }

  #skipComment(): void {
    while (this.#i < this.src.length && this.src[this.#i] !== "\n") this.#i++;
  }

  #operator(): boolean {
    const rest = this.src.slice(this.#i, this.#i + 3);
    for (const op of ["&&", "||", ";;", "|&", ";", "|", "&", "(", ")"]) {
      if (rest.startsWith(op) && !(op === "&" && rest.startsWith("&>"))) {
        this.tokens.push({ kind: "op", op: op === "|&" ? "|" : op === "&" ? ";" : op });
        this.#i += op.length;
        return true;
      }
    }
    const redirect = /^(\d*|&)(>>|>\||>&|>|<<-|<<<|<<|<>|<&|<)/.exec(this.src.slice(this.#i));
    if (
      redirect !== null && !this.src.slice(this.#i).startsWith("<(") &&
      !this.src.slice(this.#i).startsWith(">(")
    ) {
      this.#i += redirect[0].length;
      const op = redirect[2];
      if (op === "<<" || op === "<<-") return this.#heredocStart(op === "<<-");
      this.tokens.push({ kind: "redirect", op });
      return true;
    }
    return false;
  }

  #heredocStart(strip: boolean): boolean {
    while (this.src[this.#i] === " " || this.src[this.#i] === "\t") this.#i++;
    const word = this.#readWord();
    if (word === undefined || word.text === "") {
      this.problems.push("here document without a delimiter");
      return true;
    }
    this.#heredocs.push({ tag: word.text, strip });
    this.tokens.push({ kind: "redirect", op: "<<" });
    this.tokens.push({ kind: "word", word: { text: "(here document)", dynamic: false } });
    return true;
  }

  #readHeredocBodies(): void {
    while (this.#heredocs.length > 0) {
      const { tag, strip } = this.#heredocs[0];
      let closed = false;
      while (this.#i < this.src.length) {
        let end = this.src.indexOf("\n", this.#i);
        if (end < 0) end = this.src.length;
        const line = this.src.slice(this.#i, end);
        this.#i = Math.min(end + 1, this.src.length);
        if ((strip ? line.replace(/^\t+/, "") : line) === tag) {
          closed = true;
          break;
        }
      }
      if (!closed) return;
      this.#heredocs.shift();
    }
  }

  #word(): void {
    const word = this.#readWord();
    if (word !== undefined) this.tokens.push({ kind: "word", word });
  }

  /** Reads one word at the cursor (quotes, escapes, substitutions). */
  #readWord(): ShellWord | undefined {
    let text = "";
    let dynamic = false;
    const start = this.#i;
    while (this.#i < this.src.length) {
      const c = this.src[this.#i];
      if (" \t\r\n;&|()<>".includes(c)) {
        // `<(…)` and `>(…)` inside a word are process substitutions.
        if ((c === "<" || c === ">") && this.src[this.#i + 1] === "(") {
          this.#i++;
          text += c + this.#substitution("(", ")");
          dynamic = true;
          continue;
        }
        break;
      }
      if (c === "\\") {
        text += this.src[this.#i + 1] ?? "";
        this.#i += 2;
      } else if (c === "'") {
        const end = this.src.indexOf("'", this.#i + 1);
        if (end < 0) {
          this.problems.push(`unbalanced single quote at ${this.#i}`);
          this.#i = this.src.length;
          return { text, dynamic: true };
        }
        text += this.src.slice(this.#i + 1, end);
        this.#i = end + 1;
      } else if (c === '"') {
        const r = this.#doubleQuoted();
        text += r.text;
        dynamic ||= r.dynamic;
      } else if (c === "$" || c === "`") {
        text += this.#dollar();
        dynamic = true;
      } else {
        // `~` and `~/…` are the home folder (known); `~user` is not.
        const next = this.src[this.#i + 1];
        const tildeUser = c === "~" && this.#i === start && next !== undefined &&
          next !== "/" && !" \t\r\n;&|()<>".includes(next);
        if ("*?[".includes(c) || tildeUser) dynamic = true;
        text += c;
        this.#i++;
      }
    }
    return this.#i === start ? undefined : { text, dynamic };
  }

  #doubleQuoted(): ShellWord {
    let text = "";
    let dynamic = false;
    this.#i++;
    while (this.#i < this.src.length && this.src[this.#i] !== '"') {
      const c = this.src[this.#i];
      if (c === "\\" && '$`"\\\n'.includes(this.src[this.#i + 1] ?? "")) {
        text += this.src[this.#i + 1];
        this.#i += 2;
      } else if (c === "$" || c === "`") {
        text += this.#dollar();
        dynamic = true;
      } else {
        text += c;
        this.#i++;
      }
    }
    if (this.#i >= this.src.length) {
      this.problems.push("unbalanced double quote");
      return { text, dynamic: true };
    }
    this.#i++;
    return { text, dynamic };
  }

  /** `$NAME`, `${…}`, `$(…)`, `$((…))` or `` `…` ``: returned as written; nested text noted. */
  #dollar(): string {
    const c = this.src[this.#i];
    if (c === "`") return "`" + this.#substitution("`", "`") + "`";
    const next = this.src[this.#i + 1];
    if (next === "(") {
      this.#i++;
      return "$" + this.#substitution("(", ")");
    }
    if (next === "{") {
      const end = this.src.indexOf("}", this.#i);
      if (end < 0) {
        this.problems.push("unbalanced '${'");
        this.#i = this.src.length;
        return "$";
      }
      const out = this.src.slice(this.#i, end + 1);
      this.#i = end + 1;
      return out;
    }
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])?/.exec(
      this.src.slice(this.#i),
    ) as RegExpExecArray;
    this.#i += m[0].length;
    return m[0];
  }

  /** A bracketed substitution starting at the cursor; its inner text is analysed too. */
  #substitution(open: string, close: string): string {
    const start = this.#i;
    let depth = 0;
    let quote: string | undefined;
    for (; this.#i < this.src.length; this.#i++) {
      const c = this.src[this.#i];
      if (quote !== undefined) {
        if (c === quote) quote = undefined;
        else if (c === "\\" && quote === '"') this.#i++;
        continue;
      }
      if (c === "\\") {
        this.#i++;
        continue;
      }
      if ((c === "'" || c === '"') && open !== "`") {
        quote = c;
        continue;
      }
      if (open === "`" && this.#i > start && c === "`") {
        this.#i++;
        this.nested.push(this.src.slice(start + 1, this.#i - 1));
        return this.src.slice(start + 1, this.#i - 1);
      }
      if (c === open && open !== "`") depth++;
      else if (c === close && open !== "`" && --depth === 0) {
        this.#i++;
        const inner = this.src.slice(start + 1, this.#i - 1);
        this.nested.push(inner.replace(/^\(|\)$/g, ""));
        return this.src.slice(start, this.#i);
      }
    }
    this.problems.push(`unbalanced '${open}'`);
    return this.src.slice(start);
  }
}
