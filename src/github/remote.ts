/**
 * Which GitHub repository a project is: `owner/name` from a git remote URL (https, ssh or
 * scp-like), when the remote's host is the GitHub the API talks to (github.com for
 * api.github.com, the Enterprise host for `https://HOST/api/v3`). Pure.
 */

/** `owner/name` of a repository. */
export interface RepoRef {
  /** Owner (user or organisation). */
  owner: string;
  /** Repository name. */
  name: string;
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** Parses `owner/name`; undefined when it is not one. */
export function parseRepo(text: string): RepoRef | undefined {
  const [owner, name, ...rest] = text.split("/");
  if (rest.length > 0 || owner === undefined || name === undefined) return undefined;
  if (!OWNER.test(owner) || !NAME.test(name) || name === "." || name === "..") return undefined;
  return { owner, name };
}

/** The web host of the GitHub whose REST API is `apiUrl` (api.github.com → github.com). */
export function webHostOf(apiUrl: string): string | undefined {
  try {
    const u = new URL(apiUrl);
    return u.hostname === "api.github.com" ? "github.com" : u.hostname;
  } catch {
    return undefined;
  }
}

/**
 * The repository a remote URL points to on `host`, or undefined (another host, not a
 * repository path).
 *
 * @example
 * ```ts
 * repoFromRemote("git@github.com:acme/widget.git", "github.com"); // {owner: "acme", name: "widget"}
 * ```
 */
export function repoFromRemote(url: string, host: string): RepoRef | undefined {
  const trimmed = url.trim();
  let remoteHost: string;
  let path: string;
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(trimmed);
  if (scp !== null && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    [, remoteHost, path] = scp;
  } else {
    try {
      const u = new URL(trimmed);
      if (!["https:", "http:", "ssh:", "git:"].includes(u.protocol)) return undefined;
      remoteHost = u.hostname;
      path = u.pathname;
    } catch {
      return undefined;
    }
  }
  if (remoteHost.toLowerCase() !== host.toLowerCase()) return undefined;
  const clean = path.replace(/^\/+/, "").replace(/\/+$/, "").replace(/\.git$/, "");
  return parseRepo(clean);
}
