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
export { nodePrefix, shebangInterpreter, systemSecrets } from "./closure.ts";
export { DIRECT_FORWARD_HEADER } from "./_wire.ts";
export {
  egressAllows,
  EgressProxy,
  parseEgressTarget,
  type RefusedConnection,
} from "./egress_proxy.ts";
export {
  decideIsolation,
  type IsolationDecision,
  type IsolationMode,
  probeSandbox,
  type SandboxProbe,
} from "./isolation.ts";
export {
  bwrapArgv,
  linuxMountPlan,
  type MountOp,
  SANDBOX_PROXY_SOCKET,
  type SandboxSpec,
} from "./linux.ts";
export { macSandboxProfile } from "./macos.ts";
export { parseSandboxInitArgs, sandboxInitArgv } from "./net_init.ts";
export { proxiedEnv, sandboxCommand, upstreamProxy } from "./wrap.ts";
export { makeSandboxDir } from "./private_dir.ts";
