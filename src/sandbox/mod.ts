/**
 * The sandboxed spawn path: an agent sees its worktree and private HOME read-write, the system
 * and its own tools read-only, the git metadata read-only, and nothing of the project's `.sdd`
 * (keys, tokens, audit, lineage, CAS), the operator's HOME or other worktrees; its network is
 * an egress proxy with a per-agent allowlist. Linux uses bubblewrap, macOS `sandbox-exec`.
 * The plans are pure data (tested on their output); `sandboxCommand` wraps an adapter's
 * command line for one session.
 *
 * @example
 * ```ts ignore
 * import { decideIsolation, probeSandbox, sandboxCommand } from "./mod.ts";
 * const decision = decideIsolation("auto", await probeSandbox());
 * if (decision.isolation === "sandbox") {
 *   const wrapped = await sandboxCommand(invocation, { session, worktree, home, allow }, ctx);
 *   spawnProcess(wrapped.argv, { cwd: wrapped.cwd, env: wrapped.env });
 * }
 * ```
 *
 * @module
 */
export {
  executableClosure,
  inSystem,
  nodePrefix,
  shebangInterpreter,
  SYSTEM_ROOTS,
  SYSTEM_SECRETS,
  systemEntries,
  systemSecrets,
} from "./closure.ts";
export {
  DIRECT_FORWARD_HEADER,
  egressAllows,
  type EgressChannel,
  type EgressGrant,
  EgressProxy,
  type EgressProxyOptions,
  type EgressTarget,
  isLoopbackHost,
  parseEgressTarget,
  type RefusedConnection,
} from "./egress_proxy.ts";
export {
  type AgentIsolation,
  decideIsolation,
  ISOLATION_MODES,
  type IsolationDecision,
  type IsolationMode,
  type ProbeRunner,
  probeSandbox,
  type ProbeSandboxOptions,
  type SandboxBackend,
  type SandboxProbe,
  UNSANDBOXED_REACH,
} from "./isolation.ts";
export {
  bwrapArgv,
  type BwrapOptions,
  type HiddenPath,
  isInsidePath,
  linuxMountPlan,
  type LinuxPlan,
  type MountOp,
  SANDBOX_PROXY_SOCKET,
  type SandboxSpec,
  type SystemEntry,
} from "./linux.ts";
export {
  MAC_SYSTEM_READ,
  type MacProfileSpec,
  macSandboxProfile,
  sandboxExecArgv,
  sbplString,
} from "./macos.ts";
export {
  parseSandboxInitArgs,
  runSandboxInit,
  SANDBOX_INIT_COMMAND,
  type SandboxInitArgs,
  sandboxInitArgv,
} from "./net_init.ts";
export {
  gitConfigCopyPath,
  makeSandboxDir,
  proxiedEnv,
  SANDBOX_PROXY_PORT,
  sandboxCommand,
  type SandboxedCommand,
  type SandboxRecord,
  type SandboxRunContext,
  upstreamProxy,
  type WrappableCommand,
} from "./wrap.ts";
