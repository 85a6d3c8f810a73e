// The macOS sandbox as data: a `sandbox-exec` profile (SBPL) generated from the same facts as
// the Linux plan. macOS has no mount namespaces, so the profile states the view as rules: reads
// of the system and the agent's tools, reads and writes of the worktree and the private HOME,
// read-only git metadata, nothing of the project's `.sdd`, the operator's HOME or key files, and
// network only to the egress proxy on loopback. In SBPL the last matching rule wins, so the
// profile goes from broad to narrow: allow reads, deny what is hidden, allow the agent's own
// writable folders again. It cannot run here (Linux CI); tests check the profile text.
import { isAbsolute } from "node:path";

/** What the profile is built from (absolute, symlink-free paths: `/private/tmp`, not `/tmp`). */
export interface MacProfileSpec {
  /** The agent's worktree (read-write). */
  worktree: string;
  /** The spawn's private HOME (read-write). */
  home: string;
  /** The repository's git folder (read-only). */
  gitDir: string;
  /** System paths readable (default {@linkcode MAC_SYSTEM_READ}). */
  systemRead?: readonly string[];
  /** More read-only paths: the agent CLI's install tree, Deno's cache, bernstein itself. */
  readOnly: readonly string[];
  /** Paths never readable: the project's `.sdd`, the operator's HOME, key files. */
  hidden: readonly string[];
  /** More read-write paths (`sandbox.writable`). */
  writable?: readonly string[];
  /** Loopback TCP ports the agent may connect to (the egress proxy, the task server). */
  loopbackPorts: readonly number[];
}

/** System paths a CLI needs to start on macOS (frameworks, dyld cache, certificates, tools). */
export const MAC_SYSTEM_READ: readonly string[] = [
  "/System",
  "/Library",
  "/usr",
  "/bin",
  "/sbin",
  "/opt/homebrew",
  "/private/etc",
  "/private/var/db/timezone",
  "/dev",
];

/** An SBPL string literal. */
export function sbplString(text: string): string {
  if (/[\0\n\r]/.test(text)) {
    throw new Error(`sandbox: path ${JSON.stringify(text)} cannot be quoted`);
  }
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

function subpaths(paths: readonly string[]): string {
  return paths.map((p) => {
    if (!isAbsolute(p)) throw new Error(`sandbox: '${p}' is not absolute`);
    return `(subpath ${sbplString(p)})`;
  }).join(" ");
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`sandbox: ${port} is not a TCP port`);
  }
  return port;
}

/**
 * The `sandbox-exec -p` profile of one agent.
 *
 * @example
 * ```ts ignore
 * const profile = macSandboxProfile({
 *   worktree: "/Users/me/p/.sdd/worktrees/s1", home: "/Users/me/p/.sdd/runtime/homes/s1",
 *   gitDir: "/Users/me/p/.git", readOnly: [], hidden: ["/Users/me/p/.sdd", "/Users/me"],
 *   loopbackPorts: [49152, 8080],
 * });
 * // sandbox-exec -p "$profile" claude -p …
 * ```
 */
export function macSandboxProfile(spec: MacProfileSpec): string {
  const read = [...(spec.systemRead ?? MAC_SYSTEM_READ), ...spec.readOnly, spec.gitDir];
  const own = [spec.worktree, spec.home, ...(spec.writable ?? [])];
  const lines = [
    "(version 1)",
    "(deny default)",
    ";; processes: the agent and its children, inside this sandbox only",
    "(allow process-exec process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm)",
    ";; reads: the system, the agent's tools, the git metadata (read-only)",
    "(allow file-read-metadata)",
    `(allow file-read* ${subpaths(read)})`,
    `(allow file-read* file-write* (literal "/dev/null") (literal "/dev/tty") (literal "/dev/zero"))`,
    ";; hidden: the project's state, the operator's HOME, key files (after the reads: wins)",
  ];
  if (spec.hidden.length > 0) lines.push(`(deny file-read* file-write* ${subpaths(spec.hidden)})`);
  lines.push(
    ";; the agent's own folders: read-write (last: wins over the hidden .sdd around them)",
    `(allow file-read* file-write* ${subpaths(own)})`,
    ";; network: loopback to the egress proxy and the task server only",
    "(deny network*)",
  );
  for (const port of [...new Set(spec.loopbackPorts.map(checkPort))].sort((a, b) => a - b)) {
    lines.push(`(allow network-outbound (remote tcp ${sbplString(`localhost:${port}`)}))`);
  }
  return lines.join("\n") + "\n";
}

/** The `sandbox-exec` command line for a profile and a command. */
export function sandboxExecArgv(profile: string, command: readonly string[]): string[] {
  if (command.length === 0) throw new Error("sandbox: empty command");
  return ["/usr/bin/sandbox-exec", "-p", profile, ...command];
}
