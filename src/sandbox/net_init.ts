// The first process inside a Linux sandbox (`bernstein __sandbox-init …`): the sandbox has its
// own network namespace with nothing but loopback, so this process gives the agent its way out.
// It listens on the loopback ports the agent was told about (the task server, a local model
// server) and tunnels each connection to the egress proxy's socket, and it offers a proxy port
// whose bytes go to the proxy unchanged (HTTP(S)_PROXY points there). Then it starts the agent,
// hands it stdin/stdout/stderr, and exits with the agent's status.
// Only _wire.ts: this module graph is what every agent's sandbox loads before the agent starts
// (main.ts imports this file alone), so it stays free of node: modules (node:path alone costs
// ~8 ms of CPU per start) and of the rest of the sandbox folder.
import {
  closeQuietly,
  type Conn,
  DIRECT_FORWARD_HEADER,
  pipeInto,
  readHead,
  responseStatus,
  splitHostPort,
  writeFully,
} from "./_wire.ts";

/** The hidden command name main.ts dispatches to {@linkcode runSandboxInit}. */
export const SANDBOX_INIT_COMMAND = "__sandbox-init";

/** What the init process does. */
export interface SandboxInitArgs {
  /** The egress proxy's socket inside the sandbox. */
  socket: string;
  /** Loopback `host:port`s forwarded to the proxy as tunnels. */
  forwards: { host: string; port: number }[];
  /** The proxy port on 127.0.0.1 (HTTP(S)_PROXY), if any. */
  proxyPort: number | null;
  /** The agent's command. */
  command: string[];
}

/** The init's arguments, in the order {@linkcode parseSandboxInitArgs} reads them. */
export function sandboxInitArgv(args: SandboxInitArgs): string[] {
  return [
    SANDBOX_INIT_COMMAND,
    "--socket",
    args.socket,
    ...args.forwards.flatMap((f) => [
      "--forward",
      `${f.host.includes(":") ? `[${f.host}]` : f.host}:${f.port}`,
    ]),
    ...(args.proxyPort === null ? [] : ["--proxy-port", String(args.proxyPort)]),
    "--",
    ...args.command,
  ];
}

/** Parses `--socket P [--forward H:P]… [--proxy-port N] -- command…`. */
export function parseSandboxInitArgs(argv: readonly string[]): SandboxInitArgs {
  const out: SandboxInitArgs = { socket: "", forwards: [], proxyPort: null, command: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${a} needs a value`);
    if (a === "--socket") out.socket = value;
    else if (a === "--forward") {
      const hp = splitHostPort(value, 0);
      if (hp === undefined || hp.port === 0) throw new Error(`--forward ${value}: not host:port`);
      out.forwards.push(hp);
    } else if (a === "--proxy-port") {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--proxy-port ${value}`);
      out.proxyPort = n;
    } else throw new Error(`unknown argument ${a}`);
    i++;
  }
  out.command = argv.slice(i + 1);
  if (out.socket === "") throw new Error("--socket is required");
  if (out.command.length === 0) throw new Error("no command after --");
  return out;
}

function listenAll(
  hosts: readonly string[],
  port: number,
  serve: (c: Conn) => Promise<void>,
): Deno.Listener[] {
  const listeners: Deno.Listener[] = [];
  for (const hostname of hosts) {
    try {
      listeners.push(Deno.listen({ hostname, port }));
    } catch {
      // No IPv6 loopback in this namespace: IPv4 is enough.
    }
  }
  for (const listener of listeners) {
    (async () => {
      for await (const conn of listener) {
        serve(conn).finally(() => closeQuietly(conn));
      }
    })().catch(() => {});
  }
  return listeners;
}

async function tunnel(client: Conn, socket: string, target: string): Promise<void> {
  let proxy: Conn | undefined;
  try {
    proxy = await Deno.connect({ transport: "unix", path: socket });
    await writeFully(
      proxy,
      new TextEncoder().encode(
        `CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n${DIRECT_FORWARD_HEADER}: direct\r\n\r\n`,
      ),
    );
    const answer = await readHead(proxy);
    if (answer === undefined || responseStatus(answer.head) !== 200) return;
    if (answer.rest.length > 0) await writeFully(client, answer.rest);
    await Promise.all([pipeInto(client, proxy), pipeInto(proxy, client)]);
  } catch {
    // The proxy refused or went away: the agent sees a closed connection.
  } finally {
    closeQuietly(proxy);
  }
}

async function passThrough(client: Conn, socket: string): Promise<void> {
  let proxy: Conn | undefined;
  try {
    proxy = await Deno.connect({ transport: "unix", path: socket });
    await Promise.all([pipeInto(client, proxy), pipeInto(proxy, client)]);
  } catch {
    // As above.
  } finally {
    closeQuietly(proxy);
  }
}

/**
 * Runs the init: listeners first (so the agent never races them), then the agent with this
 * process's stdio and environment. Returns the exit code to leave with (128 + signal number
 * when the agent was killed). SIGTERM/SIGINT are passed on; the init stays until the agent ends.
 */
export async function runSandboxInit(argv: readonly string[]): Promise<number> {
  let args: SandboxInitArgs;
  try {
    args = parseSandboxInitArgs(argv);
  } catch (error) {
    console.error(`bernstein sandbox init: ${(error as Error).message}`);
    return 125;
  }
  for (const f of args.forwards) {
    const target = `${f.host.includes(":") ? `[${f.host}]` : f.host}:${f.port}`;
    const hosts = f.host === "::1" ? ["::1"] : ["127.0.0.1", "::1"];
    listenAll(hosts, f.port, (c) => tunnel(c, args.socket, target));
  }
  if (args.proxyPort !== null) {
    listenAll(["127.0.0.1"], args.proxyPort, (c) => passThrough(c, args.socket));
  }
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(args.command[0], {
      args: args.command.slice(1),
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (error) {
    console.error(
      `bernstein sandbox: cannot start ${args.command[0]}: ${(error as Error).message}`,
    );
    return error instanceof Deno.errors.NotFound ? 127 : 126;
  }
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    Deno.addSignalListener(signal, () => {
      try {
        child.kill(signal);
      } catch {
        // Already gone.
      }
    });
  }
  const status = await child.status;
  return status.signal === null ? status.code : 128 + signalNumber(status.signal);
}

function signalNumber(signal: Deno.Signal): number {
  const numbers: Partial<Record<Deno.Signal, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGABRT: 6,
    SIGKILL: 9,
    SIGSEGV: 11,
    SIGPIPE: 13,
    SIGALRM: 14,
    SIGTERM: 15,
  };
  return numbers[signal] ?? 1;
}
