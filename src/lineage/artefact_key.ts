// Artefact keys (FORMATS.md §4 `artefact_path`): a repo-relative POSIX path, or a canonical URI
// in one of four schemes. Keys are identities, so a URI must already be in its one canonical
// spelling: a second spelling of the same artefact would split its history into two chains.
import { ArtefactKeyError } from "./errors.ts";

/** The closed set of artefact URI schemes. */
export const ARTEFACT_URI_SCHEMES: readonly string[] = ["pr", "pkg", "deploy", "doc"];

const MAX_URI_LENGTH = 2048;
const MAX_SEGMENT_LENGTH = 255;
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//;
const ANY_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const HOST_LABEL = "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?";
const HOST = new RegExp(`^${HOST_LABEL}(?:\\.${HOST_LABEL})*(?::[1-9][0-9]{0,4})?$`);
const TOKEN = /^[a-z0-9][a-z0-9._+-]*$/;
const SEGMENT = /^[A-Za-z0-9._~@+-]+$/;
const PR_NUMBER = /^[1-9][0-9]*$/;
const MIN_SEGMENTS: Readonly<Record<string, number>> = { pr: 3, pkg: 2, deploy: 1, doc: 1 };
// deno-lint-ignore no-control-regex -- control characters are what is being refused
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f\u2028\u2029]/;

function repoPathProblem(key: string): string | undefined {
  if (key === "") return "is empty";
  if (key.includes("\0")) return "contains a NUL byte";
  if (key.startsWith("/")) return "is absolute (starts with '/')";
  if (/^[A-Za-z]:[\\/]/.test(key)) return "is an absolute Windows path";
  // Backslashes are split too, so `a\..\b` cannot smuggle a traversal past a POSIX check.
  // (No ".." anywhere, no such segment: most keys are not split at all.)
  if (key.includes("..") && key.split(/[\\/]/).some((segment) => segment === "..")) {
    return "has a '..' segment";
  }
  return undefined;
}

function uriProblem(key: string): string | undefined {
  if (key.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  if (CONTROL_OR_SPACE.test(key)) return "contains whitespace or a control character";
  const any = ANY_SCHEME.exec(key);
  if (any === null) return "contains '://' but no valid scheme";
  const scheme = any[1].toLowerCase();
  if (!ARTEFACT_URI_SCHEMES.includes(scheme)) {
    return `has unknown scheme '${any[1]}' (known: ${ARTEFACT_URI_SCHEMES.join(", ")})`;
  }
  if (!SCHEME.test(key)) return `is not canonical: write the scheme as '${scheme}://'`;
  const rest = key.slice(any[0].length);
  if (rest.includes("://")) return "has a nested '://'";
  if (key.includes("%")) return "contains percent-encoding";
  if (key.includes("\\")) return "contains a backslash";
  const parts = rest.split("/");
  const authority = parts[0];
  const segments = parts.slice(1);
  if (authority === "") return "has no authority";
  if (authority !== authority.toLowerCase()) {
    return `is not canonical: write the authority as '${authority.toLowerCase()}'`;
  }
  const authorityRule = scheme === "pr" || scheme === "doc" ? HOST : TOKEN;
  if (!authorityRule.test(authority)) return `has an invalid authority '${authority}'`;
  if (segments.length > 0 && segments[segments.length - 1] === "") {
    return "is not canonical: remove the trailing '/'";
  }
  for (const segment of segments) {
    if (segment === "") return "has an empty path segment";
    if (segment === "." || segment === "..") return `has a '${segment}' segment`;
    if (segment.length > MAX_SEGMENT_LENGTH) return "has a path segment that is too long";
    if (!SEGMENT.test(segment)) return `has an invalid character in segment '${segment}'`;
  }
  const minimum = MIN_SEGMENTS[scheme];
  if (segments.length < minimum) {
    return `needs at least ${minimum} path segment(s) after the authority`;
  }
  if (scheme === "pr" && !PR_NUMBER.test(segments[segments.length - 1])) {
    return "must end in a decimal pull-request number";
  }
  return undefined;
}

/**
 * Why `key` is not a valid artefact key, or undefined when it is. A key containing `://` is a
 * URI and must be canonical in one of {@linkcode ARTEFACT_URI_SCHEMES}; anything else is a
 * repo-relative POSIX path (non-empty, no leading `/`, no `..` segment).
 */
export function artefactKeyProblem(key: string): string | undefined {
  return key.includes("://") ? uriProblem(key) : repoPathProblem(key);
}

/**
 * Returns `key` when it is a valid artefact key; throws {@linkcode ArtefactKeyError} otherwise.
 *
 * @example
 * ```ts
 * import { strictEqual, throws } from "node:assert/strict";
 *
 * strictEqual(checkArtefactKey("src/app.ts"), "src/app.ts");
 * strictEqual(checkArtefactKey("pr://github.com/acme/widget/12"), "pr://github.com/acme/widget/12");
 * throws(() => checkArtefactKey("../etc/passwd"), /has a '..' segment/);
 * ```
 */
export function checkArtefactKey(key: string, location?: string): string {
  const problem = artefactKeyProblem(key);
  if (problem !== undefined) {
    throw new ArtefactKeyError(`artefact key ${JSON.stringify(key)} ${problem}`, { location });
  }
  return key;
}
