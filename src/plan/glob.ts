// Glob patterns of owned files (`*`, `**`, `?`, `[…]`) compiled to anchored regular
// expressions, with their literal prefix.

import { BernsteinError } from "../errors/mod.ts";

/** A glob pattern that cannot be compiled (an unclosed `[`). */
export class GlobSyntaxError extends BernsteinError {
  constructor(message: string) {
    super("glob.invalid", message);
  }
}

const SPECIAL = /[.+^${}()|\\\/]/;

function segmentSource(segment: string, pattern: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (ch === "*") {
      while (segment[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (ch === "?") {
      out += "[^/]";
    } else if (ch === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close < 0) throw new GlobSyntaxError(`'${pattern}' has an unclosed '['`);
      let body = segment.slice(i + 1, close);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      // Inside a class only `\`, `]` and `^` are special to RegExp; `-` keeps its range meaning.
      body = body.replace(/[\\\]^]/g, (c) => "\\" + c);
      out += negate ? `[^/${body}]` : `[${body}]`;
      i = close;
    } else {
      out += SPECIAL.test(ch) ? "\\" + ch : ch;
    }
  }
  return out;
}

/**
 * Compiles a glob over `/`-separated relative paths into an anchored RegExp: `*` and `?` stay
 * inside one segment, `[abc]`/`[a-z]`/`[!x]` are classes, a whole `**` segment spans any
 * number of segments (zero or more in the middle, one or more at the end). `*` matches
 * dot-files too.
 *
 * @example
 * ```ts
 * compileGlob("src/**\/*_test.ts").test("src/a/b/x_test.ts"); // true
 * ```
 */
export function compileGlob(pattern: string): RegExp {
  const segments = pattern.split("/");
  let source = "";
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const last = i === segments.length - 1;
    if (seg === "**") {
      source += last ? "[^/]+(?:/[^/]+)*" : "(?:[^/]+/)*";
      continue;
    }
    source += segmentSource(seg, pattern) + (last ? "" : "/");
  }
  return new RegExp(`^${source}$`, "u");
}

/** The leading segments of a glob that contain no wildcard (`src/api` for `src/api/*.ts`). */
export function globLiteralPrefix(pattern: string): string {
  const segments = pattern.split("/");
  const literal: string[] = [];
  for (const seg of segments.slice(0, -1)) {
    if (/[*?[]/.test(seg)) break;
    literal.push(seg);
  }
  return literal.join("/");
}
