// The Linux sandbox as data: which paths an agent sees (and how), turned into a bubblewrap
// command line. Both steps are pure functions over facts the caller gathered (which system
// folders exist, which of them are symlinks, where the agent's tools live), so the plan is
// unit-tested on its output and the real bwrap tests check that the kernel enforces it.
import { isAbsolute, normalize, relative } from "node:path";

/** One mount of the sandbox's file system view, applied in order. */
export type MountOp =
  | { kind: "ro-bind"; src: string; dest: string }
  | { kind: "bind"; src: string; dest: string }
  | { kind: "tmpfs"; dest: string }
  | { kind: "mask-file"; dest: string }
  | { kind: "symlink"; target: string; dest: string }
  | { kind: "dev"; dest: string }
  | { kind: "proc"; dest: string };

/** A top-level system entry: a folder shown read-only, or a symlink recreated as is. */
export type SystemEntry =
  | { path: string; kind: "dir" }
  | { path: string; kind: "symlink"; target: string };

/** A path the sandbox does not show. */
export interface HiddenPath {
  /** Absolute path. */
  path: string;
  /** A folder (hidden by an empty tmpfs) or a file (hidden by `/dev/null`). */
  kind: "file" | "dir";
  /** Read-only paths inside it are dropped instead of shown through. */
  strict: boolean;
}

/** Where the egress proxy's socket appears inside the sandbox. */
export const SANDBOX_PROXY_SOCKET = "/run/bernstein/egress.sock";

/** Everything the plan is built from (absolute, symlink-free paths). */
export interface SandboxSpec {
  /** The agent's worktree: read-write, and its working directory. */
  worktree: string;
  /** The spawn's private HOME (TMPDIR and the CLI's config live under it): read-write. */
  home: string;
  /** The repository's git folder: read-only, so git reads work and nothing there changes. */
  gitDir: string;
  /** A cleaned copy of the git config shown at `<gitDir>/config` (no remotes, no commands). */
  gitConfigCopy?: string;
  /** System folders and links of this machine (`/usr`, `/bin -> usr/bin`, `/etc`, …). */
  system: readonly SystemEntry[];
  /** Secret system paths present here (`/etc/shadow`, `/etc/ssh`, …): hidden. */
  systemSecrets: readonly { path: string; kind: "file" | "dir" }[];
  /** More paths shown read-only: the agent CLI's install tree, Deno's cache, bernstein itself. */
  readOnly: readonly string[];
  /** More paths shown read-write (`sandbox.writable`: shared caches the operator chose). */
  writable?: readonly string[];
  /**
   * Paths not shown even inside a read-only path: the project root (the main checkout), its
   * `.sdd` (keys, tokens, audit, lineage, CAS, other worktrees), key files. A `strict` path also
   * wins over read-only paths inside it (they are dropped); a loose one (the project root) lets
   * a read-only path inside it show through, e.g. bernstein's own checkout.
   */
  hidden: readonly HiddenPath[];
  /** The egress proxy's unix socket on the host, bound at {@linkcode SANDBOX_PROXY_SOCKET}. */
  proxySocket?: string;
}

/** What the plan decided, besides the mounts (for the run record and messages). */
export interface LinuxPlan {
  /** Mounts in the order bwrap applies them. */
  mounts: MountOp[];
  /** Read-only or writable paths left out because they lie inside a strictly hidden path. */
  dropped: string[];
}

/** Whether `path` is `dir` or inside it (lexically; both absolute and normalised). */
export function isInsidePath(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").filter(Boolean).length;
}

/** Order of ops on the same path: show first, then hide, then the agent's own writable paths. */
function rank(op: MountOp): number {
  switch (op.kind) {
    case "ro-bind":
    case "symlink":
    case "dev":
    case "proc":
      return 0;
    case "tmpfs":
    case "mask-file":
      return 1;
    case "bind":
      return 2;
  }
}

function checkAbsolute(path: string, what: string): string {
  if (!isAbsolute(path)) throw new Error(`sandbox: ${what} '${path}' is not absolute`);
  return normalize(path);
}

/**
 * The mounts of an agent's sandbox. Nothing is visible unless named: the system folders
 * read-only, fresh `/dev`, `/proc`, `/tmp`, `/var/tmp` and `/run`, the read-only tools, the git
 * folder read-only, the worktree and private HOME read-write. Hidden paths get an empty tmpfs
 * (folders) or `/dev/null` (files) wherever something shown would contain them. Mounts run from
 * the shallowest path to the deepest, so a deeper mount always wins: a hidden `.sdd` inside a
 * shown project hides it, and the worktree inside that `.sdd` is shown again on top.
 *
 * @example
 * ```ts
 * const plan = linuxMountPlan({
 *   worktree: "/p/.sdd/worktrees/s1", home: "/p/.sdd/runtime/homes/s1", gitDir: "/p/.git",
 *   system: [{ path: "/usr", kind: "dir" }, { path: "/bin", kind: "symlink", target: "usr/bin" }],
 *   systemSecrets: [], readOnly: [], hidden: [{ path: "/p/.sdd", kind: "dir", strict: true }],
 * });
 * const argv = bwrapArgv(plan.mounts, { cwd: "/p/.sdd/worktrees/s1", command: ["claude"] });
 * ```
 */
export function linuxMountPlan(spec: SandboxSpec): LinuxPlan {
  const worktree = checkAbsolute(spec.worktree, "worktree");
  const home = checkAbsolute(spec.home, "home");
  const gitDir = checkAbsolute(spec.gitDir, "git folder");
  const hidden = spec.hidden.map((h) => ({ ...h, path: checkAbsolute(h.path, "hidden path") }));
  const ops: MountOp[] = [];
  const shown: string[] = [];
  for (const entry of spec.system) {
    const path = checkAbsolute(entry.path, "system path");
    if (entry.kind === "symlink") ops.push({ kind: "symlink", target: entry.target, dest: path });
    else {
      ops.push({ kind: "ro-bind", src: path, dest: path });
      shown.push(path);
    }
  }
  ops.push({ kind: "dev", dest: "/dev" }, { kind: "proc", dest: "/proc" });
  for (const scratch of ["/tmp", "/var/tmp", "/run", "/dev/shm"]) {
    ops.push({ kind: "tmpfs", dest: scratch });
  }
  for (const secret of spec.systemSecrets) {
    const path = checkAbsolute(secret.path, "system secret");
    ops.push(
      secret.kind === "dir" ? { kind: "tmpfs", dest: path } : { kind: "mask-file", dest: path },
    );
  }
  const dropped: string[] = [];
  const readOnly = [...new Set(spec.readOnly.map((p) => checkAbsolute(p, "read-only path")))]
    .sort();
  for (const path of readOnly) {
    // A tool folder inside a hidden path would show what must stay hidden: leave it out.
    if (hidden.some((h) => h.strict && isInsidePath(h.path, path))) {
      dropped.push(path);
      continue;
    }
    // Already shown by a system folder, unless a hidden path between them covers it.
    const covered = hidden.some((h) => isInsidePath(h.path, path));
    if (!covered && shown.some((s) => isInsidePath(s, path))) continue;
    ops.push({ kind: "ro-bind", src: path, dest: path });
    shown.push(path);
  }
  ops.push({ kind: "ro-bind", src: gitDir, dest: gitDir });
  shown.push(gitDir);
  if (spec.gitConfigCopy !== undefined) {
    ops.push({
      kind: "ro-bind",
      src: checkAbsolute(spec.gitConfigCopy, "git config copy"),
      dest: `${gitDir}/config`,
    });
  }
  for (const raw of spec.writable ?? []) {
    const path = checkAbsolute(raw, "writable path");
    if (hidden.some((h) => h.strict && isInsidePath(h.path, path))) {
      dropped.push(path);
      continue;
    }
    ops.push({ kind: "bind", src: path, dest: path });
    shown.push(path);
  }
  for (const h of hidden) {
    // Only where something shown contains it: elsewhere it does not exist in the sandbox.
    if (!shown.some((s) => isInsidePath(s, h.path))) continue;
    ops.push(
      h.kind === "dir" ? { kind: "tmpfs", dest: h.path } : { kind: "mask-file", dest: h.path },
    );
  }
  ops.push({ kind: "bind", src: home, dest: home }, {
    kind: "bind",
    src: worktree,
    dest: worktree,
  });
  if (spec.proxySocket !== undefined) {
    ops.push({
      kind: "bind",
      src: checkAbsolute(spec.proxySocket, "proxy socket"),
      dest: SANDBOX_PROXY_SOCKET,
    });
  }
  const indexed = ops.map((op, i) => ({ op, i }));
  indexed.sort((a, b) =>
    depth(a.op.dest) - depth(b.op.dest) || rank(a.op) - rank(b.op) || a.i - b.i
  );
  return { mounts: indexed.map((x) => x.op), dropped };
}

/** Options of {@linkcode bwrapArgv}. */
export interface BwrapOptions {
  /** Working directory inside the sandbox. */
  cwd: string;
  /** The command to run inside. */
  command: readonly string[];
  /** The bwrap executable (default `bwrap`). */
  bwrap?: string;
}

function mountArgs(op: MountOp): string[] {
  switch (op.kind) {
    case "ro-bind":
      return ["--ro-bind", op.src, op.dest];
    case "bind":
      return ["--bind", op.src, op.dest];
    case "tmpfs":
      return ["--tmpfs", op.dest];
    case "mask-file":
      return ["--ro-bind", "/dev/null", op.dest];
    case "symlink":
      return ["--symlink", op.target, op.dest];
    case "dev":
      return ["--dev", op.dest];
    case "proc":
      return ["--proc", op.dest];
  }
}

/**
 * The bwrap command line: every namespace unshared (network included: only loopback exists
 * inside, the proxy socket is the way out), all capabilities dropped (root in the sandbox
 * cannot remount what hides the keys), killed with its parent, then the mounts and the command.
 * No new session: the orchestrator's group kill must reach the agent's processes. The command
 * runs as pid 1 of the namespace (`--as-pid-1`; it is bernstein's sandbox init, which passes
 * SIGTERM on): without it bwrap puts an init of its own there, and the outer bwrap exits as
 * soon as that init reports the exit status, before reaping it, so every sandboxed process
 * left a `[bwrap] <defunct>` for the host's pid 1 to reap (a container's may never do so).
 * The price: a process orphaned inside the sandbox is not reaped until the sandbox ends (Deno
 * waits only for the children it started); its zombie goes with the namespace.
 */
export function bwrapArgv(mounts: readonly MountOp[], options: BwrapOptions): string[] {
  if (options.command.length === 0) throw new Error("sandbox: empty command");
  return [
    options.bwrap ?? "bwrap",
    "--unshare-all",
    "--as-pid-1",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--hostname",
    "bernstein-sandbox",
    ...mounts.flatMap(mountArgs),
    "--chdir",
    options.cwd,
    "--",
    ...options.command,
  ];
}
