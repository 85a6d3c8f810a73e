// The sandboxed spawn path: takes the command line an adapter built (the same one the direct
// path runs, attachments and all) and wraps it, for one agent session, in bubblewrap (Linux)
// or sandbox-exec (macOS), with that session's egress listener and allowlist. The result is a
// plain argv + env the process layer starts like any other; `SandboxRecord` says what the
// agent could reach, for the run record and the `agent.spawned` audit event.
import { join } from "node:path";
import {
  type EgressChannel,
  type EgressProxy,
  type EgressTarget,
  isLoopbackHost,
} from "./egress_proxy.ts";
import type { IsolationDecision } from "./isolation.ts";
import { executableClosure, systemEntries, systemSecrets } from "./closure.ts";
import { bwrapArgv, linuxMountPlan, SANDBOX_PROXY_SOCKET } from "./linux.ts";
import { macSandboxProfile, sandboxExecArgv } from "./macos.ts";
import { sandboxInitArgv } from "./net_init.ts";

/** The command line to wrap (what an adapter built). */
export interface WrappableCommand {
  /** Executable and arguments. */
  argv: readonly string[];
  /** The agent's complete environment. */
  env: Readonly<Record<string, string>>;
  /** Working directory (the worktree). */
  cwd: string;
}

/** Run-wide facts of the sandbox (the same for every agent of a run). */
export interface SandboxRunContext {
  /** The decision (must be `sandbox`). */
  decision: IsolationDecision;
  /** The egress proxy of the run. */
  proxy: EgressProxy;
  /** A private folder of the run (mode 0700, invisible to agents) for per-session files. */
  privateDir: string;
  /** How to run bernstein itself (the init runs as `<self> __sandbox-init …`). */
  self: { argv: readonly string[]; env: Readonly<Record<string, string>> };
  /** Folders bernstein itself needs read-only (its checkout and Deno's cache, or its binary). */
  selfReadOnly: readonly string[];
  /** The project root: not shown (only the worktree and the git folder are). */
  projectRoot: string;
  /** The project's `.sdd`: never shown. */
  sdd: string;
  /** The repository's git folder (shown read-only). */
  gitDir: string;
  /** Files never shown (the audit key, the operator token). */
  secretFiles: readonly string[];
  /** The folder of every agent's worktree, when outside `.sdd`: never shown (each its own is). */
  otherWorktrees?: string;
  /** The operator's HOME (never shown whole). */
  operatorHome?: string;
  /** `sandbox.read_only` from the configuration. */
  extraReadOnly: readonly string[];
  /** `sandbox.writable` from the configuration. */
  extraWritable?: readonly string[];
  /** Writes the cleaned git config for a session; returns its path. */
  gitConfigCopy?: (session: string) => Promise<string | undefined>;
}

/** What one agent's sandbox allowed: recorded in the run and the audit chain. */
export interface SandboxRecord {
  /** Always `sandbox` here (the direct path records `none`). */
  isolation: "sandbox";
  /** `bwrap` or `sandbox-exec`. */
  backend: string;
  /** Where it may connect (`host:port`), through the egress proxy. */
  egress: string[];
  /** Folders it could read besides the system, its worktree and HOME. */
  read_only: string[];
  /** Folders it could write. */
  writable: string[];
}

/** A wrapped command ready to start, and the session's network channel to close after it. */
export interface SandboxedCommand {
  /** Argv (bwrap/sandbox-exec first). */
  argv: string[];
  /** Environment (proxy variables pointed at the sandbox's proxy port). */
  env: Record<string, string>;
  /** Working directory. */
  cwd: string;
  /** The record. */
  record: SandboxRecord;
  /** The session's egress listener. */
  channel: EgressChannel;
  /**
   * The first process is a supervisor that reaps the sandbox (bwrap): stop the rest of its
   * process group first (`ProcessOptions.leaderLast`), or its child becomes a zombie.
   */
  leaderLast: boolean;
  /**
   * How the first process gets its own process group (`ProcessOptions.group`): `"setsid"` when
   * it is a program known to be there (the bwrap the isolation probe ran), so the start does not
   * fork the whole orchestrator (Deno's detached spawn: ~10 ms of blocked event loop and the
   * copy-on-write faults after it, per agent).
   */
  group: "detach" | "setsid";
}

/** The proxy port inside a Linux sandbox (the namespace is empty: any port is free). */
export const SANDBOX_PROXY_PORT = 3128;

const PROXY_NAMES = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"];

/** The operator's proxy given to the agent (`HTTPS_PROXY`, else `HTTP_PROXY`, else `ALL_PROXY`). */
export function upstreamProxy(
  env: Readonly<Record<string, string>>,
): { host: string; port: number } | undefined {
  for (const name of PROXY_NAMES) {
    const value = env[name] ?? env[name.toLowerCase()];
    if (value === undefined || value === "") continue;
    try {
      const url = new URL(value);
      if (url.protocol !== "http:") continue;
      return {
        host: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port !== "" ? Number(url.port) : 80,
      };
    } catch {
      continue;
    }
  }
  return undefined;
}

/** The environment with every proxy variable pointed at `proxyUrl`, loopback exempted. */
export function proxiedEnv(
  env: Readonly<Record<string, string>>,
  proxyUrl: string,
): Record<string, string> {
  const out: Record<string, string> = { ...env };
  for (const name of PROXY_NAMES) {
    out[name] = proxyUrl;
    out[name.toLowerCase()] = proxyUrl;
  }
  out.NO_PROXY = "127.0.0.1,localhost,::1";
  out.no_proxy = out.NO_PROXY;
  return out;
}

function shown(t: EgressTarget): string {
  return `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
}

/**
 * Wraps one agent's command in the platform's sandbox: opens its egress listener, gathers
 * what it must see read-only, and builds the bwrap (or sandbox-exec) command line around
 * `bernstein __sandbox-init … -- <the agent's argv>`.
 */
export async function sandboxCommand(
  command: WrappableCommand,
  spawn: { session: string; worktree: string; home: string; allow: readonly EgressTarget[] },
  ctx: SandboxRunContext,
): Promise<SandboxedCommand> {
  const backend = ctx.decision.backend;
  if (ctx.decision.isolation !== "sandbox" || backend === null) {
    throw new Error("internal: sandboxCommand without a sandbox decision");
  }
  const path = command.env.PATH ?? "/usr/bin:/bin";
  const readOnly = new Set<string>([...ctx.selfReadOnly, ...ctx.extraReadOnly]);
  for (const dir of await executableClosure(command.argv[0], { path, home: ctx.operatorHome })) {
    readOnly.add(dir);
  }
  const upstream = upstreamProxy(command.env);
  const channel = await ctx.proxy.open({
    session: spawn.session,
    allow: spawn.allow,
    ...(upstream !== undefined ? { upstream } : {}),
    transport: backend === "bwrap" ? "unix" : "tcp",
  });
  try {
    const hiddenFiles = ctx.secretFiles.map((path) => ({ path, kind: "file" as const }));
    const record: SandboxRecord = {
      isolation: "sandbox",
      backend,
      egress: spawn.allow.map(shown),
      read_only: [...readOnly].sort(),
      writable: [spawn.worktree, spawn.home, ...(ctx.extraWritable ?? [])],
    };
    if (backend === "bwrap") {
      const loopback = spawn.allow.filter((t) => isLoopbackHost(t.host));
      const init = sandboxInitArgv({
        socket: SANDBOX_PROXY_SOCKET,
        forwards: loopback.map((t) => ({ host: t.host, port: t.port })),
        proxyPort: SANDBOX_PROXY_PORT,
        command: [...command.argv],
      });
      const plan = linuxMountPlan({
        worktree: spawn.worktree,
        home: spawn.home,
        gitDir: ctx.gitDir,
        gitConfigCopy: await ctx.gitConfigCopy?.(spawn.session),
        system: await systemEntries(),
        systemSecrets: await systemSecrets(),
        readOnly: [...readOnly],
        writable: ctx.extraWritable ?? [],
        hidden: [
          { path: ctx.projectRoot, kind: "dir", strict: false },
          { path: ctx.sdd, kind: "dir", strict: true },
          ...(ctx.otherWorktrees !== undefined
            ? [{ path: ctx.otherWorktrees, kind: "dir" as const, strict: false }]
            : []),
          ...hiddenFiles.map((h) => ({ ...h, strict: true })),
        ],
        proxySocket: channel.socketPath,
      });
      return {
        argv: bwrapArgv(plan.mounts, {
          cwd: command.cwd,
          command: [...ctx.self.argv, ...init],
          bwrap: ctx.decision.executable ?? "bwrap",
        }),
        env: {
          ...proxiedEnv(command.env, `http://127.0.0.1:${SANDBOX_PROXY_PORT}`),
          ...ctx.self.env,
        },
        cwd: command.cwd,
        record: {
          ...record,
          read_only: [...readOnly].filter((p) => !plan.dropped.includes(p)).sort(),
          writable: record.writable.filter((p) => !plan.dropped.includes(p)),
        },
        channel,
        leaderLast: true,
        // The decision's bwrap is the executable the isolation probe ran (an absolute path).
        group: ctx.decision.executable !== null ? "setsid" : "detach",
      };
    }
    const port = channel.port as number;
    const profile = macSandboxProfile({
      worktree: spawn.worktree,
      home: spawn.home,
      gitDir: ctx.gitDir,
      readOnly: [...readOnly],
      hidden: [
        ctx.sdd,
        ...(ctx.otherWorktrees !== undefined ? [ctx.otherWorktrees] : []),
        ...ctx.secretFiles,
        ...(ctx.operatorHome ? [ctx.operatorHome] : []),
      ],
      writable: ctx.extraWritable ?? [],
      // No network namespace on macOS: the loopback targets are reached directly too.
      loopbackPorts: [
        port,
        ...spawn.allow.filter((t) => isLoopbackHost(t.host)).map((t) => t.port),
      ],
    });
    return {
      argv: sandboxExecArgv(profile, command.argv),
      env: proxiedEnv(command.env, `http://127.0.0.1:${port}`),
      cwd: command.cwd,
      record,
      channel,
      // sandbox-exec applies the profile and execs the command: no supervisor in between.
      leaderLast: false,
      group: "detach",
    };
  } catch (error) {
    await channel.close();
    throw error;
  }
}

/** Path of a session's cleaned git config inside the private folder. */
export function gitConfigCopyPath(privateDir: string, session: string): string {
  return join(privateDir, `${session}.gitconfig`);
}
