// The scripted agent as a real process, spawned exactly as the run loop will: the scripted
// adapter's invocation (argv, env allowlist, prompt on stdin) in a temporary worktree.
import assert from "node:assert/strict";
import { join } from "node:path";
import { SCRIPTED_RECORD_ENV } from "../../src/adapters/mod.ts";
import { runScriptedAgent as runAgent } from "../_helpers/scripted.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("scripted: write (one line and heredoc, nested folders) then report success", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(
      root,
      [
        "Role: backend. Do the task.",
        "@agent write notes.txt hello world",
        "@agent write src/deep/a.ts <<EOF",
        "export const a = 1;",
        "",
        "  indented é",
        "EOF",
        "@agent summary wrote two files",
      ].join("\n"),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await Deno.readTextFile(join(root, "worktree/notes.txt")), "hello world\n");
    assert.equal(
      await Deno.readTextFile(join(root, "worktree/src/deep/a.ts")),
      "export const a = 1;\n\n  indented é\n",
    );
    assert.equal(run.result.ok, true);
    assert.equal(run.result.summary, "wrote two files");
    assert.equal(run.result.turns, 2);
    assert.equal(run.result.cost_usd, 0);
    assert.equal(run.result.subtype, "success");
    assert.match(run.result.session_id ?? "", /^scripted-[0-9a-f]{8}$/);
    assert.deepEqual(
      run.events.filter((e) => e.kind === "tool_use").map((e) => e.tool),
      ["write", "write"],
    );
  });
});

Deno.test("scripted: writes that escape the worktree are refused and nothing is written outside", async () => {
  await withTempDir(async (root) => {
    await Deno.mkdir(join(root, "outside"));
    await Deno.mkdir(join(root, "worktree"));
    await Deno.symlink(join(root, "outside"), join(root, "worktree/link"));
    for (const path of ["../escape.txt", "/tmp/bernstein-abs-escape.txt", "link/x.txt"]) {
      const run = await runAgent(root, `@agent write ${path} nope`);
      assert.equal(run.code, 1, path);
      assert.equal(run.result.ok, false, path);
      assert.match(
        run.result.error ?? "",
        new RegExp(`refused to write '${path.replace(/[.]/g, "\\.")}'`),
      );
    }
    assert.equal(await exists(join(root, "escape.txt")), false);
    assert.equal(await exists("/tmp/bernstein-abs-escape.txt"), false);
    assert.equal(await exists(join(root, "outside/x.txt")), false);
  });
});

Deno.test("scripted: delete removes a file", async () => {
  await withTempDir(async (root) => {
    await Deno.mkdir(join(root, "worktree"));
    await Deno.writeTextFile(join(root, "worktree/old.txt"), "x");
    const run = await runAgent(root, "@agent delete old.txt");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await exists(join(root, "worktree/old.txt")), false);
  });
});

Deno.test("scripted: run executes a command in the worktree; a failing command fails the agent", async () => {
  await withTempDir(async (root) => {
    const ok = await runAgent(root, `@agent run sh -c "echo 'made by run' > made.txt"`);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await Deno.readTextFile(join(root, "worktree/made.txt")), "made by run\n");
    const bad = await runAgent(root, '@agent run sh -c "exit 3"\n@agent write never.txt x');
    assert.equal(bad.code, 1);
    assert.equal(bad.result.error, "command failed (exit 3): sh -c exit 3");
    assert.equal(await exists(join(root, "worktree/never.txt")), false);
    const missing = await runAgent(root, "@agent run no-such-binary-xyz");
    assert.equal(missing.code, 1);
    assert.match(missing.result.error ?? "", /exit 127/);
  });
});

Deno.test("scripted: progress prints messages; sleep waits and the run goes on", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(
      root,
      "@agent progress step one\n@agent sleep 200\n@agent progress step two",
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      run.events.filter((e) => e.kind === "message").map((e) => e.text),
      ["step one", "step two", "completed 3 instruction(s)"],
    );
    assert.equal(run.result.turns, 3);
  });
});

Deno.test("scripted: fail stops with the reason, exit 1, later instructions not run", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(root, "@agent fail tests are red\n@agent write after.txt x");
    assert.equal(run.code, 1);
    assert.equal(run.result.ok, false);
    assert.equal(run.result.error, "tests are red");
    assert.equal(run.result.subtype, "error_task_failed");
    assert.equal(await exists(join(root, "worktree/after.txt")), false);
  });
});

Deno.test("scripted: crash exits with its code and no result line", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(root, "@agent write before.txt x\n@agent crash 7");
    assert.equal(run.code, 7);
    assert.ok(!run.stdout.includes('"type":"result"'));
    assert.equal(run.result.ok, false);
    assert.match(run.result.error ?? "", /^exited with code 7: scripted agent: crashing/);
    assert.equal(await exists(join(root, "worktree/before.txt")), true);
  });
});

Deno.test("scripted: kill ends the process with SIGKILL", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(root, "@agent kill");
    assert.equal(run.signal, "SIGKILL");
    assert.equal(run.code, 137);
    assert.equal(run.result.ok, false);
  });
});

Deno.test("scripted: hang never finishes; the deadline kills the process group", async () => {
  await withTempDir(async (root) => {
    // The deadline must fall after the agent printed its progress: three times what the same
    // agent took to start and print it just now, at this machine's load (never under 3 s).
    const started = performance.now();
    const baseline = await runAgent(root, "@agent progress about to hang");
    assert.equal(baseline.code, 0, baseline.stderr);
    const timeoutMs = Math.max(3000, Math.ceil(3 * (performance.now() - started)));
    const run = await runAgent(root, "@agent progress about to hang\n@agent hang", { timeoutMs });
    assert.equal(run.timedOut, true);
    assert.equal(run.result.ok, false);
    assert.equal(run.result.error, "killed at the deadline");
    assert.ok(run.events.some((e) => e.text === "about to hang"));
  });
});

Deno.test("scripted: --max-turns stops at the limit with error_max_turns", async () => {
  await withTempDir(async (root) => {
    const run = await runAgent(
      root,
      "@agent write 1.txt a\n@agent write 2.txt b\n@agent write 3.txt c",
      {
        max_turns: 2,
      },
    );
    assert.equal(run.code, 1);
    assert.equal(run.result.subtype, "error_max_turns");
    assert.equal(run.result.turns, 2);
    assert.equal(await exists(join(root, "worktree/2.txt")), true);
    assert.equal(await exists(join(root, "worktree/3.txt")), false);
  });
});

Deno.test("scripted: records the exact prompt bytes (protocol text included) and its argv", async () => {
  await withTempDir(async (root) => {
    const record = join(root, "record/prompt.bin");
    const prompt = '<attachment mime="image/png" sha256="00">\niVBORw0KGgo=\n</attachment>\n\n' +
      "Ünïcode task\r\nwith CRLF and a trailing space \n@agent summary recorded";
    const run = await runAgent(root, prompt, {
      env: { [SCRIPTED_RECORD_ENV]: record, AWS_SECRET_ACCESS_KEY: "nope" },
      system_prompt: "PROTOCOL: run bernstein task complete",
      model: "opus",
    });
    assert.equal(run.code, 0, run.stderr);
    const bytes = await Deno.readFile(record);
    assert.deepEqual(
      bytes,
      new TextEncoder().encode(`PROTOCOL: run bernstein task complete\n\n${prompt}`),
    );
    const meta = JSON.parse(await Deno.readTextFile(`${record}.meta.json`));
    assert.deepEqual(meta.argv, ["--model", "scripted-opus"]);
    assert.equal(meta.cwd, join(root, "worktree"));
    assert.ok(meta.env.includes(SCRIPTED_RECORD_ENV));
    assert.ok(!meta.env.includes("AWS_SECRET_ACCESS_KEY"), "only allowlisted names reach it");
    assert.equal(run.result.summary, "recorded");
  });
});

Deno.test("scripted: bad instructions and unknown arguments exit 2 before doing anything", async () => {
  await withTempDir(async (root) => {
    for (
      const [prompt, message] of [
        ["@agent write ok.txt x\n@agent fly away", "unknown instruction 'fly'"],
        ["@agent write a.txt <<EOF\nno end", "no closing EOF"],
        ["@agent sleep soon", "sleep needs milliseconds"],
        ['@agent run echo "open', "unterminated"],
      ]
    ) {
      const run = await runAgent(root, prompt);
      assert.equal(run.code, 2, prompt);
      assert.match(run.stderr, new RegExp(message), prompt);
      assert.equal(await exists(join(root, "worktree/ok.txt")), false);
    }
    const args = await runAgent(root, "@agent progress hi", { extra_args: ["--bogus"] });
    assert.equal(args.code, 2);
    assert.match(args.stderr, /unknown argument '--bogus'/);
  });
});

Deno.test("scripted: the same prompt gives byte-identical output", async () => {
  await withTempDir(async (root) => {
    const prompt = "@agent write same.txt x\n@agent progress p\n@agent summary s";
    const a = await runAgent(root, prompt);
    const b = await runAgent(root, prompt);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
  });
});

interface Call {
  path: string;
  auth: string | null;
  body: unknown;
}

async function withServer(
  status: number,
  fn: (url: string, calls: Call[]) => Promise<void>,
): Promise<void> {
  const calls: Call[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    calls.push({
      path: new URL(req.url).pathname,
      auth: req.headers.get("authorization"),
      body: await req.json(),
    });
    return new Response(status < 300 ? "{}" : '{"error":{"code":"forbidden"}}', { status });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, calls);
  } finally {
    await server.shutdown();
  }
}

Deno.test("scripted: with server env it reports progress and completion over HTTP", async () => {
  await withTempDir(async (root) => {
    await withServer(200, async (url, calls) => {
      const extra_env = {
        BERNSTEIN_SERVER_URL: url,
        BERNSTEIN_TASK_TOKEN: "tok-123",
        BERNSTEIN_TASK_ID: "task/7",
      };
      const run = await runAgent(root, "@agent progress half\n@agent summary done it", {
        extra_env,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(calls, [
        { path: "/tasks/task%2F7/progress", auth: "Bearer tok-123", body: { message: "half" } },
        { path: "/tasks/task%2F7/complete", auth: "Bearer tok-123", body: { summary: "done it" } },
      ]);
      calls.length = 0;
      const failed = await runAgent(root, "@agent fail no luck", { extra_env });
      assert.equal(failed.code, 1);
      assert.deepEqual(calls, [
        { path: "/tasks/task%2F7/fail", auth: "Bearer tok-123", body: { reason: "no luck" } },
      ]);
      calls.length = 0;
      const quiet = await runAgent(root, "@agent no-report\n@agent progress x", { extra_env });
      assert.equal(quiet.code, 0);
      assert.deepEqual(calls, []);
    });
  });
});

Deno.test("scripted: a server refusing completion makes the run fail with the status", async () => {
  await withTempDir(async (root) => {
    await withServer(403, async (url) => {
      const run = await runAgent(root, "@agent summary done", {
        extra_env: {
          BERNSTEIN_SERVER_URL: url,
          BERNSTEIN_TASK_TOKEN: "wrong",
          BERNSTEIN_TASK_ID: "t1",
        },
      });
      assert.equal(run.code, 1);
      assert.match(run.result.error ?? "", /^server refused complete: HTTP 403/);
    });
  });
});
