// Linux network namespaces for the multi-host tests: one bridge in the test's own namespace
// (the orchestrator's "host") and one namespace per worker "host", each joined to the bridge by
// a veth pair, with addresses that exist only inside this set-up. Created by the test, removed
// by it (with every process left in the worker namespaces).
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";

async function ip(args: string[]): Promise<{ ok: boolean; err: string }> {
  try {
    const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
    return { ok: out.success, err: new TextDecoder().decode(out.stderr).trim() };
  } catch (error) {
    return { ok: false, err: (error as Error).message };
  }
}

async function must(args: string[]): Promise<void> {
  const r = await ip(args);
  if (!r.ok) throw new Error(`ip ${args.join(" ")}: ${r.err}`);
}

let counter = 0;

/** Why the namespace tests cannot run here, or undefined when they can. */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "network namespaces are Linux only";
  let uid: number | null = null;
  try {
    uid = Deno.uid();
  } catch {
    // unknown
  }
  if (uid !== 0) return "creating network namespaces needs root";
  const probe = `bnprobe${Deno.pid % 100000}`;
  const made = await ip(["netns", "add", probe]);
  if (!made.ok) {
    return made.err.includes("No such file") || made.err.includes("not found")
      ? "the ip command (iproute2) is missing"
      : `ip netns add failed: ${made.err.split("\n")[0]}`;
  }
  await ip(["netns", "del", probe]);
  return undefined;
}

/** Worker hosts behind a bridge; the orchestrator's address is `hostAddress`. */
export class HostNet {
  /** The orchestrator's address on the bridge. */
  readonly hostAddress: string;
  /** `10.a.b.0/24`. */
  readonly cidr: string;
  readonly #tag: string;
  readonly #prefix: string;
  readonly #hosts: number;

  private constructor(tag: string, prefix: string, hosts: number) {
    this.#tag = tag;
    this.#prefix = prefix;
    this.#hosts = hosts;
    this.hostAddress = `${prefix}.1`;
    this.cidr = `${prefix}.0/24`;
  }

  /** Creates the bridge and `hosts` namespaces (removed by {@linkcode close}). */
  static async create(hosts: number): Promise<HostNet> {
    const n = ++counter;
    const tag = `${Deno.pid % 10000}${n}`;
    const prefix = `10.${100 + ((Deno.pid + n * 7) % 150)}.${(Deno.pid >> 3) % 250}`;
    const net = new HostNet(tag, prefix, hosts);
    try {
      await net.#build();
    } catch (error) {
      await net.close();
      throw error;
    }
    return net;
  }

  /** Namespace of worker host `i` (1-based). */
  ns(i: number): string {
    return `bn${this.#tag}h${i}`;
  }

  /** Address of worker host `i`. */
  address(i: number): string {
    return `${this.#prefix}.${10 + i}`;
  }

  #bridge(): string {
    return `bb${this.#tag}`;
  }

  #outer(i: number): string {
    return `bv${this.#tag}${i}a`;
  }

  async #build(): Promise<void> {
    const br = this.#bridge();
    await must(["link", "add", br, "type", "bridge"]);
    await must(["addr", "add", `${this.hostAddress}/24`, "dev", br]);
    await must(["link", "set", br, "up"]);
    for (let i = 1; i <= this.#hosts; i++) {
      const ns = this.ns(i);
      const outer = this.#outer(i);
      const inner = `bv${this.#tag}${i}b`;
      await must(["netns", "add", ns]);
      await must(["-n", ns, "link", "set", "lo", "up"]);
      await must(["link", "add", outer, "type", "veth", "peer", "name", inner]);
      await must(["link", "set", inner, "netns", ns]);
      await must(["link", "set", outer, "master", br]);
      await must(["link", "set", outer, "up"]);
      await must(["-n", ns, "addr", "add", `${this.address(i)}/24`, "dev", inner]);
      await must(["-n", ns, "link", "set", inner, "up"]);
    }
  }

  /** Takes host `i`'s link down (its processes keep running, unreachable). */
  async linkDown(i: number): Promise<void> {
    await must(["link", "set", this.#outer(i), "down"]);
  }

  /** Brings host `i`'s link back. */
  async linkUp(i: number): Promise<void> {
    await must(["link", "set", this.#outer(i), "up"]);
  }

  /** Kills every process in host `i`'s namespace. */
  async killAll(i: number): Promise<void> {
    const out = await new Deno.Command("ip", {
      args: ["netns", "pids", this.ns(i)],
      stdout: "piped",
      stderr: "null",
    }).output();
    for (const pid of new TextDecoder().decode(out.stdout).split(/\s+/).filter(Boolean)) {
      try {
        Deno.kill(Number(pid), "SIGKILL");
      } catch {
        // gone
      }
    }
  }

  /** Removes everything it made (processes in the namespaces are killed first). */
  async close(): Promise<void> {
    for (let i = 1; i <= this.#hosts; i++) {
      await this.killAll(i).catch(() => {});
      await ip(["netns", "del", this.ns(i)]);
      await ip(["link", "del", this.#outer(i)]);
    }
    await ip(["link", "del", this.#bridge()]);
  }

  /** argv that runs `bernstein ARGS` from this checkout on host `i`. */
  bernsteinOn(i: number, args: string[]): string[] {
    return [
      "ip",
      "netns",
      "exec",
      this.ns(i),
      Deno.execPath(),
      "run",
      "-q",
      "--frozen",
      `--config=${join(REPO_ROOT, "deno.json")}`,
      "-P=bernstein",
      join(REPO_ROOT, "main.ts"),
      ...args,
    ];
  }
}

interface Waiter {
  match: (line: string) => boolean;
  resolve: (line: string) => void;
}

/** A child process whose output lines can be waited for. */
export class Watched {
  readonly child: Deno.ChildProcess;
  readonly lines: string[] = [];
  readonly errLines: string[] = [];
  readonly done: Promise<Deno.CommandStatus>;
  #waiters: Waiter[] = [];

  constructor(argv: string[], options: { cwd?: string; env: Record<string, string> }) {
    this.child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: options.cwd,
      env: options.env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const out = this.#pump(this.child.stdout, this.lines, true);
    const err = this.#pump(this.child.stderr, this.errLines, false);
    this.done = Promise.all([out, err]).then(() => this.child.status);
  }

  async #pump(stream: ReadableStream<Uint8Array>, into: string[], watch: boolean): Promise<void> {
    let pending = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        into.push(line);
        if (watch) this.#tell(line);
      }
    }
  }

  #tell(line: string): void {
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.match(line)) w.resolve(line);
      else still.push(w);
    }
    this.#waiters = still;
  }

  /** The first stdout line (seen or to come) that matches; rejects if the process ends first. */
  waitFor(match: (line: string) => boolean): Promise<string> {
    const seen = this.lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ match, resolve });
      this.done.then(() => {
        const late = this.lines.find(match);
        if (late !== undefined) resolve(late);
        else reject(new Error(`ended before the awaited line:\n${this.errLines.join("\n")}`));
      });
    });
  }

  /** JSON events of stdout. */
  events(): { type: string; [key: string]: unknown }[] {
    return this.lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  }
}
