/**
 * What the parts of the run loop share: the context the `run` command wires (stores, task
 * server, audit chain, ledger, lineage, clock, executor …) and the attachment seam. Types only.
 */
import type { PathLookup, PromptMedia, ScriptedRuntime } from "../adapters/mod.ts";
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import type { SpawnPath } from "../attachments/mod.ts";
import type { Config } from "../config/mod.ts";
import type { RunConnections } from "../fleet/mod.ts";
import type { Clock, EnvReader, SecretRedactor } from "../io/mod.ts";
import type { LedgerWriter } from "../ledger/mod.ts";
import type { LineageStore } from "../lineage/store/mod.ts";
import type { TaskServer, TokenRegistry } from "../server/mod.ts";
import type { HoldStore, Task, TaskStore } from "../tasks/mod.ts";
import type { SpawnPathWrapper } from "./agent_session.ts";
import type { Executor } from "./executor.ts";
import type { CommandIsolator } from "./gates.ts";
import type { GitStateSnapshot } from "./git_guard.ts";
import type { Secret } from "./secrets_gate.ts";
import type { Git } from "./git.ts";
import type { CatalogSet } from "./catalogs.ts";
import type { ConfigWatch } from "./config_reload.ts";
import type { Recorder } from "./recorder.ts";
import type { RunReporter } from "./reporter.ts";
import type { RunPolicy } from "./run_policy.ts";

/** Attachments of one spawn, already stored in CAS and attested in the audit chain. */
export interface SpawnAttachments {
  /** SHA-256 digests of the attached bytes, in declaration order. */
  digests: string[];
  /**
   * The prompt with the attachment blocks and the outcome list at its head (FORMATS.md §7),
   * and the bytes the spawn's CLI takes through its own channel (images).
   */
  compose(body: string): { prompt: string; media: PromptMedia[] };
}

/** Provides each spawn's attachments (run-wide `--attach` plus the task's own). */
export interface AttachmentProvider {
  /** Resolves, stores and attests the attachments of one spawn. */
  forSpawn(
    task: Task,
    spawn: {
      session: string;
      worktreeRelative: string;
      /** Folder `worktreeRelative` is relative to (default: the project root). */
      worktreesDir?: string;
      turnSeq: number;
      /** Adapter of this spawn (a retry ladder may change it). */
      adapter: string;
      /** How the agent starts: only "direct-subprocess" carries attachments. */
      spawnPath: SpawnPath;
    },
  ): Promise<SpawnAttachments | undefined>;
}

/** Everything the loop works with; the command wires the real ones, tests may fake some. */
export interface RunContext {
  /** Run id. */
  runId: string;
  /** Repository root. */
  root: string;
  /** `.sdd/` folder. */
  sdd: string;
  /** Branch merges go into. */
  branch: string;
  /** Effective configuration. */
  config: Config;
  /** Git of the root. */
  git: Git;
  /** Task store. */
  store: TaskStore;
  /** Holds (suppress termination). */
  holds: HoldStore;
  /** Task server: its URL (for agents), its events (wake the loop) and agents' heartbeats. */
  server: Pick<TaskServer, "url" | "events" | "agents">;
  /** Agent tokens. */
  tokens: TokenRegistry;
  /** Audit chain. */
  audit: AuditSink;
  /** Audit key (run spines are tagged under a key derived from it); else read from the env. */
  auditKey?: AuditKey;
  /** Work ledger. */
  ledger: Pick<LedgerWriter, "append">;
  /** Lineage store. */
  lineage: LineageStore;
  /** Clock. */
  clock: Clock;
  /** Environment. */
  env: EnvReader;
  /** Where binaries are found. */
  lookup: PathLookup;
  /** Scripted agent locator (tests inject it; default: the source checkout). */
  scripted?: () => Promise<ScriptedRuntime>;
  /** Command that runs bernstein itself (agents' `bernstein task …` shim). */
  selfCommand: readonly string[];
  /** Environment that command needs (module cache of a source run). */
  selfEnv?: Readonly<Record<string, string>>;
  /** Live view / event stream. */
  reporter: RunReporter;
  /** `--cli`: overrides the configured default adapter (not a task's own `cli`). */
  cliOverride?: string;
  /** `--model`: overrides the model of every task without its own. */
  modelOverride?: string;
  /** Plan-level default adapter. */
  planCli?: string;
  /** Agents at once (a hot reload may change it). */
  maxAgents: number;
  /** Watches the configuration files for hot reload (a real run; tests may leave it out). */
  configWatch?: ConfigWatch;
  /** The merged agent catalogs (`catalogs:`): role defaults and prompt preambles. */
  catalog?: CatalogSet;
  /** The run's goal, for prompts. */
  goal?: string;
  /** 1 for a fresh run, n for the n-th resume. */
  runAttempt: number;
  /** The orchestrator runs as root. */
  isRoot: boolean;
  /** Attachments per task (run-wide + step), resolved and attested at spawn. */
  attachments?: AttachmentProvider;
  /** How agent command lines start (default: the direct subprocess). */
  spawnPath?: SpawnPathWrapper;
  /** Real path of the worktrees folder (`workspace.worktrees_dir`; default `.sdd/worktrees`). */
  worktreesDir?: string;
  /** Starts agents (default: real processes in worktrees of `root`; tests pass a fake). */
  executor?: Executor;
  /** Where facts go (default: a recorder over `audit`, `ledger` and `reporter`). */
  recorder?: Recorder;
  /** The run's tool-call policy (absent: agents get no pre-tool hook). */
  policy?: RunPolicy;
  /** Runs a session's signal and gate commands in its isolation (default: directly). */
  commandIsolation?: (session: string, home: string) => CommandIsolator;
  /** The run's secrets (the `secrets` gate). */
  secrets?: () => Promise<readonly Secret[]>;
  /** The repository's git state when the run started (the `git_state` gate). */
  gitState?: GitStateSnapshot;
  /** The repository's git folder. */
  gitDir?: string;
  /** Mints the connections a task's plan step names, at each claim (docs/FLEET.md). */
  connections?: Pick<RunConnections, "mint">;
  /** The run's redactor (minted secrets): agent output is redacted with it. */
  redactor?: SecretRedactor;
}
