/**
 * The `bernstein` command line: the command table, help, argument parsing and the one place
 * where errors become `error[code]: …` lines and exit codes.
 *
 * @example
 * ```ts ignore
 * import { main } from "./mod.ts";
 * Deno.exit(await main(Deno.args));
 * ```
 *
 * @module
 */
import { BernsteinError, ExitCode, isStorageFailure } from "../errors/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import { MAIN_BINARY, VERSION } from "../meta/mod.ts";
import { COMMANDS, GROUPS } from "./commands.ts";
import { commandHelp, groupHelp, markdownReference, rootHelp } from "./help.ts";
import { Output } from "./output.ts";
import { resolveCommand } from "./resolve.ts";

export { COMMANDS, GROUPS } from "./commands.ts";
export { markdownReference } from "./help.ts";
export { BufferSink, Output } from "./output.ts";

/** What {@linkcode main} runs against; tests pass buffers and a fake environment. */
interface MainDeps {
  /** Output streams. */
  out: Output;
  /** Environment; the process environment when absent. */
  env?: EnvReader;
  /** Working directory. */
  cwd: string;
}

function defaultDeps(): MainDeps {
  return { out: Output.system(), cwd: Deno.cwd() };
}

/** Renders an unexpected error; permission errors get a readable message. */
function internalError(error: unknown, out: Output, debug: boolean): number {
  if (error instanceof Deno.errors.NotCapable) {
    out.error(new BernsteinError("permission.denied", (error as Error).message.split("\n")[0]));
  } else if (isStorageFailure(error)) {
    // Disk full or a read-only folder: the machine's state, not a bug.
    out.error(
      new BernsteinError("storage.failed", (error as Error).message.split("\n")[0], {
        hint: "free space or make the folder writable, then run the command again",
      }),
    );
  } else {
    const message = error instanceof Error ? error.message : String(error);
    out.error(
      new BernsteinError("internal", message.split("\n")[0], {
        hint: debug ? undefined : "rerun with --debug for the stack",
      }),
    );
  }
  if (debug && error instanceof Error && error.stack) out.note(error.stack);
  return ExitCode.failed;
}

/** Runs `bernstein` with `argv` and returns the exit code. */
export async function main(
  argv: readonly string[],
  deps: MainDeps = defaultDeps(),
): Promise<number> {
  const { out } = deps;
  const debug = argv.includes("--debug");
  let args = [...argv];
  if (args[0] === "-g" || args[0] === "--goal") args = ["run", ...args];
  try {
    if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
      out.line(`${MAIN_BINARY} ${VERSION}`);
      return 0;
    }
    const resolution = resolveCommand(args, COMMANDS, GROUPS);
    if (resolution.kind === "root") {
      const rest = resolution.rest.filter((a) => a !== "--debug");
      if (rest.length === 0 || rest.includes("--help") || rest.includes("-h")) {
        out.line(rootHelp(COMMANDS, GROUPS));
        return rest.length === 0 ? ExitCode.usage : 0;
      }
      if (rest.includes("--markdown-reference")) {
        out.stdout.write(markdownReference(COMMANDS, GROUPS));
        return 0;
      }
      throw new (await import("../errors/mod.ts")).UsageError(
        "cli.unknown_flag",
        `unknown flag '${rest[0]}'`,
        {
          hint: "run 'bernstein --help'",
        },
      );
    }
    if (resolution.kind === "group") {
      out.line(groupHelp(resolution.group, COMMANDS));
      const asked = resolution.rest.includes("--help") || resolution.rest.includes("-h");
      return asked ? 0 : ExitCode.usage;
    }
    // node:util costs several ms to load, so help and --version never pay for it.
    const { parseInvocation } = await import("./parse.ts");
    const parsed = parseInvocation(resolution.spec, resolution.rest);
    if (parsed.flags.help === true) {
      out.line(commandHelp(resolution.spec));
      return 0;
    }
    return await resolution.spec.run({
      ...parsed,
      out,
      // Loaded only for commands: help and --version never pay for the I/O module.
      env: deps.env ?? (await import("../io/mod.ts")).processEnv,
      cwd: deps.cwd,
      debug,
      json: parsed.flags.json === true,
    });
  } catch (error) {
    if (error instanceof BernsteinError) {
      out.error(error);
      if (debug && error.stack) out.note(error.stack);
      return error.exitCode;
    }
    return internalError(error, out, debug);
  }
}
