// The desktop channel: a stub notify-send on PATH receives the title and body as plain argv
// words (shell syntax in agent text stays text), the session variables and nothing secret;
// a missing program or desktop session is one clear reason; macOS and Windows get their text
// as osascript arguments and PowerShell variables, never inside the script.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { mapEnv } from "../../src/io/mod.ts";
import { desktopChannel, desktopCommand, TOAST_TITLE_ENV } from "../../src/notify/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { notification } from "./_notification.ts";

const HOSTILE = `$(touch PWNED) \`touch PWNED\`; "quoted" 'single' & ampersand`;

async function stub(dir: string, exit = 0): Promise<{ path: string; log: string }> {
  const path = join(dir, "notify-send");
  const log = join(dir, "args.log");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${log}\nenv > ${log}.env\n` +
      (exit === 0 ? "" : `echo "Cannot connect to the notification server" >&2\nexit ${exit}\n`),
  );
  await Deno.chmod(path, 0o755);
  return { path, log };
}

Deno.test("notify-send gets the title and body as argv words; shell syntax in agent text stays text", async () => {
  await withTempDir(async (dir) => {
    const { path, log } = await stub(dir);
    const env = mapEnv({
      DISPLAY: ":0",
      PATH: "/usr/bin:/bin",
      BERNSTEIN_WEBHOOK_SECRET: "PLANTED-DESKTOP-SECRET",
    });
    const channel = await desktopChannel(new Set(["run.unhealthy"]), {
      os: "linux",
      env,
      find: (name) => Promise.resolve(name === "notify-send" ? path : undefined),
    });
    ok(!("skipped" in channel), JSON.stringify(channel));
    if ("skipped" in channel) return;
    const n = notification("run.unhealthy", "d1", { title: HOSTILE, text: `body ${HOSTILE}` });
    const result = await channel.send(n, new AbortController().signal);
    deepStrictEqual(result, { ok: true, status: "exit 0" });
    const args = (await Deno.readTextFile(log)).trimEnd().split("\n");
    deepStrictEqual(args, [
      "--app-name=bernstein",
      "--urgency=critical",
      "--",
      `bernstein: ${HOSTILE}`,
      `body ${HOSTILE}`,
    ]);
    const childEnv = await Deno.readTextFile(`${log}.env`);
    ok(childEnv.includes("DISPLAY=:0"), childEnv);
    ok(!childEnv.includes("PLANTED-DESKTOP-SECRET"), "no bernstein variable reaches it");
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    ok(!left.includes("PWNED"), left.join(","));
    strictEqual(channel.target, path);
  });
});

Deno.test("a notifier that fails is a final failure with its first stderr line", async () => {
  await withTempDir(async (dir) => {
    const { path } = await stub(dir, 3);
    const channel = await desktopChannel(new Set(), {
      os: "linux",
      env: mapEnv({ WAYLAND_DISPLAY: "wayland-0" }),
      find: () => Promise.resolve(path),
    });
    if ("skipped" in channel) throw new Error(channel.skipped);
    const result = await channel.send(
      notification("task.failed", "d2"),
      new AbortController().signal,
    );
    deepStrictEqual(result, {
      ok: false,
      retryable: false,
      status: "exit 3",
      error: "Cannot connect to the notification server",
    });
  });
});

Deno.test("no notifier program, or no desktop session: skipped with the reason", async () => {
  const missing = await desktopChannel(new Set(), {
    os: "linux",
    env: mapEnv({ DISPLAY: ":0" }),
    find: () => Promise.resolve(undefined),
  });
  deepStrictEqual(missing, { skipped: "notify-send is not on PATH" });
  const headless = await desktopChannel(new Set(), {
    os: "linux",
    env: mapEnv({}),
    find: () => Promise.resolve("/usr/bin/notify-send"),
  });
  ok(
    "skipped" in headless && /no desktop session/.test(headless.skipped),
    JSON.stringify(headless),
  );
  const mac = await desktopChannel(new Set(), {
    os: "darwin",
    env: mapEnv({}),
    find: () => Promise.resolve(undefined),
  });
  deepStrictEqual(mac, { skipped: "osascript is not on PATH" });
});

Deno.test("osascript and the PowerShell toast carry agent text as arguments and variables, not script", () => {
  const n = notification("task.failed", "d3", { title: `"); do shell script "touch PWNED` });
  const mac = desktopCommand("darwin", n);
  const script = mac.args.filter((_, i) => mac.args[i - 1] === "-e").join("\n");
  ok(!script.includes("PWNED"), script);
  deepStrictEqual(mac.args.slice(-2), [`bernstein: ${n.title}`, "text of d3"]);
  const win = desktopCommand("windows", n);
  ok(!win.args.join(" ").includes("PWNED"), win.args.join(" "));
  strictEqual(win.env[TOAST_TITLE_ENV], `bernstein: ${n.title}`);
});
