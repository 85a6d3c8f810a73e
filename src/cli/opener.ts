// Opens a file or URL with the desktop's opener (`xdg-open`, macOS `open`, Windows `start`),
// or the command in BERNSTEIN_OPENER. Unlike agents' processes, the opener inherits the whole
// environment on purpose: it is the operator's own desktop session, and a browser needs
// DISPLAY, WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS … that bernstein itself may not read.
import type { EnvReader } from "../io/mod.ts";

/** The env variable naming an opener command (one word: a program taking the target). */
export const OPENER_ENV = "BERNSTEIN_OPENER";

function openerArgv(target: string, env: EnvReader): string[] {
  const custom = env.get(OPENER_ENV);
  if (custom !== undefined && custom !== "") return [custom, target];
  switch (Deno.build.os) {
    case "darwin":
      return ["open", target];
    case "windows":
      return ["cmd", "/c", "start", '""', target];
    default:
      return ["xdg-open", target];
  }
}

/**
 * Starts the opener on `target` and waits for it (openers return at once). Returns an error
 * message when it could not start or failed, undefined on success.
 */
export async function openExternal(target: string, env: EnvReader): Promise<string | undefined> {
  const [program, ...args] = openerArgv(target, env);
  try {
    const out = await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.code === 0) return undefined;
    const why = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
    return `${program} exited ${out.code}${why ? `: ${why}` : ""}`;
  } catch (error) {
    return `${program} could not start: ${(error as Error).message}`;
  }
}
