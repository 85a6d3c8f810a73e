// `bernstein worker` (run agents for an orchestrator on another host) and `bernstein workers …`
// (the orchestrator's side: tokens, list, cordon, drain).
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, numberFlag, stringArg, stringFlag } from "./spec.ts";

async function project(ctx: CommandContext) {
  const { findProject } = await import("../config/mod.ts");
  return await findProject(ctx.cwd);
}

/** The running orchestrator's task server, as the operator. */
async function operatorClient(ctx: CommandContext) {
  const server = await import("../server/mod.ts");
  const { systemClock } = await import("../io/mod.ts");
  const endpoint = await server.discoverEndpoint({ env: ctx.env, cwd: ctx.cwd });
  return new server.TaskClient(endpoint, { attempts: 1, baseDelayMs: 0, clock: systemClock });
}

interface WorkerRow {
  name: string;
  host: string;
  address: string;
  capacity: number;
  running: number;
  state: string;
  last_seen: string;
  finished: number;
  adapters: { name: string; version: string | null }[];
}

async function list(ctx: CommandContext): Promise<number> {
  const client = await operatorClient(ctx);
  const reply = await client.request("GET", "/workers/") as { workers: WorkerRow[] };
  if (ctx.json) {
    ctx.out.json({ workers: reply.workers });
    return 0;
  }
  if (reply.workers.length === 0) {
    ctx.out.line("no worker has registered with this run");
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const rows = [["NAME", "STATE", "RUNNING", "DONE", "HOST", "ADDRESS", "LAST SEEN", "ADAPTERS"]];
  for (const w of reply.workers) {
    rows.push([
      w.name,
      w.state,
      `${w.running}/${w.capacity}`,
      String(w.finished),
      w.host,
      w.address,
      w.last_seen.replace(/\.\d+Z$/, "Z"),
      w.adapters.map((a) => a.name).join(","),
    ]);
  }
  for (const line of alignColumns(rows)) ctx.out.line(line);
  return 0;
}

function setState(change: "cordon" | "uncordon" | "drain") {
  return async (ctx: CommandContext): Promise<number> => {
    const name = stringArg(ctx, "name") ?? "";
    const client = await operatorClient(ctx);
    const reply = await client.request(
      "POST",
      `/workers/${encodeURIComponent(name)}/${change}`,
      {},
    ) as { worker: WorkerRow };
    if (ctx.json) ctx.out.json({ worker: reply.worker });
    else {
      const what = change === "drain"
        ? "takes no new work and exits when its agents are done"
        : change === "cordon"
        ? "takes no new work (its agents go on)"
        : "takes work again";
      ctx.out.line(`worker ${name} ${what} (state ${reply.worker.state})`);
    }
    return 0;
  };
}

async function token(ctx: CommandContext): Promise<number> {
  const workers = await import("../workers/mod.ts");
  const { systemRandom, writeFileAtomic } = await import("../io/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const name = stringArg(ctx, "name") ?? "";
  const out = stringFlag(ctx, "out");
  // Refuse before minting: a new token would make the one already in FILE useless.
  if (out !== undefined && !booleanFlag(ctx, "force")) {
    const exists = await Deno.lstat(out).then(() => true, () => false);
    if (exists) {
      throw new UsageError("workers.token_file_exists", `${out} exists; refusing to overwrite it`, {
        location: "--out",
        hint: "choose another file, or pass --force",
      });
    }
  }
  const minted = await workers.mintWorkerToken(
    (await project(ctx)).sdd,
    name,
    systemRandom,
    new Date(),
  );
  if (out !== undefined) await writeFileAtomic(out, minted.token + "\n", { mode: 0o600 });
  if (ctx.json) {
    ctx.out.json({
      worker: name,
      token_file: out ?? null,
      ...(out ? {} : { token: minted.token }),
    });
  } else if (out !== undefined) {
    ctx.out.line(
      `token of worker ${name} written to ${out} (mode 0600); copy it to the worker's host`,
    );
  } else {
    ctx.out.line(minted.token);
    ctx.out.note(`note: this is the only copy of worker ${name}'s token; store it mode 0600`);
  }
  return 0;
}

async function revoke(ctx: CommandContext): Promise<number> {
  const workers = await import("../workers/mod.ts");
  const name = stringArg(ctx, "name") ?? "";
  const removed = await workers.revokeWorkerToken((await project(ctx)).sdd, name);
  if (ctx.json) ctx.out.json({ worker: name, revoked: removed });
  else {
    ctx.out.line(
      removed ? `worker ${name}'s token is revoked` : `worker ${name} had no token`,
    );
  }
  return 0;
}

/** `$XDG_STATE_HOME/bernstein/worker/<name>` (default `~/.local/state/…`). */
async function defaultDir(ctx: CommandContext, name: string): Promise<string> {
  const { join } = await import("node:path");
  const state = ctx.env.get("XDG_STATE_HOME") ??
    join(ctx.env.get("HOME") ?? ctx.cwd, ".local", "state");
  return join(state, "bernstein", "worker", name);
}

function hostName(): string {
  try {
    return Deno.hostname().replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "") ||
      "worker";
  } catch {
    return "worker";
  }
}

async function worker(ctx: CommandContext): Promise<number> {
  const { Worker } = await import("../workers/mod.ts");
  const server = await import("../server/mod.ts");
  const io = await import("../io/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const url = stringFlag(ctx, "server") ?? "";
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http");
  } catch {
    throw new UsageError("cli.bad_flag", `--server must be an http(s) URL, got '${url}'`, {
      location: "--server",
    });
  }
  const tokenFile = stringFlag(ctx, "token-file") ?? "";
  const secret = await server.readTokenFile(tokenFile);
  if (secret === undefined) {
    throw new UsageError("workers.token_missing", `${tokenFile} does not exist`, {
      location: "--token-file",
      hint: "on the orchestrator's host: bernstein workers token NAME --out FILE",
    });
  }
  const capacity = numberFlag(ctx, "capacity") ?? 1;
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > 256) {
    throw new UsageError("cli.bad_flag", `--capacity must be an integer from 1 to 256`, {
      location: "--capacity",
    });
  }
  const name = stringFlag(ctx, "name") ?? hostName();
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  for (const s of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(s, onSignal);
  try {
    const end = await new Worker({
      server: url,
      token: secret,
      name,
      capacity,
      dir: stringFlag(ctx, "dir") ?? await defaultDir(ctx, name),
      env: ctx.env,
      clock: io.systemClock,
      random: io.systemRandom,
      log: (line) => ctx.out.note(`[${new Date().toISOString()}] ${line}`),
      signal: stop.signal,
    }).run();
    if (ctx.json) ctx.out.json({ worker: name, end: end.reason, agents: end.ran });
    else ctx.out.line(`worker ${name} ${end.reason} after running ${end.ran} agent(s)`);
    return 0;
  } finally {
    for (const s of ["SIGINT", "SIGTERM"] as const) Deno.removeSignalListener(s, onSignal);
  }
}

const NAME_ARG = { name: "name", required: true, help: "worker name" };

/** `bernstein worker` and `bernstein workers …`. */
export const WORKERS_COMMANDS: CommandSpec[] = [
  {
    path: ["worker"],
    summary: "Run agents for an orchestrator on another host.",
    description:
      "Registers with the orchestrator at --server (its workers.listen address) using a worker\n" +
      "token, then runs up to --capacity agents at once: it fetches the base commit from the\n" +
      "orchestrator's git endpoint, runs the agent in its own worktree exactly as a local run\n" +
      "does, pushes agent/<session> back and reports the result with the agent's card. The\n" +
      "agent's lineage key is minted and kept on this host; the orchestrator asks this worker\n" +
      "to sign the entries of the files it merges. The orchestrator alone checks, merges and\n" +
      "records. Network failures are retried; SIGINT/SIGTERM stop it after reporting what its\n" +
      "agents did; `bernstein workers drain NAME` on the orchestrator makes it exit when idle.\n" +
      "Exit codes: 0 drained or stopped, 2 bad flags or token file, 1 the orchestrator refused it.\n" +
      "JSON (last line on stdout): {worker, end: drained|stopped, agents}; the log goes to stderr.",
    flags: [
      { name: "server", type: "string", valueName: "URL", help: "orchestrator URL (workers.url)" },
      {
        name: "token-file",
        type: "string",
        valueName: "FILE",
        help: "the worker token (mode 0600; from 'bernstein workers token')",
      },
      { name: "name", type: "string", valueName: "N", help: "worker name (default: host name)" },
      { name: "capacity", type: "number", valueName: "K", help: "agents at once (default 1)" },
      {
        name: "dir",
        type: "string",
        valueName: "DIR",
        help: "state folder (default $XDG_STATE_HOME/bernstein/worker/<name>)",
      },
    ],
    json: true,
    examples: [
      "bernstein worker --server http://10.0.0.1:7433 --token-file ~/.config/bernstein/worker.token --capacity 4",
    ],
    run: worker,
  },
  {
    path: ["workers", "token"],
    summary: "Mint the token a worker host uses (replaces an earlier one).",
    description:
      "Creates a token for worker NAME; only its digest is kept (.sdd/workers/NAME.json). With\n" +
      "--out the token is written to FILE (mode 0600, never over an existing file without\n" +
      "--force); otherwise it is printed once. A worker token can register, heartbeat, poll,\n" +
      "report results and use the git endpoint under its own name, nothing else.\n" +
      "JSON: {worker, token_file, token?} (token only when it was not written to a file).",
    args: [NAME_ARG],
    flags: [
      { name: "out", type: "string", valueName: "FILE", help: "write the token to FILE" },
      { name: "force", type: "boolean", help: "overwrite FILE" },
    ],
    json: true,
    run: token,
  },
  {
    path: ["workers", "revoke"],
    summary: "Revoke a worker's token (its next request gets 401).",
    description: "Deletes .sdd/workers/NAME.json. JSON: {worker, revoked}.",
    args: [NAME_ARG],
    json: true,
    run: revoke,
  },
  {
    path: ["workers", "list"],
    summary: "Workers of the running run: state, agents, host, adapters.",
    description: "Asks the running orchestrator (operator token from .sdd/runtime). JSON:\n" +
      "{workers:[{name, host, address, capacity, running, adapters, state, last_seen, finished}]};\n" +
      "state is ready, cordoned, draining or lost.",
    json: true,
    run: list,
  },
  {
    path: ["workers", "cordon"],
    summary: "Give a worker no new work; its running agents go on.",
    description:
      "Asks the running orchestrator (operator token). JSON: {worker: <as in workers list>}.",
    args: [NAME_ARG],
    json: true,
    run: setState("cordon"),
  },
  {
    path: ["workers", "uncordon"],
    summary: "Let a cordoned or draining worker take work again.",
    description:
      "Asks the running orchestrator (operator token). JSON: {worker: <as in workers list>}.",
    args: [NAME_ARG],
    json: true,
    run: setState("uncordon"),
  },
  {
    path: ["workers", "drain"],
    summary: "Give a worker no new work; it exits once its agents are done.",
    description:
      "Asks the running orchestrator (operator token). JSON: {worker: <as in workers list>}.",
    args: [NAME_ARG],
    json: true,
    run: setState("drain"),
  },
];
