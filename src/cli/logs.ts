// `bernstein logs`: agents' output logs (.sdd/runtime/<session>.log). One target prints that
// log as it is; several (or none: every agent of the run) print each line behind its task's
// prefix, and `-f` keeps following — including the sessions of retries that start meanwhile —
// until the run has ended and every log is drained.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, stringsArg } from "./spec.ts";
import { sessionLayout } from "../io/mod.ts";

/** How often `-f` looks for new output (a file read per session; never faster). */
const FOLLOW_INTERVAL_MS = 500;

const PREFIX_COLORS = [36, 33, 35, 32, 34, 31];

interface Followed {
  session: string;
  path: string;
  offset: number;
  prefixer: { feed(text: string): string; flush(): string } | undefined;
  decoder: TextDecoder;
}

async function readNew(f: Followed): Promise<Uint8Array> {
  const { readUpTo } = await import("../io/mod.ts");
  let file: Deno.FsFile;
  try {
    file = await Deno.open(f.path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return new Uint8Array();
    throw error;
  }
  try {
    const size = (await file.stat()).size;
    if (size <= f.offset) return new Uint8Array();
    await file.seek(f.offset, Deno.SeekMode.Start);
    const bytes = await readUpTo(file, size - f.offset);
    f.offset += bytes.length;
    return bytes;
  } finally {
    file.close();
  }
}

async function logs(ctx: CommandContext): Promise<number> {
  const { findProject } = await import("../config/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const { BernsteinError } = await import("../errors/mod.ts");
  const { LinePrefixer, logPrefix, terminalSafe } = await import("../report/mod.ts");
  const project = await findProject(ctx.cwd);
  const targets = stringsArg(ctx, "target");
  const follow = booleanFlag(ctx, "follow");
  const run = await orchestrator.readCurrentRun(project.sdd);
  const wanted = (s: { session: string; task_id: string }) =>
    targets.length === 0 || targets.includes(s.session) || targets.includes(s.task_id);
  const initial = (await orchestrator.listSessionFiles(project.sdd)).filter(wanted);
  const unknown = targets.filter((t) => !initial.some((s) => s.session === t || s.task_id === t));
  if (initial.length === 0 || (unknown.length > 0 && !follow)) {
    throw new BernsteinError(
      "logs.not_found",
      targets.length === 0
        ? "no agent session in this project yet"
        : `no agent session or task '${unknown[0] ?? targets[0]}'`,
      { hint: "'bernstein ps --all' lists sessions" },
    );
  }
  // One target and one session: the log as it is. Otherwise every line says whose it is.
  const prefixed = !(targets.length === 1 && initial.length === 1);
  const followed = new Map<string, Followed>();
  const labelWidth = Math.max(
    ...initial.map((s) => logPrefix(s.task_id, attemptOf(s.session)).length),
  );
  // Agents' bytes may hold terminal escapes: prefixed lines on a terminal are cleaned.
  const clean = ctx.out.stdout.isTerminal ? terminalSafe : undefined;
  const adopt = (s: { session: string; task_id: string }) => {
    if (followed.has(s.session)) return;
    const label = logPrefix(s.task_id, attemptOf(s.session)).padEnd(labelWidth);
    const color = PREFIX_COLORS[followed.size % PREFIX_COLORS.length];
    const prefix = ctx.out.color ? `\x1b[${color}m${label}\x1b[39m` : label;
    followed.set(s.session, {
      session: s.session,
      path: sessionLayout(project.sdd, s.session).logPath,
      offset: 0,
      prefixer: prefixed ? new LinePrefixer(prefix, clean) : undefined,
      decoder: new TextDecoder(),
    });
  };
  for (const s of initial) adopt(s);
  const write = (text: string) => {
    if (text !== "") ctx.out.stdout.write(text);
  };
  for (;;) {
    let got = 0;
    for (const f of followed.values()) {
      const bytes = await readNew(f);
      got += bytes.length;
      const text = f.decoder.decode(bytes, { stream: true });
      write(f.prefixer ? f.prefixer.feed(text) : text);
    }
    if (!follow) break;
    const sessions = await orchestrator.listSessionFiles(project.sdd);
    for (const s of sessions.filter(wanted)) adopt(s);
    const mine = sessions.filter((s) => followed.has(s.session));
    const live = mine.some((s) => s.state === "running" && orchestrator.processAlive(s.pid));
    const current = await orchestrator.readCurrentRun(project.sdd);
    const runAlive = current !== undefined && current.run_id === run?.run_id &&
      current.status === "running" && orchestrator.processAlive(current.pid);
    // Keep following while an agent writes, or while the run may still start a retry.
    if (!live && !runAlive && got === 0) break;
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
  }
  for (const f of followed.values()) {
    const tail = f.decoder.decode();
    write(f.prefixer ? f.prefixer.feed(tail) + f.prefixer.flush() : tail);
  }
  return 0;
}

/** The attempt number in a session id (`<task>-a<N>-<run tag>`), 1 when it has none. */
function attemptOf(session: string): number {
  const m = /-a(\d+)-[^-]+$/.exec(session);
  return m ? Number(m[1]) : 1;
}

/** `bernstein logs`. */
export const LOGS_COMMANDS: CommandSpec[] = [
  {
    path: ["logs"],
    summary: "Print agents' output logs (by task id or session); -f follows them.",
    description:
      "With one target that names one session, its log is printed as it is. With several\n" +
      "targets, a task with several attempts, or no target (every agent of the project's\n" +
      "sessions), each line is prefixed with its task id ('task#2' for a retry).\n" +
      "-f keeps printing, picks up the retries of followed tasks as they start, and ends when\n" +
      "the run has ended and every log is drained.",
    args: [{
      name: "target",
      variadic: true,
      help: "Task ids or sessions (default: every agent session).",
    }],
    flags: [{
      name: "follow",
      short: "f",
      type: "boolean",
      help: "Keep printing while the run goes on.",
    }],
    examples: ["bernstein logs 1.1-add-the-greeting-module", "bernstein logs -f"],
    run: logs,
  },
];
