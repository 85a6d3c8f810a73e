/**
 * The run's tool-call policy: the rules of `.bernstein/` loaded once at run start (an agent's
 * later edits never reach this run), the policy service the task server answers
 * `/policy/decide` and `/approvals` from, the pre-tool hook each spawn gets, and which
 * adapters run without one. Every decision becomes a `policy.decision` fact (audit event,
 * counts in the ledger and summary); a parked call becomes a progress line telling the
 * operator how to answer it.
 */
import { type Adapter, type PathLookup, type ToolPolicyHook } from "../adapters/mod.ts";
import { resolveAuditKeyPath } from "../audit/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Clock, EnvReader, Random } from "../io/mod.ts";
import { loadPolicy, type PolicyRecord, PolicyService, type RuleProblem } from "../policy/mod.ts";
import { operatorTokenPath } from "../server/mod.ts";
import { sessionPaths } from "./agent_session.ts";
import type { RunFact } from "./recorder.ts";

/** What the run's policy is built from. */
export interface RunPolicyOptions {
  /** Repository root (its `.bernstein/` holds the rules). */
  root: string;
  /** `.sdd/`. */
  sdd: string;
  /** Real path of the worktrees folder (default `.sdd/worktrees`). */
  worktreesDir?: string;
  /** Effective configuration (`policy`, `tuning.policy`). */
  config: Pick<Config, "policy" | "tuning">;
  /** Environment (operator home, audit key path). */
  env: EnvReader;
  /** Clock (approval timeouts). */
  clock: Clock;
  /** Randomness (approval ids). */
  random: Random;
  /** Finds `timeout` for the hook line. */
  lookup: PathLookup;
  /** Command that runs bernstein itself, and the environment it needs. */
  self: { argv: readonly string[]; env?: Readonly<Record<string, string>> };
  /** Records a fact (set once the run's recorder exists). */
  record: (fact: RunFact) => Promise<void>;
}

/** A spawn's session, as the policy needs it. */
export interface PolicySpawn {
  /** Session id. */
  session: string;
  /** Task id. */
  taskId: string;
  /** Adapter. */
  adapter: Adapter;
  /** The task server's URL. */
  serverUrl: string;
}

/** True when the adapter's CLI gets bernstein's pre-tool hook. */
export function enforces(adapter: Pick<Adapter, "policy_hook">): boolean {
  return adapter.policy_hook !== undefined;
}

/** The run's policy. */
export class RunPolicy {
  readonly service: PolicyService;
  readonly problems: readonly RuleProblem[];
  /** Rules in force. */
  readonly rules: number;
  readonly #options: RunPolicyOptions;
  readonly #timeout: string | undefined;

  private constructor(
    options: RunPolicyOptions,
    service: PolicyService,
    problems: readonly RuleProblem[],
    rules: number,
    timeout: string | undefined,
  ) {
    this.#options = options;
    this.service = service;
    this.problems = problems;
    this.rules = rules;
    this.#timeout = timeout;
  }

  /** Loads the rules and builds the service. */
  static async open(options: RunPolicyOptions): Promise<RunPolicy> {
    const tuning = options.config.tuning.policy;
    const policy = await loadPolicy(options.root, { maxBytes: tuning.max_rule_file_bytes });
    const userHome = options.env.get("HOME");
    // The operator token lives beside the audit key, outside the project (server/tokens.ts):
    // a tool call that reads it is a secret read like one of the key itself.
    const auditKey = resolveAuditKeyPath(options.env).path;
    const operatorToken = operatorTokenPath(auditKey, await Deno.realPath(options.root));
    const service = new PolicyService({
      policy,
      places: {
        root: options.root,
        sdd: options.sdd,
        ...(userHome ? { userHome } : {}),
        secretFiles: [auditKey, operatorToken],
      },
      clock: options.clock,
      random: options.random,
      approvalTimeoutMs: tuning.approval_timeout_s * 1000,
      record: (r) => options.record(decisionFact(r)),
      onParked: (a) => {
        options.record({
          kind: "policy.parked",
          taskId: a.task_id,
          session: a.session,
          approvalId: a.id,
          summary: a.summary,
          timeoutS: tuning.approval_timeout_s,
        }).catch(() => {});
      },
    });
    const timeout = await options.lookup.which("timeout");
    return new RunPolicy(options, service, policy.problems, policy.rules.length, timeout);
  }

  /** True when adapters without a hook must not start (`policy.unenforced: refuse`). */
  get refusesUnenforced(): boolean {
    return this.#options.config.policy.unenforced === "refuse";
  }

  /**
   * Registers a spawn and returns the hook its CLI runs (undefined for an adapter without
   * one). The hook asks this run's task server with the agent's own token (from its
   * environment), and gives up — denying — after the approval timeout plus the hook timeout.
   */
  hookFor(spawn: PolicySpawn): ToolPolicyHook | undefined {
    const paths = sessionPaths(this.#options.sdd, spawn.session, this.#options.worktreesDir);
    this.service.register({
      session: spawn.session,
      task_id: spawn.taskId,
      cli: spawn.adapter.name,
      agent_id: spawn.session,
      cwd: paths.worktree,
      home: paths.home,
    });
    if (!enforces(spawn.adapter)) return undefined;
    const tuning = this.#options.config.tuning.policy;
    return {
      command: [...this.#options.self.argv, "policy", "hook", "--server", spawn.serverUrl],
      ...(this.#options.self.env && Object.keys(this.#options.self.env).length > 0
        ? { env: this.#options.self.env }
        : {}),
      deadline_s: tuning.approval_timeout_s + tuning.hook_timeout_s,
      ...(this.#timeout !== undefined ? { timeout_command: this.#timeout } : {}),
    };
  }

  /** Stops deciding for a session (its agent exited). */
  release(session: string): void {
    this.service.unregister(session);
  }
}

function decisionFact(r: PolicyRecord): RunFact {
  return {
    kind: "policy.decision",
    taskId: r.session.task_id,
    session: r.session.session,
    adapter: r.session.cli,
    tool: r.tool,
    family: r.family,
    inputSha256: r.input_sha256,
    toolUseId: r.tool_use_id ?? null,
    decision: r.decision,
    approval: r.approval === undefined ? null : {
      id: r.approval.id,
      status: r.approval.status,
      resolvedBy: r.approval.resolved_by ?? null,
    },
  };
}
