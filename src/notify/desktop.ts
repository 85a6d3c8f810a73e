/**
 * The desktop channel: a notification on this machine's desktop through the system's own
 * program — `notify-send` (Linux and other Unix desktops), `osascript` (macOS), a PowerShell
 * toast (Windows). Text goes in as argv words or environment values, never spliced into a
 * script. Where the program or a desktop session is missing the channel is not created and the
 * run says so once at its start.
 */
import { buildChildEnv, type EnvReader, outputText, runProcess } from "../io/mod.ts";
import type { Channel } from "./channel.ts";
import type { Notification, Severity } from "./events.ts";
import { desktopText } from "./render.ts";

/** Finds a program on PATH (the adapters' lookup, injected). */
export type FindProgram = (name: string) => Promise<string | undefined>;

/** The operating system, as `Deno.build.os` names it. */
export type OsName = typeof Deno.build.os;

/** Variables a desktop notifier needs to reach the session (and nothing else). */
export const DESKTOP_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "DBUS_SESSION_BUS_ADDRESS",
  "XDG_RUNTIME_DIR",
  "SYSTEMROOT",
  "USERPROFILE",
];

/** Variables through which the PowerShell toast gets its text. */
export const TOAST_TITLE_ENV = "BERNSTEIN_NOTIFY_TITLE";
/** See {@linkcode TOAST_TITLE_ENV}. */
export const TOAST_BODY_ENV = "BERNSTEIN_NOTIFY_BODY";

const OSASCRIPT = [
  "-e",
  "on run argv",
  "-e",
  "display notification (item 2 of argv) with title (item 1 of argv)",
  "-e",
  "end run",
];

const TOAST_SCRIPT = [
  "$ErrorActionPreference = 'Stop'",
  "[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null",
  "$x = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)",
  "$t = $x.GetElementsByTagName('text')",
  `$t.Item(0).AppendChild($x.CreateTextNode($env:${TOAST_TITLE_ENV})) > $null`,
  `$t.Item(1).AppendChild($x.CreateTextNode($env:${TOAST_BODY_ENV})) > $null`,
  "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('bernstein').Show([Windows.UI.Notifications.ToastNotification]::new($x))",
].join("; ");

const URGENCY: Readonly<Record<Severity, string>> = {
  info: "low",
  warning: "normal",
  critical: "critical",
};

/** The program a desktop notification uses on `os`. */
export function desktopProgram(os: OsName): string {
  if (os === "darwin") return "osascript";
  if (os === "windows") return "powershell";
  return "notify-send";
}

/** argv (after the program) and extra environment of one desktop notification. */
export function desktopCommand(
  os: OsName,
  n: Notification,
): { args: string[]; env: Record<string, string> } {
  const { title, body } = desktopText(n);
  if (os === "darwin") return { args: [...OSASCRIPT, title, body], env: {} };
  if (os === "windows") {
    return {
      args: ["-NoProfile", "-NonInteractive", "-Command", TOAST_SCRIPT],
      env: { [TOAST_TITLE_ENV]: title, [TOAST_BODY_ENV]: body },
    };
  }
  return {
    args: ["--app-name=bernstein", `--urgency=${URGENCY[n.severity]}`, "--", title, body],
    env: {},
  };
}

/** Whether this machine has a desktop session to show notifications in, or why not. */
export function desktopSession(os: OsName, env: EnvReader): string | undefined {
  if (os === "darwin" || os === "windows") return undefined;
  const reachable = ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"]
    .some((name) => (env.get(name) ?? "") !== "");
  return reachable ? undefined : "no desktop session (DISPLAY, WAYLAND_DISPLAY and " +
    "DBUS_SESSION_BUS_ADDRESS are unset)";
}

/**
 * The desktop channel, or the one-line reason it is skipped (program missing, no session).
 */
export async function desktopChannel(
  events: ReadonlySet<string>,
  parts: { os: OsName; env: EnvReader; find: FindProgram },
): Promise<Channel | { skipped: string }> {
  const program = desktopProgram(parts.os);
  const path = await parts.find(program);
  if (path === undefined) return { skipped: `${program} is not on PATH` };
  const noSession = desktopSession(parts.os, parts.env);
  if (noSession !== undefined) return { skipped: noSession };
  return {
    name: "desktop",
    target: path,
    events,
    async send(n, signal) {
      const { args, env } = desktopCommand(parts.os, n);
      const result = await runProcess([path, ...args], {
        env: buildChildEnv(DESKTOP_ENV, parts.env, env),
        signal,
        killGraceMs: 500,
        maxCaptureBytes: 4096,
      });
      if (result.code === 0) return { ok: true, status: "exit 0" };
      const said = outputText(result.stderr).trim().split("\n")[0]?.slice(0, 200) ?? "";
      return {
        ok: false,
        retryable: false,
        status: `exit ${result.code}`,
        error: said === "" ? `${program} failed` : said,
      };
    },
  };
}
