// The sandbox plans as data: the Linux mount plan and bwrap command line, the macOS profile
// text, the isolation decision and the sandbox init's arguments, tested on their output.
import assert from "node:assert/strict";
import {
  bwrapArgv,
  decideIsolation,
  linuxMountPlan,
  macSandboxProfile,
  type MountOp,
  nodePrefix,
  parseSandboxInitArgs,
  probeSandbox,
  proxiedEnv,
  SANDBOX_PROXY_SOCKET,
  sandboxInitArgv,
  type SandboxSpec,
  shebangInterpreter,
  upstreamProxy,
} from "../../src/sandbox/mod.ts";

const SPEC: SandboxSpec = {
  worktree: "/p/.sdd/worktrees/s1",
  home: "/p/.sdd/runtime/homes/s1",
  gitDir: "/p/.git",
  gitConfigCopy: "/priv/s1.gitconfig",
  system: [
    { path: "/usr", kind: "dir" },
    { path: "/bin", kind: "symlink", target: "usr/bin" },
    { path: "/etc", kind: "dir" },
  ],
  systemSecrets: [{ path: "/etc/shadow", kind: "file" }, { path: "/etc/ssh", kind: "dir" }],
  readOnly: ["/home/me/.cache/deno", "/opt/tools", "/usr/local/lib", "/p/.sdd/keys"],
  hidden: [
    { path: "/p", kind: "dir", strict: false },
    { path: "/p/.sdd", kind: "dir", strict: true },
    { path: "/home/me/.local/state/bernstein/audit.key", kind: "file", strict: true },
  ],
  proxySocket: "/priv/e1.sock",
};

function visibleAt(mounts: readonly MountOp[], path: string): MountOp | undefined {
  // The deepest mount covering `path` decides what the agent sees there (mounts run in order).
  let last: MountOp | undefined;
  for (const m of mounts) {
    if (path === m.dest || path.startsWith(m.dest + "/")) last = m;
  }
  return last;
}

Deno.test("linux plan: worktree and HOME writable, git read-only, .sdd and key files hidden", () => {
  const { mounts, dropped } = linuxMountPlan(SPEC);
  assert.deepEqual(visibleAt(mounts, "/p/.sdd/worktrees/s1/src/a.ts"), {
    kind: "bind",
    src: "/p/.sdd/worktrees/s1",
    dest: "/p/.sdd/worktrees/s1",
  });
  assert.equal(visibleAt(mounts, "/p/.sdd/runtime/homes/s1/.claude")?.kind, "bind");
  assert.equal(visibleAt(mounts, "/p/.git/objects")?.kind, "ro-bind");
  assert.deepEqual(visibleAt(mounts, "/p/.git/config"), {
    kind: "ro-bind",
    src: "/priv/s1.gitconfig",
    dest: "/p/.git/config",
  });
  // Nothing of .sdd but the two binds: not the keys, tokens, audit, other worktrees.
  for (const path of ["/p/.sdd/keys/operator.key", "/p/.sdd/runtime/auth.token"]) {
    assert.equal(visibleAt(mounts, path), undefined, path);
  }
  assert.equal(visibleAt(mounts, "/p/.sdd/worktrees/s2/x"), undefined);
  assert.equal(visibleAt(mounts, "/p/README.md"), undefined, "the main checkout is not shown");
  assert.equal(visibleAt(mounts, "/home/me/.ssh/id_ed25519"), undefined);
  assert.equal(visibleAt(mounts, "/home/me/.cache/deno/npm")?.kind, "ro-bind");
  // A read-only path inside the strictly hidden .sdd is dropped, never shown.
  assert.deepEqual(dropped, ["/p/.sdd/keys"]);
  assert.equal(visibleAt(mounts, "/p/.sdd/keys/x"), undefined);
  // /usr/local/lib is inside /usr: no second mount.
  assert.equal(mounts.filter((m) => m.dest === "/usr/local/lib").length, 0);
  assert.equal(visibleAt(mounts, "/etc/shadow")?.kind, "mask-file");
  assert.equal(visibleAt(mounts, "/etc/ssh/ssh_host_ed25519_key")?.kind, "tmpfs");
  assert.equal(visibleAt(mounts, "/etc/passwd")?.kind, "ro-bind");
  assert.equal(visibleAt(mounts, "/tmp/marker")?.kind, "tmpfs", "a private /tmp");
  assert.deepEqual(visibleAt(mounts, SANDBOX_PROXY_SOCKET), {
    kind: "bind",
    src: "/priv/e1.sock",
    dest: SANDBOX_PROXY_SOCKET,
  });
});

Deno.test("linux plan: a hidden path inside a shown folder is masked; a loose one lets tools through", () => {
  const spec: SandboxSpec = {
    ...SPEC,
    // The project lives under a shown system folder, bernstein's checkout inside the project.
    worktree: "/opt/p/.sdd/worktrees/s1",
    home: "/opt/p/.sdd/runtime/homes/s1",
    gitDir: "/opt/p/.git",
    readOnly: ["/opt/p/tools/bernstein"],
    hidden: [
      { path: "/opt/p", kind: "dir", strict: false },
      { path: "/opt/p/.sdd", kind: "dir", strict: true },
    ],
    system: [{ path: "/opt", kind: "dir" }],
  };
  const { mounts, dropped } = linuxMountPlan(spec);
  assert.deepEqual(dropped, []);
  assert.equal(visibleAt(mounts, "/opt/p/secret.env")?.kind, "tmpfs");
  assert.equal(visibleAt(mounts, "/opt/p/tools/bernstein/main.ts")?.kind, "ro-bind");
  assert.equal(visibleAt(mounts, "/opt/p/.sdd/audit/x.jsonl")?.kind, "tmpfs");
  assert.equal(visibleAt(mounts, "/opt/p/.sdd/worktrees/s1/a")?.kind, "bind");
  // Every mount comes after the mounts of its ancestors.
  for (let i = 0; i < mounts.length; i++) {
    for (let j = i + 1; j < mounts.length; j++) {
      assert.ok(
        !(mounts[i].dest.startsWith(mounts[j].dest + "/")),
        `${mounts[j].dest} is mounted after ${mounts[i].dest} inside it`,
      );
    }
  }
});

Deno.test("linux plan: relative paths are refused", () => {
  assert.throws(() => linuxMountPlan({ ...SPEC, worktree: "p/.sdd/worktrees/s1" }), /not absolute/);
});

Deno.test("bwrap argv: every namespace unshared, the command as pid 1, capabilities dropped, no new session", () => {
  const argv = bwrapArgv(
    [{ kind: "ro-bind", src: "/usr", dest: "/usr" }, { kind: "mask-file", dest: "/etc/shadow" }],
    { cwd: "/w", command: ["claude", "-p", "x"] },
  );
  assert.deepEqual(argv, [
    "bwrap",
    "--unshare-all",
    "--as-pid-1",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--hostname",
    "bernstein-sandbox",
    "--ro-bind",
    "/usr",
    "/usr",
    "--ro-bind",
    "/dev/null",
    "/etc/shadow",
    "--chdir",
    "/w",
    "--",
    "claude",
    "-p",
    "x",
  ]);
  assert.ok(!argv.includes("--share-net") && !argv.includes("--new-session"));
  assert.throws(() => bwrapArgv([], { cwd: "/w", command: [] }), /empty command/);
});

Deno.test("macOS profile: deny by default, hidden after reads, own folders last, loopback ports only", () => {
  const profile = macSandboxProfile({
    worktree: "/Users/me/p/.sdd/worktrees/s1",
    home: "/Users/me/p/.sdd/runtime/homes/s1",
    gitDir: "/Users/me/p/.git",
    readOnly: ["/Users/me/.cache/deno"],
    hidden: ["/Users/me/p/.sdd", '/Users/me/we"ird'],
    loopbackPorts: [8080, 49152, 8080],
  });
  const lines = profile.trimEnd().split("\n");
  assert.equal(lines[0], "(version 1)");
  assert.equal(lines[1], "(deny default)");
  const readAt = lines.findIndex((l) => l.startsWith("(allow file-read* (subpath"));
  const hideAt = lines.findIndex((l) => l.startsWith("(deny file-read* file-write*"));
  const ownAt = lines.findIndex((l) => l.startsWith("(allow file-read* file-write* (subpath"));
  assert.ok(readAt >= 0 && readAt < hideAt && hideAt < ownAt, "broad to narrow");
  assert.match(lines[readAt], /\(subpath "\/Users\/me\/p\/\.git"\)/);
  assert.match(lines[readAt], /\(subpath "\/Users\/me\/\.cache\/deno"\)/);
  assert.equal(
    lines[hideAt],
    '(deny file-read* file-write* (subpath "/Users/me/p/.sdd") (subpath "/Users/me/we\\"ird"))',
  );
  assert.equal(
    lines[ownAt],
    '(allow file-read* file-write* (subpath "/Users/me/p/.sdd/worktrees/s1") ' +
      '(subpath "/Users/me/p/.sdd/runtime/homes/s1"))',
  );
  assert.ok(lines.includes("(deny network*)"));
  assert.deepEqual(lines.filter((l) => l.startsWith("(allow network")), [
    '(allow network-outbound (remote tcp "localhost:8080"))',
    '(allow network-outbound (remote tcp "localhost:49152"))',
  ]);
  assert.ok(!profile.includes("(allow default)"));
  assert.throws(
    () =>
      macSandboxProfile({
        worktree: "/w",
        home: "/h",
        gitDir: "/g",
        readOnly: ["rel/path"],
        hidden: [],
        loopbackPorts: [],
      }),
    /not absolute/,
  );
  assert.throws(
    () =>
      macSandboxProfile({
        worktree: "/w",
        home: "/h",
        gitDir: "/g",
        readOnly: [],
        hidden: [],
        loopbackPorts: [70000],
      }),
    /not a TCP port/,
  );
});

Deno.test("isolation: sandbox refuses without one, auto warns naming the reach, none says so", () => {
  const missing = {
    available: false as const,
    backend: "bwrap" as const,
    reason: "bwrap is not installed",
  };
  const present = {
    available: true as const,
    backend: "bwrap" as const,
    executable: "/usr/bin/bwrap",
    version: "0.8.0",
  };
  assert.throws(() => decideIsolation("sandbox", missing), (e: Error & { code?: string }) => {
    assert.equal(e.code, "sandbox.unavailable");
    assert.match(e.message, /bwrap is not installed/);
    return true;
  });
  const auto = decideIsolation("auto", missing);
  assert.equal(auto.isolation, "none");
  assert.match(auto.reason ?? "", /found no sandbox \(bwrap is not installed\)/);
  assert.match(auto.reason ?? "", /\.sdd with its keys/);
  assert.match(auto.reason ?? "", /connect anywhere/);
  assert.deepEqual(decideIsolation("auto", present), {
    requested: "auto",
    isolation: "sandbox",
    backend: "bwrap",
    executable: "/usr/bin/bwrap",
    reason: null,
  });
  assert.equal(decideIsolation("sandbox", present).isolation, "sandbox");
  const none = decideIsolation("none", present);
  assert.equal(none.isolation, "none");
  assert.match(none.reason ?? "", /^isolation: none/);
});

Deno.test("probe: a bwrap that cannot start is reported with its last stderr line", async () => {
  const calls: string[][] = [];
  const probe = await probeSandbox({
    os: "linux",
    bwrap: "/usr/bin/bwrap",
    run: (argv) => {
      calls.push([...argv]);
      return Promise.resolve(
        argv[1] === "--version"
          ? { code: 0, stdout: "bubblewrap 0.8.0\n", stderr: "" }
          : { code: 1, stdout: "", stderr: "bwrap: No permissions to creating new namespace\n" },
      );
    },
  });
  assert.deepEqual(probe, {
    available: false,
    backend: "bwrap",
    reason: "/usr/bin/bwrap cannot start: bwrap: No permissions to creating new namespace",
  });
  assert.ok(calls[1].includes("--unshare-all") && calls[1].includes("--cap-drop"));
  const ok = await probeSandbox({
    os: "linux",
    bwrap: "/usr/bin/bwrap",
    run: (argv) =>
      Promise.resolve({
        code: 0,
        stdout: argv[1] === "--version" ? "bubblewrap 0.8.0\n" : "",
        stderr: "",
      }),
  });
  assert.deepEqual(ok, {
    available: true,
    backend: "bwrap",
    executable: "/usr/bin/bwrap",
    version: "0.8.0",
  });
  assert.deepEqual(await probeSandbox({ os: "windows" }), {
    available: false,
    backend: null,
    reason: "no sandbox for windows",
  });
});

Deno.test("sandbox init args round-trip; bad ones are refused", () => {
  const args = {
    socket: "/run/bernstein/egress.sock",
    forwards: [{ host: "127.0.0.1", port: 8080 }, { host: "::1", port: 9000 }],
    proxyPort: 3128,
    command: ["claude", "--", "-p"],
  };
  const argv = sandboxInitArgv(args);
  assert.deepEqual(argv.slice(0, 8), [
    "__sandbox-init",
    "--socket",
    "/run/bernstein/egress.sock",
    "--forward",
    "127.0.0.1:8080",
    "--forward",
    "[::1]:9000",
    "--proxy-port",
  ]);
  assert.deepEqual(parseSandboxInitArgs(argv.slice(1)), args);
  assert.throws(
    () => parseSandboxInitArgs(["--socket", "/s", "--forward", "nope", "--", "x"]),
    /not host:port/,
  );
  assert.throws(() => parseSandboxInitArgs(["--socket", "/s"]), /no command/);
  assert.throws(() => parseSandboxInitArgs(["--bogus", "1", "--", "x"]), /unknown argument/);
});

Deno.test("closure helpers: node prefix, shebang interpreter", () => {
  assert.equal(
    nodePrefix("/h/.cache/clis/claude-2.1/node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
    "/h/.cache/clis/claude-2.1",
  );
  assert.equal(nodePrefix("/usr/local/bin/aider"), undefined);
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.equal(shebangInterpreter(enc("#!/usr/bin/env node\nconsole.log(1)")), "node");
  assert.equal(shebangInterpreter(enc("#!/usr/bin/env -S node --no-warnings\n")), "node");
  assert.equal(shebangInterpreter(enc("#!/bin/sh -e\n")), "/bin/sh");
  assert.equal(shebangInterpreter(enc("\x7fELF")), undefined);
});

Deno.test("proxy environment: every proxy variable points inside, loopback exempt; upstream read first", () => {
  const env = proxiedEnv(
    { PATH: "/usr/bin", HTTPS_PROXY: "http://127.0.0.1:9" },
    "http://127.0.0.1:3128",
  );
  for (
    const n of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
  ) {
    assert.equal(env[n], "http://127.0.0.1:3128", n);
  }
  assert.equal(env.NO_PROXY, "127.0.0.1,localhost,::1");
  assert.equal(env.PATH, "/usr/bin");
  assert.deepEqual(upstreamProxy({ HTTPS_PROXY: "http://127.0.0.1:9" }), {
    host: "127.0.0.1",
    port: 9,
  });
  assert.deepEqual(upstreamProxy({ http_proxy: "http://proxy.corp:3128" }), {
    host: "proxy.corp",
    port: 3128,
  });
  assert.equal(upstreamProxy({ HTTPS_PROXY: "socks5://x:1" }), undefined);
  assert.equal(upstreamProxy({}), undefined);
});
