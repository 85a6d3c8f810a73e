/**
 * The merge queue: checked work is merged into the branch checked out at the root one task at
 * a time, in the order it passed its checks. Each merge records a lineage entry for every file
 * it brings in, closes the task and records the merge; a conflict or a lineage refusal (with
 * `lineage.strict`) undoes nothing already merged, keeps the agent's branch and fails the task
 * (which may retry). A session adopted after a crash whose branch is already merged is never
 * merged twice. The queue also owns the cached HEAD new worktrees start from, and git's auto
 * maintenance, which bernstein's own commits and merges leave to it: every
 * {@linkcode MAINTAIN_EVERY} merges, between two merges, and once when the run ends.
 */
import { sha256Hex } from "../crypto/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { LineageStore } from "../lineage/store/mod.ts";
import type { Task, TaskStore } from "../tasks/mod.ts";
import type { ChangedPath, Git } from "./git.ts";
import type { Recorder } from "./recorder.ts";
import type { Retries } from "./retries.ts";
import type { BackgroundWork, RunningSession, SessionTable } from "./sessions.ts";

/** What the merge queue works with. */
export interface MergeQueueDeps {
  /** Run id (merge commit trailer). */
  runId: string;
  /** Git of the root. */
  git: Git;
  /** Task store. */
  store: TaskStore;
  /** Lineage store. */
  lineage: LineageStore;
  /** Clock (refusal time). */
  clock: Clock;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Failure and retry. */
  retries: Retries;
  /** Background work (merges, clean-ups). */
  work: BackgroundWork;
  /** Wakes the loop. */
  wake: () => void;
}

/** Work that passed its checks, waiting for its merge. */
export interface MergeRequest {
  /** The session whose branch merges. */
  session: RunningSession;
  /** The task (status `done`). */
  task: Task;
  /** Cost of the agent run, for the ledger. */
  costUsd: number | null;
  /** Paths the branch changes against its base. */
  changes: ChangedPath[];
  /** The commit the gates checked: the one merged, wherever the branch points by then. */
  head: string;
}

/**
 * Merges between two runs of `git maintenance run --auto` (which does nothing until the
 * repository holds enough loose objects: git's `gc.auto`, 6,700 by default; a task's merge
 * writes a handful).
 */
export const MAINTAIN_EVERY = 32;

/** Merges one branch at a time into the root's branch. */
export class MergeQueue {
  readonly #deps: MergeQueueDeps;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  /** HEAD of the root, cached between merges (the only thing that moves it). */
  #head: string | undefined;
  /** Merges since git's auto maintenance last ran. */
  #unmaintained = 0;

  constructor(deps: MergeQueueDeps) {
    this.#deps = deps;
  }

  /** Merges waiting or in progress. */
  get pending(): number {
    return this.#pending;
  }

  /** HEAD of the root (the commit new worktrees start from). */
  async head(): Promise<string> {
    return this.#head ??= await this.#deps.git.revParse("HEAD");
  }

  /** Resolves when every merge queued so far has finished. */
  async drained(): Promise<void> {
    await Promise.allSettled([this.#chain]);
  }

  /**
   * Runs git's auto maintenance behind the merges queued so far, when a merge happened since it
   * last ran (the run's end). Never fails.
   */
  async maintain(): Promise<void> {
    this.#chain = this.#chain.then(() => this.#maintainIfMerged(1));
    await this.drained();
  }

  async #maintainIfMerged(atLeast: number): Promise<void> {
    if (this.#unmaintained < atLeast) return;
    this.#unmaintained = 0;
    await this.#deps.git.maintainAuto();
  }

  /** Queues a merge behind the ones already waiting. */
  enqueue(request: MergeRequest): void {
    const { recorder, work, wake } = this.#deps;
    request.session.state = "merging";
    this.#pending++;
    this.#chain = this.#chain.then(async () => {
      await this.#merge(request);
      await this.#maintainIfMerged(MAINTAIN_EVERY);
    }).catch((error) =>
      recorder.warn(
        `merge of ${request.task.id} failed unexpectedly: ${(error as Error).message}`,
      )
    ).finally(() => {
      this.#pending--;
      wake();
    });
    work.track(this.#chain);
  }

  /**
   * A refused merge (conflict, failed gate, lineage refusal): recorded, the session ended, the
   * branch kept, the task failed (and maybe retried).
   */
  async refuse(
    s: RunningSession,
    task: Task,
    reason: string,
    detail: string,
    costUsd: number | null,
  ): Promise<void> {
    const { runId, clock, recorder, sessions, store, retries } = this.#deps;
    await recorder.record({
      kind: "merge.refused",
      refused: {
        run_id: runId,
        task_id: task.id,
        session: s.session,
        branch: s.branch,
        reason,
        detail,
        at: new Date(clock.nowMs()).toISOString(),
      },
    });
    await sessions.finish(s, "failed");
    const current = await store.get(task.id) as Task;
    await retries.failTask(current, `${reason}: ${detail}`, reason, costUsd, s.branch);
  }

  /** One merge into the branch checked out at the root; lineage for every file it brings in. */
  async #merge({ session: s, task, costUsd, changes, head }: MergeRequest): Promise<void> {
    // A session adopted after a crash may have merged already: never merge twice.
    const already = s.execution === undefined &&
      await this.#deps.git.isAncestor(head, "HEAD");
    const merged = already
      ? { sha: await this.#deps.git.revParse("HEAD") }
      : await this.#mergeChecked(s, task, head);
    if (!already) this.#unmaintained++;
    if ("conflict" in merged) {
      await this.refuse(s, task, "merge-conflict", merged.conflict, costUsd);
      return;
    }
    this.#head = merged.sha;
    let written: string[];
    try {
      written = await this.#recordLineage(s, task, merged.sha, changes, already);
    } catch (error) {
      // lineage.strict: the write is refused, so the merge is undone and the branch kept.
      if (!already) await this.#undoMerge();
      await this.refuse(s, task, "lineage-refused", (error as Error).message, costUsd);
      return;
    }
    await this.#land(s, task, merged.sha, written, costUsd);
  }

  /** Merges the checked commit of the branch: the merge commit, or what git refused. */
  async #mergeChecked(
    s: RunningSession,
    task: Task,
    head: string,
  ): Promise<{ sha: string } | { conflict: string }> {
    const merged = await this.#deps.git.merge(
      head,
      `Merge ${task.id}: ${task.title}\n\nBernstein-Run: ${this.#deps.runId}\nBernstein-Session: ${s.session}`,
    );
    if (merged.ok) return { sha: merged.sha };
    return {
      conflict: merged.reason === "conflict"
        ? `conflicts in ${merged.conflicts.join(", ")}`
        : merged.output.split("\n").slice(-3).join(" | "),
    };
  }

  async #undoMerge(): Promise<void> {
    await this.#deps.git.run(["reset", "--hard", "--quiet", "ORIG_HEAD"]);
    this.#head = undefined;
  }

  /** Records a lineage entry per file the merge brought in; the paths written. */
  async #recordLineage(
    s: RunningSession,
    task: Task,
    sha: string,
    changes: ChangedPath[],
    already: boolean,
  ): Promise<string[]> {
    const { git, lineage, recorder } = this.#deps;
    const written: string[] = [];
    for (const change of changes) {
      if (change.status === "D") continue;
      const bytes = await git.showFile(sha, change.path);
      if (already && await this.#alreadyRecorded(change.path, bytes, s.agentId)) {
        written.push(change.path);
        continue;
      }
      const r = await lineage.recordWrite(change.path, bytes, {
        agent: s.agentId,
        signer: s.execution?.lineageSigner,
        toolCallId: `task:${task.id}`,
        spanId: s.session,
        attachmentDigests: s.file.attachment_digests.length > 0
          ? s.file.attachment_digests
          : undefined,
      });
      if (r.status === "failed") {
        await recorder.warn(`lineage for ${change.path} not recorded (lineage.strict is off)`);
      }
      written.push(change.path);
    }
    return written;
  }

  /** True when the artefact's latest entry already records these bytes by this agent. */
  async #alreadyRecorded(path: string, bytes: Uint8Array, agentId: string): Promise<boolean> {
    const last = (await this.#deps.lineage.chain(path)).at(-1);
    return last !== undefined && last.entry.agent_id === agentId &&
      last.entry.content_hash === `sha256:${sha256Hex(bytes)}`;
  }

  /** The merge stands: the task closes, the merge is recorded, the worktree cleaned up. */
  async #land(
    s: RunningSession,
    task: Task,
    sha: string,
    written: string[],
    costUsd: number | null,
  ): Promise<void> {
    const { store, recorder, work } = this.#deps;
    await store.transition(task.id, "closed", {
      actor: "orchestrator",
      reason: `merged ${sha.slice(0, 12)}`,
    });
    await recorder.record({
      kind: "merge.completed",
      taskId: task.id,
      session: s.session,
      branch: s.branch,
      sha,
      files: written,
      costUsd,
    });
    // Clean-up is off the merge path: the next merge need not wait for it.
    work.track(this.#cleanUp(s));
  }

  async #cleanUp(s: RunningSession): Promise<void> {
    await removeWorktree(this.#deps.git, s);
    await this.#deps.git.deleteBranch(s.branch, true).catch(() => {});
    await this.#deps.sessions.finish(s, "merged");
  }
}

/** Removes a session's worktree (its branch stays). */
export async function removeWorktree(git: Git, s: RunningSession): Promise<void> {
  await git.removeWorktree(s.worktree, true).catch(() => {});
}
