/**
 * The wire format between the orchestrator and `bernstein worker` processes on other hosts:
 * the JSON bodies of the `/workers/` routes as zod schemas, owned here and read by both sides.
 * A worker registers (name, capacity, the adapters it has), heartbeats (the liveness of its
 * agents), long-polls for assignments and lineage sign requests, reports that an agent started
 * (or could not), and reports its result with the branch it pushed and the agent's card.
 */
import { z } from "zod";
import { AdapterSettingsSchema } from "../config/mod.ts";

/** Names of workers: 1–63 characters of A-Z a-z 0-9 . _ - starting with a letter or digit. */
export const WORKER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const Name = z.string().regex(WORKER_NAME, "must be 1-63 characters of A-Z a-z 0-9 . _ -");
const Session = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,160}$/);
const Sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);
const Text = (max: number) => z.string().max(max);

/** `POST /workers/register`. */
export const RegisterBody = z.object({
  name: Name,
  capacity: z.number().int().min(1).max(256),
  adapters: z.array(
    z.object({
      name: z.string().min(1).max(64),
      version: z.string().max(200).nullable(),
    }).strict(),
  ).max(64),
  host: Text(255),
  version: Text(64),
}).strict();
/** A worker's registration. */
export type RegisterBody = z.infer<typeof RegisterBody>;

/** What a registered worker is told. */
export const RegisterReply = z.object({
  worker: Name,
  run_id: z.string(),
  heartbeat_interval_s: z.number().positive(),
  poll_wait_s: z.number().positive(),
  /** Path of the git endpoint on this server (`/git/remote.git`). */
  git_path: z.string().startsWith("/"),
}).strict();
/** The reply to a registration. */
export type RegisterReply = z.infer<typeof RegisterReply>;

/** `POST /workers/{name}/heartbeat`: the agents it runs and how long each has been silent. */
export const HeartbeatBody = z.object({
  sessions: z.array(
    z.object({
      session: Session,
      output_age_ms: z.number().nonnegative(),
      last_text: Text(400),
    }).strict(),
  ).max(256),
}).strict();
/** A heartbeat. */
export type HeartbeatBody = z.infer<typeof HeartbeatBody>;

/** The reply to a heartbeat: sessions to stop, and whether the worker may take more work. */
export const HeartbeatReply = z.object({
  stop: z.array(Session),
  cordoned: z.boolean(),
  draining: z.boolean(),
}).strict();
/** The reply to a heartbeat. */
export type HeartbeatReply = z.infer<typeof HeartbeatReply>;

/** `POST /workers/{name}/poll`: free slots, and how long the server may hold the request. */
export const PollBody = z.object({
  free: z.number().int().min(0).max(256),
  wait_ms: z.number().int().min(0).max(60_000),
}).strict();
/** A poll. */
export type PollBody = z.infer<typeof PollBody>;

const EndpointProfile = z.object({
  name: z.string(),
  base_url: z.string(),
  api: z.enum(["openai-chat", "openai-responses", "anthropic", "gemini"]).optional(),
  api_key_env: z.string().optional(),
  model: z.string().optional(),
}).strict();

/**
 * Attachment bytes an agent's CLI takes on its own channel (images): base64 of the attested
 * bytes, their digest (the worker checks it) and, for `@path` CLIs, the worktree copy's path.
 */
export const AssignmentMedia = z.object({
  mime: Text(100),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  base64: z.string(),
  path: Text(4096).optional(),
}).strict();

/** One agent to run: everything the orchestrator decided about it. */
export const Assignment = z.object({
  session: Session,
  task_id: z.string().min(1),
  title: z.string(),
  agent_id: z.string().min(1),
  adapter: z.string().min(1),
  model: z.string().nullable(),
  effort: z.enum(["low", "medium", "high", "max"]).nullable(),
  max_turns: z.number().int().positive().nullable(),
  endpoint: EndpointProfile.nullable(),
  settings: AdapterSettingsSchema.nullable(),
  prompt: z.string(),
  media: z.array(AssignmentMedia).max(20).optional(),
  env: z.record(z.string(), z.string()),
  deadline_ms: z.number().int().positive(),
  kill_grace_ms: z.number().int().nonnegative(),
  base_sha: Sha,
  /**
   * The run decides the agent's tool calls: the worker wires `bernstein policy hook` (its own
   * bernstein, asking this task server) with this deadline. Null: no hook (docs/POLICY.md).
   */
  tool_policy: z.object({ deadline_s: z.number().positive() }).strict().nullable(),
  /**
   * The session's task-server token. The worker hands it to the agent as a 0600 file in the
   * agent's private HOME (named by BERNSTEIN_TASK_TOKEN_FILE), never in its environment.
   */
  token: z.string().min(1).optional(),
}).strict();
/** An assignment. */
export type Assignment = z.infer<typeof Assignment>;

/** A lineage entry the agent's key (on the worker) must sign. */
export const SignRequest = z.object({
  id: z.string().min(1),
  session: Session,
  agent_id: z.string().min(1),
  kid: z.string().regex(/^[0-9a-f]{16}$/),
  /** The canon entry bytes, base64. */
  entry_b64: z.string(),
}).strict();
/** A sign request. */
export type SignRequest = z.infer<typeof SignRequest>;

/** The reply to a poll. */
export const PollReply = z.object({
  assignments: z.array(Assignment),
  sign_requests: z.array(SignRequest),
  /** The worker was drained and holds nothing: it should exit. */
  exit: z.boolean(),
}).strict();
/** The reply to a poll. */
export type PollReply = z.infer<typeof PollReply>;

/** `POST /workers/{name}/sessions/{session}/started`. */
export const StartedBody = z.object({
  pid: z.number().int().nonnegative(),
  argv0: Text(4096),
  prompt_channel: Text(32),
  notes: z.array(Text(2000)).max(64),
}).strict();
/** An agent started on the worker. */
export type StartedBody = z.infer<typeof StartedBody>;

/** `POST /workers/{name}/sessions/{session}/start_failed`. */
export const StartFailedBody = z.object({ reason: z.string().min(1).max(10_000) }).strict();

/** An agent card, as the worker minted it. */
export const CardBody = z.object({
  agent_id: z.string().min(1),
  kid: z.string().regex(/^[0-9a-f]{16}$/),
  public_key_pem: z.string().min(1).max(1000),
  protocol_version: z.string(),
}).strict();

/** `POST /workers/{name}/sessions/{session}/result`: how the agent ended and where its work is. */
export const ResultBody = z.object({
  exit: z.object({
    ok: z.boolean(),
    summary: Text(100_000),
    turns: z.number().int().nonnegative().nullable(),
    tokens: z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() })
      .nullable(),
    cost_usd: z.number().nonnegative().nullable(),
    error: Text(10_000).nullable(),
    subtype: Text(200).nullable(),
    session_id: Text(500).nullable(),
    exit_code: z.number().int(),
    timed_out: z.boolean(),
    signal: z.string().nullable(),
  }).strict(),
  /** The pushed `agent/<session>` head, or null when nothing could be pushed. */
  head: Sha.nullable(),
  /** Why the branch could not be pushed (then the attempt failed whatever the agent said). */
  push_error: z.string().max(10_000).nullable().optional(),
  card: CardBody,
}).strict();
/** A result. */
export type ResultBody = z.infer<typeof ResultBody>;

/** `POST /workers/{name}/signatures`: the detached JWS of a sign request, or why not. */
export const SignatureBody = z.union([
  z.object({ id: z.string().min(1), jws: z.string().min(1).max(4096) }).strict(),
  z.object({ id: z.string().min(1), error: z.string().min(1).max(2000) }).strict(),
]);
/** A signature (or a refusal to sign). */
export type SignatureBody = z.infer<typeof SignatureBody>;

/** One worker as `GET /workers` lists it. */
export interface WorkerView {
  /** Name. */
  name: string;
  /** Host it reported. */
  host: string;
  /** Address it connects from. */
  address: string;
  /** Agents at once. */
  capacity: number;
  /** Sessions it runs now. */
  running: number;
  /** Adapters it has, with versions. */
  adapters: { name: string; version: string | null }[];
  /** `ready`, `cordoned`, `draining`, `lost`. */
  state: "ready" | "cordoned" | "draining" | "lost";
  /** ISO time of its last heartbeat or poll. */
  last_seen: string;
  /** Tasks it finished (results accepted) in this run. */
  finished: number;
}
