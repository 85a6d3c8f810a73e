/**
 * The run's isolation: decides it (`isolation` / `--isolation` against what this machine can
 * do), and builds the spawn path agents start through — the sandbox (bwrap or sandbox-exec,
 * with a per-agent egress proxy and allowlist) or, without one, the direct subprocess. The
 * sandbox wraps the adapter's own command line, so attachments and prompts travel unchanged.
 */
import { join, relative } from "node:path";
import { agentEgress, type Invocation } from "../adapters/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import type { Config } from "../config/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import {
  EgressProxy,
  type IsolationDecision,
  makeSandboxDir,
  parseEgressTarget,
  type RefusedConnection,
  sandboxCommand,
} from "../sandbox/mod.ts";
import { DIRECT_SUBPROCESS, type SpawnPathWrapper } from "./agent_session.ts";
import type { Git } from "./git.ts";
import type { SelfCommand } from "./self_command.ts";
import type { CommandIsolator } from "./gates.ts";

/** The isolation in force for a run, its spawn path, and what to close at the end. */
export interface RunIsolation {
  /** The decision (what was asked, what agents get, why). */
  decision: IsolationDecision;
  /** How agents start. */
  spawnPath: SpawnPathWrapper;
  /** Runs a session's signal and gate commands in the same isolation as its agent. */
  isolateCommand(session: string, home: string): CommandIsolator;
  /** Stops the egress proxy and removes the sandbox's private folder. */
  close(): Promise<void>;
}

/** What the run's isolation is built from. */
export interface IsolationOptions {
  /** The decision (decideIsolation), made before anything started. */
  decision: IsolationDecision;
  /** Effective configuration (`network.egress`, `sandbox.read_only`). */
  config: Pick<Config, "network" | "sandbox">;
  /** Environment (HOME: the operator's HOME is never shown). */
  env: EnvReader;
  /** Project root and `.sdd`. */
  project: { root: string; sdd: string };
  /** Git of the root (its common git folder, a cleaned copy of its config). */
  git: Git;
  /** How bernstein runs itself (the sandbox init and the agents' shim). */
  self: SelfCommand;
  /** Files agents must never see (the audit key, the operator token). */
  secretFiles: readonly string[];
  /**
   * The worktrees folder when it is not under `.sdd` (`workspace.worktrees_dir`): hidden like
   * `.sdd`, so an agent sees its own worktree and no other.
   */
  worktreesDir?: string;
  /** Called for every connection the egress proxy refused. */
  onRefused: (refused: RefusedConnection) => void;
}

/** Config keys a sandboxed agent's git may read: none of them names a program or a remote. */
const GIT_CONFIG_KEPT =
  /^(core\.(repositoryformatversion|filemode|bare|symlinks|ignorecase|precomposeunicode|autocrlf|eol|safecrlf|quotepath)|extensions\..+)$/;

/** A git config with only `GIT_CONFIG_KEPT` keys, from `git config --list -z` output. */
export function cleanedGitConfig(listing: string): string {
  const sections = new Map<string, string[]>();
  for (const item of listing.split("\0")) {
    const nl = item.indexOf("\n");
    if (nl <= 0) continue;
    const key = item.slice(0, nl).toLowerCase();
    const value = item.slice(nl + 1);
    if (!GIT_CONFIG_KEPT.test(key) || /[\n\r\0"\\]/.test(value)) continue;
    const dot = key.indexOf(".");
    const section = key.slice(0, dot);
    const lines = sections.get(section) ?? [];
    lines.push(`\t${key.slice(dot + 1)} = ${value}`);
    sections.set(section, lines);
  }
  return [...sections].map(([name, lines]) => `[${name}]\n${lines.join("\n")}\n`).join("");
}

/** The isolation record of an agent that runs without a sandbox. */
function unsandboxed(decision: IsolationDecision): JsonObject {
  return { isolation: "none", requested: decision.requested, reason: decision.reason };
}

/** Builds the run's spawn path for its isolation decision. */
export async function setUpIsolation(options: IsolationOptions): Promise<RunIsolation> {
  const decision = options.decision;
  if (decision.isolation === "none") return directIsolation(decision);
  const extraEgress = checkedEgress(options.config);
  const privateDir = await makeSandboxDir();
  const proxy = new EgressProxy({ socketDir: join(privateDir, "s"), onRefused: options.onRefused });
  const ctx = await sandboxContext(options, proxy, privateDir);
  const spawnPath = sandboxSpawnPath(ctx, extraEgress);
  return {
    decision,
    spawnPath,
    isolateCommand: (session, home) => isolateInSandbox(spawnPath, session, home),
    async close() {
      await proxy.close();
      await Deno.remove(privateDir, { recursive: true }).catch(() => {});
    },
  };
}

/** No sandbox: agents and their commands run as they are, and say so in their record. */
function directIsolation(decision: IsolationDecision): RunIsolation {
  const record = unsandboxed(decision);
  return {
    decision,
    spawnPath: {
      name: DIRECT_SUBPROCESS.name,
      wrap: (invocation) => Promise.resolve({ invocation, isolation: record }),
    },
    isolateCommand: () => (argv, where) => Promise.resolve({ argv: [...argv], env: where.env }),
    close: () => Promise.resolve(),
  };
}

/** `network.egress`, each entry checked (`config.invalid_value` naming the bad one). */
function checkedEgress(config: IsolationOptions["config"]): string[] {
  return (config.network.egress ?? []).map((entry, i) => {
    try {
      parseEgressTarget(entry);
      return entry;
    } catch (error) {
      throw new BernsteinError("config.invalid_value", (error as Error).message, {
        location: `network.egress[${i}]`,
      });
    }
  });
}

type SandboxContext = Parameters<typeof sandboxCommand>[2];

/** What every sandboxed command of the run shares: paths to hide or expose, the proxy, git. */
async function sandboxContext(
  options: IsolationOptions,
  proxy: EgressProxy,
  privateDir: string,
): Promise<SandboxContext> {
  const gitDir = await options.git.text([
    "rev-parse",
    "--path-format=absolute",
    "--git-common-dir",
  ]);
  let configCopy: Promise<string> | undefined;
  const gitConfigCopy = () =>
    configCopy ??= (async () => {
      const config = join(gitDir, "config");
      const listing = await options.git.text(["config", "--file", config, "--list", "-z"]);
      const path = join(privateDir, "gitconfig");
      await Deno.writeTextFile(path, cleanedGitConfig(listing), { mode: 0o600 });
      return path;
    })();
  return {
    decision: options.decision,
    proxy,
    privateDir,
    self: { argv: options.self.argv, env: options.self.env },
    selfReadOnly: options.self.readOnly,
    projectRoot: options.project.root,
    sdd: options.project.sdd,
    gitDir,
    secretFiles: options.secretFiles,
    ...(options.worktreesDir !== undefined &&
        relative(options.project.sdd, options.worktreesDir).startsWith("..")
      ? { otherWorktrees: options.worktreesDir }
      : {}),
    operatorHome: options.env.get("HOME"),
    extraReadOnly: options.config.sandbox?.read_only ?? [],
    extraWritable: options.config.sandbox?.writable ?? [],
    gitConfigCopy,
  };
}

/** The sandbox spawn path: each agent in bwrap, its network only what its allowlist names. */
function sandboxSpawnPath(ctx: SandboxContext, extraEgress: readonly string[]): SpawnPathWrapper {
  return {
    name: "sandbox",
    async wrap(invocation: Invocation, place) {
      const allow = agentEgress({
        adapter: place.adapter,
        endpointUrl: place.endpoint?.base_url,
        env: invocation.env,
        serverUrl: invocation.env.BERNSTEIN_SERVER_URL,
        extra: [...extraEgress],
      }).map(parseEgressTarget);
      const wrapped = await sandboxCommand(invocation, { ...place, allow }, ctx);
      return {
        invocation: { ...invocation, argv: wrapped.argv, env: wrapped.env, cwd: wrapped.cwd },
        isolation: { ...wrapped.record, requested: ctx.decision.requested },
        release: () => wrapped.channel.close(),
        leaderLast: wrapped.leaderLast,
        group: wrapped.group,
      };
    },
  };
}

/**
 * The agent's own sandbox around a command it wrote (tests, lint, signal commands): HOME and
 * TMPDIR are the session's, the network only what its allowlist names.
 */
function isolateInSandbox(
  spawnPath: SpawnPathWrapper,
  session: string,
  home: string,
): CommandIsolator {
  return async (argv, where) => {
    const env = { ...where.env, HOME: home, TMPDIR: join(home, "tmp") };
    await Deno.mkdir(join(home, "tmp"), { recursive: true, mode: 0o700 });
    const wrapped = await spawnPath.wrap({
      argv: [...argv],
      env,
      cwd: where.cwd,
      files: [],
      prompt_channel: "argv",
      notes: [],
    }, { session: `${session}-check`, worktree: where.cwd, home, adapter: "gate" });
    return {
      argv: wrapped.invocation.argv,
      env: wrapped.invocation.env,
      release: wrapped.release,
      leaderLast: wrapped.leaderLast,
    };
  };
}
