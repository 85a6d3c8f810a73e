/**
 * Workers on other hosts: the orchestrator's worker pool (an `Executor` the run loop dispatches
 * to), its `/workers/` routes and git endpoint on the task server, worker tokens, and the
 * `bernstein worker` process that runs agents on another host with the same executor as a
 * local run.
 *
 * @example
 * ```ts ignore
 * import { startWorkerPool } from "./mod.ts";
 * // executeRun calls this (through RunDeps.workers) when `workers.listen` is set:
 * const workers = await startWorkerPool(parts);
 * ```
 *
 * @module
 */
import { UsageError } from "../errors/mod.ts";
import { Git, type RunWorkers, type WorkerParts } from "../orchestrator/mod.ts";
import { GitRemote } from "./git_remote.ts";
import { WorkerPool } from "./pool.ts";
import { WorkerRoutes } from "./routes.ts";
import { WorkerTokens } from "./tokens.ts";
import { runtimeDir } from "../io/mod.ts";

export { GitRemote } from "./git_remote.ts";

export { WorkerPool } from "./pool.ts";
export { Assignment } from "./protocol.ts";
export { decodeAssignmentMedia, encodeAssignmentMedia } from "./assignment_media.ts";

export { WorkerRoutes } from "./routes.ts";
export { mintWorkerToken, revokeWorkerToken, WorkerTokens } from "./tokens.ts";
export { Worker } from "./worker.ts";

const WILDCARD = /^(0\.0\.0\.0|\[?::\]?)$/;

/**
 * Starts the worker pool of a run: worker tokens, the git remote, the pool, and their routes
 * on the task server's workers' listener.
 */
export async function startWorkerPool(parts: WorkerParts): Promise<RunWorkers> {
  const { config, server } = parts;
  const url = config.workers?.url ?? server.listenUrl;
  if (
    url === undefined || (config.workers?.url === undefined && WILDCARD.test(new URL(url).hostname))
  ) {
    throw new UsageError(
      "workers.url_required",
      `workers.listen ${config.workers?.listen ?? ""} is no address a worker can reach`,
      {
        location: "workers.url",
        hint: "set workers.url to the URL workers use (http://host:port)",
      },
    );
  }
  const tokens = await WorkerTokens.open(parts.sdd);
  // The one Git of bernstein's that may use a transport: file, between project and remote.
  const git = new Git(parts.git.root, { env: parts.env, transport: ["file"] });
  // The remote asks the pool who may push what; the pool is made with the remote.
  const late: { pool?: WorkerPool } = {};
  const remote = await GitRemote.open(runtimeDir(parts.sdd), git, parts.env, {
    worker: (token) => tokens.authenticate(token),
    pushRefs: (worker) => late.pool?.pushRefs(worker) ?? [],
    refused: (address, reason) => void late.pool?.refused(address, reason),
  });
  const tuning = config.tuning;
  const pool = late.pool = new WorkerPool({
    runId: parts.runId,
    sdd: parts.sdd,
    git,
    remote,
    store: parts.store,
    audit: parts.audit,
    clock: parts.clock,
    local: parts.local,
    localSlots: config.workers?.local_agents ?? config.max_agents,
    agentServerUrl: url.replace(/\/+$/, ""),
    heartbeatIntervalS: tuning.agent.heartbeat_interval_s,
    lostAfterS: tuning.orchestrator.stale_claim_timeout_s,
    pollWaitS: tuning.workers.poll_wait_s,
    startTimeoutS: tuning.workers.start_timeout_s,
    signTimeoutS: tuning.workers.sign_timeout_s,
  });
  server.mount(new WorkerRoutes(pool, tokens));
  server.mount(remote);
  return { executor: pool, close: () => pool.close() };
}
