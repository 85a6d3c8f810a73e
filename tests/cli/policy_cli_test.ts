// `bernstein policy check|list|hook` as a whole binary: the decision with its rule and tier,
// the effective rules with their sources, and the hook's answers — including every way the
// answer of a task server can be wrong (a retired member, an unknown member, an action outside
// the closed set, an error, no answer before the deadline, nobody listening): each a deny.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runBernstein } from "../_helpers/cli.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

const ALWAYS = [
  "- id: safe-grep-src",
  "  tool: grep",
  '  input_pattern: "src/.*"',
  "  description: Grep on source is safe",
].join("\n") + "\n";
const RULES = [
  "deny:",
  "  - id: no-rm-rf",
  "    tool: bash",
  "    input_field: command",
  '    input_pattern: ".*rm -rf.*"',
  "ask:",
  "  - id: ask-push",
  "    tool: bash",
  "    input_field: command",
  '    input_pattern: "git push*"',
].join("\n") + "\n";

async function project(dir: string, files: Record<string, string> = {}): Promise<string> {
  await makeRepo(dir);
  await Deno.mkdir(join(dir, ".bernstein"), { recursive: true });
  await Deno.writeTextFile(join(dir, ".bernstein", "always_allow.yaml"), files.always ?? ALWAYS);
  await Deno.writeTextFile(join(dir, ".bernstein", "rules.yaml"), files.rules ?? RULES);
  return dir;
}

const bern = (dir: string, args: string[], stdin?: string | Uint8Array) =>
  runBernstein(args, { cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });

Deno.test("policy check prints the decision, the rule and the tier; exit 0 allow, 1 deny/ask", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const grep = await bern(dir, [
      "policy",
      "check",
      "--tool",
      "grep",
      "--input",
      '{"path":"src/a.py"}',
    ]);
    assert.equal(grep.code, 0, grep.stderr);
    assert.match(grep.stdout, /^allow {2}\(alwaysAllowRule, tier always_allow\)$/m);
    assert.match(grep.stdout, /rule: {4}safe-grep-src at \.bernstein\/always_allow\.yaml:1:3/);
    const rm = await bern(dir, [
      "policy",
      "check",
      "--tool",
      "Bash",
      "--input",
      '{"command":"rm -rf build"}',
      "--json",
    ]);
    assert.equal(rm.code, 1);
    const body = JSON.parse(rm.stdout);
    assert.equal(body.family, "bash");
    assert.deepEqual(
      [
        body.decision.action,
        body.decision.decisionReason,
        body.decision.ruleId,
        body.decision.tier,
      ],
      ["deny", "denyRule", "no-rm-rf", "deny"],
    );
    const push = await bern(dir, [
      "policy",
      "check",
      "--tool",
      "Bash",
      "--input",
      '{"command":"git push x"}',
    ]);
    assert.equal(push.code, 1);
    assert.match(push.stdout, /^ask {2}\(askRule, tier ask\)/m);
    const read = await bern(dir, [
      "policy",
      "check",
      "--tool",
      "Read",
      "--input",
      '{"file_path":".sdd/keys/k"}',
    ]);
    assert.match(read.stdout, /^deny {2}\(secretDetected, tier safety\)/m);
    for (const input of ["not json", "[1]"]) {
      const bad = await bern(dir, ["policy", "check", "--tool", "Read", "--input", input]);
      assert.equal(bad.code, 2, input);
      assert.match(bad.stderr, /error\[cli\.bad_flag\]/);
    }
    assert.equal((await bern(dir, ["policy", "check"])).code, 2);
  });
});

Deno.test("policy list shows rules with sources; problems are file:line:col errors and exit 1", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const ok = await bern(dir, ["policy", "list"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /IMMUNE \/ SAFETY > ALWAYS-ALLOW > DENY > ASK > ALLOW/);
    assert.match(
      ok.stdout,
      /safe-grep-src: grep path ~ src\/\.\* \(regex\) {2}\.bernstein\/always_allow\.yaml:1:3/,
    );
    assert.match(
      ok.stdout,
      /no-rm-rf: bash command ~ \.\*rm -rf\.\* \(regex\) {2}\.bernstein\/rules\.yaml:2:5/,
    );
    const json = JSON.parse((await bern(dir, ["policy", "list", "--json"])).stdout);
    assert.deepEqual(json.rules.map((r: { id: string }) => r.id), [
      "safe-grep-src",
      "no-rm-rf",
      "ask-push",
    ]);
    assert.deepEqual(json.problems, []);
    await Deno.writeTextFile(
      join(dir, ".bernstein", "rules.yaml"),
      RULES + "  - id: no-rm-rf\n    tool: bash\n    input_pattern: x\n    colour: red\n",
    );
    const bad = await bern(dir, ["policy", "list"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /error\[policy\.unknown_field\]: \.bernstein\/rules\.yaml:14:5: /);
    const check = await bern(dir, [
      "policy",
      "check",
      "--tool",
      "Bash",
      "--input",
      '{"command":"ls"}',
    ]);
    assert.match(check.stdout, /^ask {2}\(ruleUnreadable\)/m, "a broken rule reaching bash: ask");
    assert.match(check.stderr, /warning\[policy\.unknown_field\]/);
  });
});

const hookInput = (tool: string, input: Record<string, unknown>) =>
  JSON.stringify({ hook_event_name: "PreToolUse", tool_name: tool, tool_input: input });

Deno.test("policy hook outside a run decides from the project's rules; bad input is denied", async () => {
  await withTempDir(async (dir) => {
    await project(dir);
    const answer = async (stdin: string | Uint8Array, args: string[] = []) => {
      const r = await bern(dir, ["policy", "hook", ...args], stdin);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    assert.deepEqual(await answer(hookInput("Read", { file_path: "src/a.ts" })), {});
    const grep = await answer(hookInput("Grep", { pattern: "x", path: `${dir}/src/pkg` }));
    assert.equal(grep.hookSpecificOutput.permissionDecision, "allow");
    const rm = await answer(hookInput("Bash", { command: "rm -rf /" }));
    assert.equal(rm.hookSpecificOutput.permissionDecision, "deny");
    assert.match(rm.hookSpecificOutput.permissionDecisionReason, /denyRule no-rm-rf/);
    const push = await answer(hookInput("Bash", { command: "git push" }));
    assert.equal(push.hookSpecificOutput.permissionDecision, "ask", "outside a run Claude asks");
    const gem = await answer(hookInput("run_shell_command", { command: "rm -rf x" }), [
      "--format",
      "gemini",
    ]);
    assert.equal(gem.decision, "deny");
    for (const bad of [new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]), "{", '{"tool_input":{}}']) {
      const a = await answer(bad);
      assert.equal(a.hookSpecificOutput.permissionDecision, "deny");
      assert.match(a.hookSpecificOutput.permissionDecisionReason, /inputInvalid/);
    }
    await Deno.mkdir(join(dir, ".sdd"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, ".sdd", "config.yaml"),
      "tuning:\n  policy:\n    max_hook_input_bytes: 100\n",
    );
    const huge = await answer(hookInput("Write", { file_path: "a", content: "x".repeat(500) }));
    assert.match(huge.hookSpecificOutput.permissionDecisionReason, /larger than 100 bytes/);
  });
});

const HANG = Symbol("hang");

/** A stand-in task server whose /policy/decide answer the test chooses (or never answers). */
function stubServer(answer: () => Response | typeof HANG) {
  const seen: Record<string, unknown>[] = [];
  const hanging: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({ auth: req.headers.get("authorization"), body: await req.json().catch(() => null) });
    const a = answer();
    if (a !== HANG) return a;
    // Never answers until the stub closes (shutdown waits for requests in flight).
    await new Promise<void>((resolve) => hanging.push(resolve));
    return new Response("closed", { status: 503 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    close: async () => {
      for (const h of hanging) h();
      await server.shutdown();
    },
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

Deno.test("policy hook with --server: every wrong answer from the server is a deny", async () => {
  const cases: [string, () => Response | typeof HANG, RegExp][] = [
    [
      "a retired member",
      () => json({ decision: { action: "allow", decisionReason: "defaultAllow", reason: "ok" } }),
      /contractViolation\): refused the task server's answer: the task server's answer\.reason is a retired member/,
    ],
    [
      "the retired guard",
      () =>
        json({
          decision: {
            action: "ask",
            decisionReason: "integrityGuard",
            guard: "x",
            guards: ["dangerous_delete"],
          },
        }),
      /guard is a retired member/,
    ],
    [
      "an unknown member",
      () => json({ decision: { action: "allow", decisionReason: "defaultAllow", verdict: "yes" } }),
      /contractViolation.*verdict/,
    ],
    [
      "an action outside the set",
      () => json({ decision: { action: "permit", decisionReason: "defaultAllow" } }),
      /contractViolation.*action/,
    ],
    ["no decision at all", () => json({}), /contractViolation.*is not an object/],
    [
      "an error",
      () => json({ error: { code: "internal", message: "boom" } }, 500),
      /hookFailure\): the task server refused: internal boom/,
    ],
    ["a non-JSON body", () => new Response("<html>", { status: 200 }), /hookFailure.*non-JSON/],
    ["JSON that is not an object", () => json(null), /hookFailure.*with no JSON object/],
    [
      "an error code this version does not know",
      () => json({ error: { code: "policy.from_the_future", message: "later" } }, 409),
      /hookFailure\): the task server refused: server\.bad_response later \(server code 'policy\.from_the_future', unknown here\)/,
    ],
    [
      "no answer before the deadline",
      () => HANG,
      /hookFailure\): no answer from the task server within 1 s/,
    ],
  ];
  for (const [name, respond, message] of cases) {
    const stub = stubServer(respond);
    try {
      const r = await runBernstein(
        ["policy", "hook", "--server", stub.url, "--deadline-s", "1"],
        { stdin: hookInput("Read", { file_path: "a" }), env: { BERNSTEIN_TASK_TOKEN: "tok-1" } },
      );
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      const out = JSON.parse(r.stdout).hookSpecificOutput;
      assert.equal(out.permissionDecision, "deny", name);
      assert.match(out.permissionDecisionReason, message, name);
      assert.equal(stub.seen[0]?.auth, "Bearer tok-1", `${name}: the agent token travels`);
    } finally {
      await stub.close();
    }
  }
  const allowed = stubServer(() =>
    json({
      decision: {
        action: "allow",
        decisionReason: "alwaysAllowRule",
        ruleId: "r",
        tier: "always_allow",
      },
    })
  );
  try {
    const r = await runBernstein(["policy", "hook", "--server", allowed.url], {
      stdin: hookInput("Read", { file_path: "a" }),
      env: { BERNSTEIN_TASK_TOKEN: "tok-1" },
    });
    assert.equal(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision, "allow");
    assert.deepEqual((allowed.seen[0].body as { tool_name: string }).tool_name, "Read");
  } finally {
    await allowed.close();
  }
  const noToken = await runBernstein(["policy", "hook", "--server", "http://127.0.0.1:9"], {
    stdin: hookInput("Read", { file_path: "a" }),
  });
  assert.match(
    JSON.parse(noToken.stdout).hookSpecificOutput.permissionDecisionReason,
    /no agent token/,
  );
  const nobody = await runBernstein(["policy", "hook", "--server", "http://127.0.0.1:9"], {
    stdin: hookInput("Read", { file_path: "a" }),
    env: { BERNSTEIN_TASK_TOKEN: "t" },
  });
  assert.match(
    JSON.parse(nobody.stdout).hookSpecificOutput.permissionDecisionReason,
    /cannot be reached/,
  );
});
