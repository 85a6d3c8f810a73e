// Reading shell text the way the policy needs it: not to run it, but to find what a command
// line deletes, writes and reads, and to say plainly when it cannot tell. The tokenizer knows
// quotes, escapes, `$(…)`, backticks, process substitution, comments, redirections, here
// documents and the control operators; `sh -c TEXT` is followed into TEXT. Anything it
// cannot follow (unbalanced quotes, control characters, eval, a computed command name, text
// piped into a shell) is reported as a problem, which the safety tier turns into the
// `unverifiable_shell_text` guard.
import { type ShellWord, type Token, Tokenizer } from "./_shell_tokens.ts";

export type { ShellWord } from "./_shell_tokens.ts";

/** Longest shell text analysed; longer text is unverifiable. */
export const MAX_SHELL_TEXT = 64 * 1024;

/** What a command line does, as far as the text says. */
export interface ShellFacts {
  /** Why the text cannot be followed (empty when it can). */
  problems: string[];
  /** Targets of recursive deletes (`rm -r`, `find … -delete`). */
  recursiveDeletes: ShellWord[];
  /** Paths written, created, moved or removed (redirections, tee, cp/mv dest, touch, rm…). */
  writes: ShellWord[];
  /** Paths read by commands that read files (cat, head, grep, cp sources, …). */
  reads: ShellWord[];
  /** Every literal word of every command (to look for secrets and key paths). */
  words: ShellWord[];
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "busybox"]);
const WRAPPERS = new Set([
  "sudo",
  "env",
  "nohup",
  "time",
  "command",
  "exec",
  "nice",
  "doas",
  "timeout",
  "xargs",
]);
const READERS = new Set([
  "cat",
  "tac",
  "head",
  "tail",
  "less",
  "more",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "sed",
  "awk",
  "cut",
  "sort",
  "uniq",
  "wc",
  "diff",
  "cmp",
  "base64",
  "xxd",
  "od",
  "hexdump",
  "strings",
  "tar",
  "zip",
  "gzip",
  "scp",
  "rsync",
  "ls",
  "find",
  "stat",
  "file",
  "jq",
  "openssl",
  "sha256sum",
  "md5sum",
  "source",
  ".",
]);

interface Command {
  words: ShellWord[];
  redirects: { op: string; target: ShellWord | undefined }[];
  /** Position in its pipeline (0 = first). */
  pipeIndex: number;
}

function splitCommands(tokens: Token[]): Command[] {
  const out: Command[] = [];
  let current: Command = { words: [], redirects: [], pipeIndex: 0 };
  let pipeIndex = 0;
  const flush = () => {
    if (current.words.length > 0 || current.redirects.length > 0) out.push(current);
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === "op") {
      flush();
      pipeIndex = t.op === "|" ? pipeIndex + 1 : 0;
      current = { words: [], redirects: [], pipeIndex };
    } else if (t.kind === "redirect") {
      const next = tokens[i + 1];
      const target = next?.kind === "word" ? next.word : undefined;
      if (target !== undefined) i++;
      current.redirects.push({ op: t.op, target });
    } else current.words.push(t.word);
  }
  flush();
  return out;
}

/**
 * The command name and its arguments after env assignments and wrappers (sudo, env, …).
 * Under xargs the real arguments come from input, so a placeholder computed word is added.
 */
function unwrap(words: ShellWord[]): { name: ShellWord | undefined; args: ShellWord[] } {
  let i = 0;
  let xargs = false;
  for (;;) {
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i].text)) i++;
    const w = words[i];
    if (w === undefined || !WRAPPERS.has(w.text)) break;
    xargs ||= w.text === "xargs";
    i++;
    // Options of the wrapper (`sudo -u x`, `nice -n 5`, `env -i`) are skipped loosely.
    while (i < words.length && words[i].text.startsWith("-")) i++;
    if (w.text === "timeout" && i < words.length) i++;
  }
  const args = words.slice(i + 1);
  if (xargs) args.push({ text: "(arguments from input)", dynamic: true });
  return { name: words[i], args };
}

const operands = (args: ShellWord[]) => {
  const out: ShellWord[] = [];
  let options = true;
  for (const a of args) {
    if (options && a.text === "--") options = false;
    else if (options && a.text.startsWith("-") && a.text !== "-") continue;
    else out.push(a);
  }
  return out;
};

function isRecursiveRm(args: ShellWord[]): boolean {
  return args.some((a) =>
    a.text === "--recursive" || /^-[A-Za-z]*[rR]/.test(a.text) && !a.text.startsWith("--")
  );
}

function commandFacts(cmd: Command, facts: ShellFacts, depth: number): void {
  for (const r of cmd.redirects) {
    if (r.target === undefined) {
      facts.problems.push(`redirection '${r.op}' without a target`);
    } else if (r.op.startsWith(">") || r.op === "<>" || r.op === ">|") {
      if (!/^&?\d*-?$/.test(r.target.text) || r.op !== ">&") facts.writes.push(r.target);
    } else if (r.op === "<" && r.target.text !== "(here document)") facts.reads.push(r.target);
  }
  const { name, args } = unwrap(cmd.words);
  if (name === undefined) return;
  facts.words.push(...cmd.words);
  if (name.dynamic) {
    facts.problems.push(`the command name '${name.text}' is computed at run time`);
    return;
  }
  const base = name.text.slice(name.text.lastIndexOf("/") + 1);
  if (base === "eval") facts.problems.push("eval runs text the engine cannot see");
  if (SHELLS.has(base)) shellFacts(base, args, cmd, facts, depth);
  const ops = operands(args);
  switch (base) {
    case "rm":
    case "unlink":
      if (base === "rm" && isRecursiveRm(args)) facts.recursiveDeletes.push(...ops);
      facts.writes.push(...ops);
      break;
    case "find":
      if (
        args.some((a) => a.text === "-delete") || args.some((a) => a.text === "-exec") &&
          args.some((a) => a.text === "rm")
      ) {
        const firstOption = args.findIndex((a) => a.text.startsWith("-"));
        const roots = firstOption < 0 ? args : args.slice(0, firstOption);
        facts.recursiveDeletes.push(
          ...(roots.length > 0 ? roots : [{ text: ".", dynamic: false }]),
        );
      }
      break;
    case "tee":
    case "touch":
    case "mkdir":
    case "truncate":
    case "shred":
      facts.writes.push(...ops);
      break;
    case "cp":
    case "mv":
    case "install":
    case "ln":
      if (ops.length > 0) facts.writes.push(ops[ops.length - 1]);
      if (base === "mv") facts.writes.push(...ops.slice(0, -1));
      if (base === "cp") facts.reads.push(...ops.slice(0, -1));
      break;
    case "chmod":
    case "chown":
    case "chgrp":
      facts.writes.push(...ops.slice(1));
      break;
    case "sed":
      if (args.some((a) => /^-[A-Za-z]*i/.test(a.text) || a.text.startsWith("--in-place"))) {
        facts.writes.push(...ops.slice(1));
      }
      break;
    case "dd":
      for (const a of args) {
        if (a.text.startsWith("of=")) facts.writes.push({ ...a, text: a.text.slice(3) });
        if (a.text.startsWith("if=")) facts.reads.push({ ...a, text: a.text.slice(3) });
      }
      break;
  }
  if (READERS.has(base)) facts.reads.push(...ops);
}

function shellFacts(
  base: string,
  args: ShellWord[],
  cmd: Command,
  facts: ShellFacts,
  depth: number,
): void {
  const c = args.findIndex((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a.text));
  if (c >= 0) {
    const text = args[c + 1];
    if (text === undefined) facts.problems.push(`${base} -c without text`);
    else if (text.dynamic) facts.problems.push(`${base} -c runs computed text`);
    else merge(facts, analyse(text.text, depth + 1));
    return;
  }
  const script = operands(args)[0];
  if (script === undefined || script.text === "-") {
    facts.problems.push(
      cmd.pipeIndex > 0 ? `text piped into ${base}` : `${base} reads commands from its input`,
    );
  }
}

function merge(into: ShellFacts, from: ShellFacts): void {
  into.problems.push(...from.problems);
  into.recursiveDeletes.push(...from.recursiveDeletes);
  into.writes.push(...from.writes);
  into.reads.push(...from.reads);
  into.words.push(...from.words);
}

function analyse(text: string, depth: number): ShellFacts {
  const facts: ShellFacts = {
    problems: [],
    recursiveDeletes: [],
    writes: [],
    reads: [],
    words: [],
  };
  if (depth > 4) {
    facts.problems.push("shell text nested more than 4 levels deep");
    return facts;
  }
  if (text.length > MAX_SHELL_TEXT) {
    facts.problems.push(`shell text longer than ${MAX_SHELL_TEXT} characters`);
    return facts;
  }
  // deno-lint-ignore no-control-regex
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.exec(text);
  if (control !== null) {
    facts.problems.push(
      `control character U+${control[0].charCodeAt(0).toString(16).padStart(4, "0")} in shell text`,
    );
    return facts;
  }
  const tokenizer = new Tokenizer(text);
  tokenizer.run();
  facts.problems.push(...tokenizer.problems);
  for (const cmd of splitCommands(tokenizer.tokens)) commandFacts(cmd, facts, depth);
  for (const inner of tokenizer.nested) merge(facts, analyse(inner, depth + 1));
  return facts;
}

/**
 * What a shell command line deletes, writes and reads, and what in it cannot be followed.
 *
 * @example
 * ```ts
 * const facts = analyseShell("cd /tmp && rm -rf build 'a b' > log.txt");
 * facts.recursiveDeletes.map((w) => w.text); // ["build", "a b"]
 * facts.writes.map((w) => w.text); // ["log.txt", "build", "a b"]
 * analyseShell("echo 'unclosed").problems; // ["unbalanced single quote at 5"]
 * ```
 */
export function analyseShell(text: string): ShellFacts {
  return analyse(text, 0);
}
