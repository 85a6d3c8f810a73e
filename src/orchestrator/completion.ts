/**
 * Completion and gates: what happens to a task whose agent finished (`done`). Its worktree is
 * committed under the agent's identity, its completion signals are checked (unmet: the task
 * fails, the branch is kept), then the gates run on the change: the built-in ones always
 * (`git_state`: the repository's .git as the run found it; `git_safety`: no symlink escape,
 * .git path, local submodule, git hook or config; `secrets` unless switched off), then
 * `run_config`, then `tests` and `lint` while the earlier ones pass; a failed gate is a refused
 * merge. Commands of signals and gates run the agent's code, so they run in its isolation.
 * Work that passes goes to the merge queue; a task that changed nothing closes without a merge.
 */
import type { Config } from "../config/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import type { Task, TaskStore } from "../tasks/mod.ts";
import { evaluateCompletionSignals, worktreeEdges } from "./completion_signals.ts";
import { commandGate, type CommandIsolator, type GateResult, runConfigGate } from "./gates.ts";
import type { DiffEntry, Git } from "./git.ts";
import { gitStateGate, type GitStateSnapshot } from "./git_guard.ts";
import { type BlobReader, gitSafetyGate } from "./merge_safety.ts";
import { type Secret, secretsGate } from "./secrets_gate.ts";
import { type MergeQueue, removeWorktree } from "./merge_queue.ts";
import type { Recorder } from "./recorder.ts";
import type { Retries } from "./retries.ts";
import type { RunningSession, SessionTable } from "./sessions.ts";

/** What completion works with. */
export interface CompletionDeps {
  /** Effective configuration (`quality_gates`, `tuning.gates`). */
  config: Pick<Config, "quality_gates" | "tuning">;
  /** Git of the root. */
  git: Git;
  /** Environment (signal commands and gates). */
  env: EnvReader;
  /** Task store. */
  store: TaskStore;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Failure and retry. */
  retries: Retries;
  /** Where passing work goes. */
  merges: MergeQueue;
  /** Runs a session's signal and gate commands in its isolation (default: directly). */
  isolate?: (s: RunningSession) => CommandIsolator;
  /** The run's secrets, for the `secrets` gate. */
  secrets?: () => Promise<readonly Secret[]>;
  /** The repository's git state when the run started, for the `git_state` gate. */
  gitState?: GitStateSnapshot;
  /** The repository's git folder (its config names hook folders and included files). */
  gitDir?: string;
}

/** Checks finished work and hands it to the merge queue (or fails it). */
export class Completion {
  readonly #deps: CompletionDeps;

  constructor(deps: CompletionDeps) {
    this.#deps = deps;
  }

  /** Commits the worktree, checks signals and gates, then queues the merge (or fails). */
  async complete(s: RunningSession, task: Task, costUsd: number | null): Promise<void> {
    s.state = "checking";
    await this.#commit(s, task);
    const unmet = await this.#unmetSignals(s, task);
    if (unmet !== undefined) {
      await this.#rejectDone(
        s,
        task,
        "signals-unmet",
        `completion signals not met: ${unmet}`,
        costUsd,
      );
      return;
    }
    // The branch's commit is read once: every gate checks it and the merge takes it, so code
    // run after this point (a tests gate runs the agent's code, with or without a sandbox)
    // cannot move the branch to unchecked work.
    const head = await this.#deps.git.revParse(s.branch);
    const changes = await this.#deps.git.diffEntries(s.baseSha, head);
    const failed = await this.#runGates(s, task, changes, head);
    if (failed !== undefined) {
      await this.#refuseGate(s, task, failed, costUsd);
      return;
    }
    if (changes.length === 0) {
      await this.#closeUnchanged(s, task, costUsd);
      return;
    }
    this.#deps.merges.enqueue({ session: s, task, costUsd, changes, head });
  }

  async #commit(s: RunningSession, task: Task): Promise<void> {
    const authored = { name: s.agentId, email: `${s.session}@agents.bernstein.invalid` };
    // Git's auto maintenance is the merge queue's (git.ts).
    await this.#deps.git.commitChanges(
      s.worktree,
      `${task.id}: ${task.title}\n\n${
        task.result_summary ?? ""
      }\n\nBernstein-Session: ${s.session}`,
      authored,
    );
  }

  /** The unmet signals' reasons, or undefined when every signal is met. */
  async #unmetSignals(s: RunningSession, task: Task): Promise<string | undefined> {
    const signals = await evaluateCompletionSignals(
      task.completion_signals,
      worktreeEdges(s.worktree, { env: this.#deps.env, isolate: this.#deps.isolate?.(s) }),
    );
    if (signals.met) return undefined;
    return signals.results.filter((r) => !r.met).map((r) => r.reason).join("; ");
  }

  /** The built-in gates: the repository's git state, the change's git safety, secrets. */
  async #builtinGates(
    s: RunningSession,
    changes: DiffEntry[],
    head: string,
  ): Promise<GateResult[]> {
    const { config, git } = this.#deps;
    const gates: GateResult[] = [];
    if (this.#deps.gitState !== undefined) gates.push(await gitStateGate(this.#deps.gitState));
    const read: BlobReader = (path, side) => git.readBlob(side === "new" ? head : s.baseSha, path);
    const repo = this.#deps.gitDir === undefined
      ? { included: [] }
      : await git.repoConfigPaths(this.#deps.gitDir);
    gates.push(
      await gitSafetyGate({
        entries: changes,
        read,
        hooksPath: repo.hooksPath,
        includedConfig: repo.included,
      }),
    );
    if (config.quality_gates.secrets !== false && this.#deps.secrets !== undefined) {
      gates.push(
        await secretsGate({
          entries: changes,
          read,
          secrets: await this.#deps.secrets(),
          commits: await git.commitTexts(s.baseSha, head),
        }),
      );
    }
    return gates;
  }

  /** Runs and records the gates; the first that failed, if any. */
  async #runGates(
    s: RunningSession,
    task: Task,
    changes: DiffEntry[],
    head: string,
  ): Promise<GateResult | undefined> {
    const { config, env, recorder } = this.#deps;
    const gates: GateResult[] = await this.#builtinGates(s, changes, head);
    if (config.quality_gates.run_config) gates.push(runConfigGate(changes));
    const timeoutS = config.tuning.gates.timeout_s;
    for (const name of ["tests", "lint"] as const) {
      const gate = config.quality_gates[name];
      if (gate && changes.length > 0 && gates.every((g) => g.ok)) {
        gates.push(
          await commandGate({
            gate: name,
            command: gate.command,
            cwd: s.worktree,
            timeoutS: gate.timeout_s ?? timeoutS,
            env,
            isolate: this.#deps.isolate?.(s),
          }),
        );
      }
    }
    // Issued together, in order: the audit chain commits them as one group (one fsync).
    await Promise.all(
      gates.map((gate) =>
        recorder.record({ kind: "gate.result", taskId: task.id, session: s.session, gate })
      ),
    );
    return gates.find((g) => !g.ok);
  }

  /** A refused gate is a refused merge: recorded, the branch kept, the run unhealthy. */
  async #refuseGate(
    s: RunningSession,
    task: Task,
    failed: GateResult,
    costUsd: number | null,
  ): Promise<void> {
    await this.#deps.recorder.record({
      kind: "gate.failed",
      taskId: task.id,
      gate: failed.gate,
      reason: failed.reason,
    });
    const output = failed.output ? `\n${failed.output.slice(-2000)}` : "";
    await this.#deps.merges.refuse(
      s,
      task,
      "gate-failed",
      `gate ${failed.gate}: ${failed.reason}${output}`,
      costUsd,
    );
  }

  /** Nothing changed: the task closes without a merge. */
  async #closeUnchanged(s: RunningSession, task: Task, costUsd: number | null): Promise<void> {
    const { store, recorder, git, sessions } = this.#deps;
    await store.transition(task.id, "closed", {
      actor: "orchestrator",
      reason: "no changes to merge",
    });
    await recorder.record({ kind: "task.unchanged", taskId: task.id, costUsd });
    await removeWorktree(git, s);
    await sessions.finish(s, "merged");
  }

  /** A done task whose signals failed: done → failed, branch kept. */
  async #rejectDone(
    s: RunningSession,
    task: Task,
    code: string,
    detail: string,
    costUsd: number | null,
  ): Promise<void> {
    await this.#deps.sessions.finish(s, "failed");
    await this.#deps.retries.failTask(task, `${code}: ${detail}`, code, costUsd, s.branch);
  }
}
