// `isolation: auto | sandbox | none`: what the operator asked for, what this machine can do,
// and the decision between the two (a pure function), plus the probe that finds out whether
// the sandbox works here (it runs the real thing once: bwrap on Linux, sandbox-exec on macOS).
import { BernsteinError } from "../errors/mod.ts";
import { runProcess } from "../io/mod.ts";

/** The configured isolation. */
export const ISOLATION_MODES = ["auto", "sandbox", "none"] as const;

/** One of {@linkcode ISOLATION_MODES}. */
export type IsolationMode = typeof ISOLATION_MODES[number];

/** How an agent actually ran. */
export type AgentIsolation = "sandbox" | "none";

/** The sandbox tool of a platform. */
export type SandboxBackend = "bwrap" | "sandbox-exec";

/** Whether the sandbox works on this machine. */
export type SandboxProbe =
  | { available: true; backend: SandboxBackend; executable: string; version: string | null }
  | { available: false; backend: SandboxBackend | null; reason: string };

/** The isolation in force for a run. */
export interface IsolationDecision {
  /** What was asked for. */
  requested: IsolationMode;
  /** What agents get. */
  isolation: AgentIsolation;
  /** The tool, when sandboxed. */
  backend: SandboxBackend | null;
  /** The sandbox executable, when sandboxed. */
  executable: string | null;
  /** Why the sandbox is not used (auto without it, or none). */
  reason: string | null;
}

/** What an agent can reach without the sandbox: the loud warning's text. */
export const UNSANDBOXED_REACH =
  "agents run as your user with no sandbox: they can read and write every file you can " +
  "(the project's .sdd with its keys, audit and lineage logs, other agents' worktrees, your " +
  "HOME, the audit key), run any program and connect anywhere; only the merge-time gates " +
  "(symlinks, .git, .gitmodules, git hooks/config, secrets) still stand between them and your branch";

/**
 * Decides the isolation of a run. `sandbox` refuses to run without a working sandbox; `auto`
 * falls back to none with a warning naming what agents can then reach; `none` is what it says.
 *
 * @example
 * ```ts ignore
 * const decision = decideIsolation("auto", await probeSandbox());
 * if (decision.reason) warn(decision.reason);
 * ```
 */
export function decideIsolation(requested: IsolationMode, probe: SandboxProbe): IsolationDecision {
  if (requested === "none") {
    return {
      requested,
      isolation: "none",
      backend: null,
      executable: null,
      reason: `isolation: none — ${UNSANDBOXED_REACH}`,
    };
  }
  if (probe.available) {
    return {
      requested,
      isolation: "sandbox",
      backend: probe.backend,
      executable: probe.executable,
      reason: null,
    };
  }
  if (requested === "sandbox") {
    throw new BernsteinError(
      "sandbox.unavailable",
      `isolation: sandbox, but the sandbox does not work here: ${probe.reason}`,
      {
        location: "isolation",
        hint: probe.backend === "bwrap"
          ? "install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or set isolation: auto"
          : "run on Linux with bubblewrap or macOS with sandbox-exec, or set isolation: auto",
      },
    );
  }
  return {
    requested,
    isolation: "none",
    backend: probe.backend,
    executable: null,
    reason: `isolation: auto found no sandbox (${probe.reason}) — ${UNSANDBOXED_REACH}`,
  };
}

/** Runs a command for the probe; injected so tests can fake a machine without bwrap. */
export type ProbeRunner = (
  argv: readonly string[],
) => Promise<{ code: number; stdout: string; stderr: string }>;

const systemRunner: ProbeRunner = async (argv) => {
  const r = await runProcess(argv, { env: { PATH: "/usr/bin:/bin" }, timeoutMs: 15_000 });
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: r.code, stdout: decode(r.stdout), stderr: decode(r.stderr) };
};

/** Options of {@linkcode probeSandbox}. */
export interface ProbeSandboxOptions {
  /** Operating system (default `Deno.build.os`). */
  os?: string;
  /** Executable of bwrap (default: found on `/usr/bin`, `/bin`, `/usr/local/bin`). */
  bwrap?: string;
  /** Runs the probe commands. */
  run?: ProbeRunner;
}

async function findExecutable(name: string, dirs: readonly string[]): Promise<string | undefined> {
  for (const dir of dirs) {
    try {
      const info = await Deno.stat(`${dir}/${name}`);
      if (info.isFile) return `${dir}/${name}`;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * Finds out whether the sandbox works: on Linux it starts bwrap with every namespace unshared
 * and all capabilities dropped (as agents get it) and runs `true`; on macOS it runs `true`
 * under a minimal `sandbox-exec` profile. Anything else reports why not.
 */
export async function probeSandbox(options: ProbeSandboxOptions = {}): Promise<SandboxProbe> {
  const os = options.os ?? Deno.build.os;
  const run = options.run ?? systemRunner;
  if (os === "linux") {
    const bwrap = options.bwrap ??
      await findExecutable("bwrap", ["/usr/bin", "/bin", "/usr/local/bin"]);
    if (bwrap === undefined) {
      return { available: false, backend: "bwrap", reason: "bwrap (bubblewrap) is not installed" };
    }
    try {
      const version = await run([bwrap, "--version"]);
      const test = await run([
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--",
        "/bin/sh",
        "-c",
        "true",
      ]);
      if (test.code !== 0) {
        const why = test.stderr.trim().split("\n").at(-1) || `exit ${test.code}`;
        return { available: false, backend: "bwrap", reason: `${bwrap} cannot start: ${why}` };
      }
      const v = /(\d+\.\d+(?:\.\d+)?)/.exec(version.stdout)?.[1] ?? null;
      return { available: true, backend: "bwrap", executable: bwrap, version: v };
    } catch (error) {
      return {
        available: false,
        backend: "bwrap",
        reason: `${bwrap} cannot start: ${(error as Error).message}`,
      };
    }
  }
  if (os === "darwin") {
    const exe = "/usr/bin/sandbox-exec";
    try {
      const test = await run([exe, "-p", "(version 1)(allow default)", "/usr/bin/true"]);
      if (test.code !== 0) {
        return {
          available: false,
          backend: "sandbox-exec",
          reason: `sandbox-exec failed: ${test.stderr.trim() || `exit ${test.code}`}`,
        };
      }
      return { available: true, backend: "sandbox-exec", executable: exe, version: null };
    } catch (error) {
      return {
        available: false,
        backend: "sandbox-exec",
        reason: `sandbox-exec cannot start: ${(error as Error).message}`,
      };
    }
  }
  return { available: false, backend: null, reason: `no sandbox for ${os}` };
}
