// `bernstein policy …` and `bernstein approvals …`: check a tool call against the project's
// rules, list the effective rules, answer an agent CLI's pre-tool hook, and answer the calls
// a run has parked for approval.
import type { ErrorCode } from "../errors/mod.ts";
import type { PolicyDecision } from "../policy/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, numberFlag, stringArg, stringFlag } from "./spec.ts";

async function usage(code: ErrorCode, message: string): Promise<never> {
  const { UsageError } = await import("../errors/mod.ts");
  throw new UsageError(code, message);
}

/** The project, its policy and its protected places, for decisions outside a run. */
async function projectPolicy(ctx: CommandContext, cwdFlag?: string) {
  const { findProject, loadConfig, DEFAULT_TUNING } = await import("../config/mod.ts");
  const { loadPolicy } = await import("../policy/mod.ts");
  const { resolveAuditKeyPath } = await import("../audit/mod.ts");
  const { resolve } = await import("node:path");
  const project = await findProject(ctx.cwd);
  let tuning = DEFAULT_TUNING.policy;
  try {
    const loaded = await loadConfig({ cwd: ctx.cwd, env: ctx.env });
    if (loaded.config !== undefined) tuning = loaded.config.tuning.policy;
  } catch {
    // A broken config layer must not stop a policy answer: the defaults hold.
  }
  const policy = await loadPolicy(project.root, { maxBytes: tuning.max_rule_file_bytes });
  const userHome = ctx.env.get("HOME");
  const places = {
    cwd: cwdFlag === undefined ? project.root : resolve(ctx.cwd, cwdFlag),
    root: project.root,
    sdd: project.sdd,
    ...(userHome ? { userHome } : {}),
    secretFiles: [resolveAuditKeyPath(ctx.env).path],
  };
  return { project, policy, places, tuning };
}

function decisionLines(d: PolicyDecision): string[] {
  const lines = [`${d.action}  (${d.decisionReason}${d.tier ? `, tier ${d.tier}` : ""})`];
  if (d.ruleId) lines.push(`rule:    ${d.ruleId}${d.ruleSource ? ` at ${d.ruleSource}` : ""}`);
  if (d.guards?.length) lines.push(`guards:  ${d.guards.join(", ")}`);
  if (d.message) lines.push(`message: ${d.message}`);
  return lines;
}

async function check(ctx: CommandContext): Promise<number> {
  const tool = stringFlag(ctx, "tool");
  if (tool === undefined || tool.trim() === "") {
    return await usage("cli.missing_flag", "--tool is required");
  }
  const text = stringFlag(ctx, "input") ?? "{}";
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    return await usage("cli.bad_flag", `--input is not JSON: ${(error as Error).message}`);
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return await usage("cli.bad_flag", "--input must be a JSON object (the tool's input)");
  }
  const { decide, toolFamily } = await import("../policy/mod.ts");
  const { policy, places } = await projectPolicy(ctx, stringFlag(ctx, "cwd"));
  for (const p of policy.problems) {
    ctx.out.warn({ code: p.code, message: p.message, location: p.location });
  }
  const call = { tool, input: input as Record<string, unknown> };
  const d = decide(call, policy, places);
  if (ctx.json) {
    ctx.out.json({
      tool,
      family: toolFamily(tool),
      decision: d,
      problems: policy.problems.map((p) => ({ ...p })),
    });
  } else {
    for (const line of decisionLines(d)) ctx.out.line(line);
  }
  return d.action === "allow" ? 0 : 1;
}

async function list(ctx: CommandContext): Promise<number> {
  const policy = await import("../policy/mod.ts");
  const { policy: loaded } = await projectPolicy(ctx);
  const rules = loaded.rules.map((r) => ({
    kind: r.kind,
    id: r.id,
    tool: r.tool,
    input_field: r.input_field,
    input_pattern: r.pattern.source,
    pattern_kind: r.pattern.kind,
    content_patterns: r.content_patterns,
    description: r.description ?? null,
    source: r.source,
  }));
  if (ctx.json) {
    ctx.out.json({
      precedence: [...policy.POLICY_TIERS],
      files: loaded.files,
      rules: rules,
      guards: { ...policy.INTEGRITY_GUARDS },
      problems: loaded.problems.map((p) => ({ ...p })),
    });
  } else {
    ctx.out.line("precedence: IMMUNE / SAFETY > ALWAYS-ALLOW > DENY > ASK > ALLOW (default)");
    ctx.out.line("immune:     writes to .sdd/, .git/, .bernstein/, agent CLI config, keys");
    ctx.out.line("safety:     key/token reads, secrets in calls, and these guards (ask):");
    for (const [g, trigger] of Object.entries(policy.INTEGRITY_GUARDS)) {
      ctx.out.line(`  ${g}: ${trigger}`);
    }
    for (const f of loaded.files) {
      ctx.out.line(`file:       ${f.path} (${f.status}, ${f.rules} rule(s))`);
    }
    for (const kind of policy.RULE_KINDS) {
      const of = rules.filter((r) => r.kind === kind);
      ctx.out.line(`${kind.replace("_", "-")} (${of.length}):`);
      for (const r of of) {
        ctx.out.line(
          `  ${r.id}: ${r.tool} ${r.input_field} ~ ${r.input_pattern} (${r.pattern_kind})` +
            `${
              r.content_patterns.length ? ` + ${r.content_patterns.join(", ")}` : ""
            }  ${r.source}`,
        );
      }
    }
    ctx.out.line("allow: everything else (default)");
  }
  const { BernsteinError } = await import("../errors/mod.ts");
  for (const p of loaded.problems) {
    ctx.out.error(new BernsteinError(p.code, p.message, { location: p.location }));
  }
  return loaded.problems.length > 0 ? 1 : 0;
}

/** Reads stdin up to `max + 1` bytes (more is refused by the parser). */
async function readStdin(max: number): Promise<Uint8Array> {
  const out = new Uint8Array(max + 1);
  let got = 0;
  while (got < out.length) {
    const n = await Deno.stdin.read(out.subarray(got));
    if (n === null) break;
    got += n;
  }
  return out.subarray(0, got);
}

/** Asks the run's task server, with the agent's token, within the deadline. */
function serverDecider(url: string, token: string, deadlineMs: number) {
  return async (request: import("../policy/hook/mod.ts").HookRequest): Promise<unknown> => {
    const body: Record<string, unknown> = { tool_name: request.tool, tool_input: request.input };
    if (request.transcriptPath !== undefined) body.transcript_path = request.transcriptPath;
    if (request.cwd !== undefined) body.cwd = request.cwd;
    if (request.toolUseId !== undefined) body.tool_use_id = request.toolUseId;
    let response: Response;
    try {
      response = await fetch(`${url.replace(/\/+$/, "")}/policy/decide`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(deadlineMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === "TimeoutError";
      throw new Error(
        timedOut
          ? `no answer from the task server within ${Math.round(deadlineMs / 1000)} s`
          : `the task server at ${url} cannot be reached: ${(error as Error).message}`,
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`the task server answered HTTP ${response.status} with a non-JSON body`);
    }
    if (!response.ok) {
      const { refusalOfAnswer } = await import("../server/mod.ts");
      const refusal = refusalOfAnswer(response.status, parsed);
      throw new Error(`the task server refused: ${refusal.code} ${refusal.message}`);
    }
    if (typeof parsed !== "object" || parsed === null) {
      throw new Error(`the task server answered HTTP ${response.status} with no JSON object`);
    }
    return "decision" in parsed ? parsed.decision : undefined;
  };
}

async function hook(ctx: CommandContext): Promise<number> {
  const format = stringFlag(ctx, "format") ?? "claude";
  // The hook runs once per tool call an agent makes: it loads the rule engine (and the
  // configuration behind it) only to decide locally, outside a run.
  const hooks = await import("../policy/hook/mod.ts");
  if (!(hooks.HOOK_FORMATS as readonly string[]).includes(format)) {
    return await usage("cli.bad_flag", `--format must be one of ${hooks.HOOK_FORMATS.join(", ")}`);
  }
  const deadlineS = numberFlag(ctx, "deadline-s") ?? 30;
  if (!(deadlineS > 0)) return await usage("cli.bad_flag", "--deadline-s must be positive");
  const server = stringFlag(ctx, "server");
  const tokenFile = stringFlag(ctx, "token-file");
  let outcome: import("../policy/hook/mod.ts").HookOutcome;
  try {
    const local = server === undefined ? await projectPolicy(ctx) : undefined;
    const max = local?.tuning.max_hook_input_bytes ?? hooks.DEFAULT_MAX_HOOK_INPUT_BYTES;
    const stdin = await readStdin(max);
    let decide: (r: import("../policy/hook/mod.ts").HookRequest) => Promise<unknown>;
    if (server !== undefined) {
      // The agent's own token: a file (--token-file, or the BERNSTEIN_TASK_TOKEN_FILE its
      // environment names: how the run hands it over) or its environment.
      const file = tokenFile ?? ctx.env.get("BERNSTEIN_TASK_TOKEN_FILE");
      const token = file !== undefined && file !== ""
        ? (await Deno.readTextFile(file)).trim()
        : ctx.env.get("BERNSTEIN_TASK_TOKEN")?.trim();
      if (!token) {
        throw new Error(
          "no agent token: no --token-file, BERNSTEIN_TASK_TOKEN_FILE or BERNSTEIN_TASK_TOKEN",
        );
      }
      decide = serverDecider(server, token, deadlineS * 1000);
    } else {
      const l = local as NonNullable<typeof local>;
      const policy = await import("../policy/mod.ts");
      // Outside a run nobody is parked for: an ask stays an ask (Claude Code asks its user).
      decide = (r) =>
        Promise.resolve(policy.decide(r, l.policy, { ...l.places, cwd: r.cwd ?? l.places.cwd }));
    }
    outcome = await hooks.answerHook(stdin, {
      format: format as import("../policy/hook/mod.ts").HookFormat,
      maxInputBytes: max,
      decide,
      source: server === undefined ? "the local decision" : "the task server's answer",
    });
  } catch (error) {
    const d = hooks.failClosed("hookFailure", (error as Error).message);
    outcome = { decision: d, answer: hooks.renderHookAnswer(d, format as "claude") };
  }
  ctx.out.line(JSON.stringify(outcome.answer));
  return 0;
}

async function approvalsClient(ctx: CommandContext) {
  const server = await import("../server/mod.ts");
  const { systemClock } = await import("../io/mod.ts");
  const endpoint = await server.discoverEndpoint({ env: ctx.env, cwd: ctx.cwd });
  return new server.TaskClient(endpoint, { attempts: 1, baseDelayMs: 0, clock: systemClock });
}

async function approvalsList(ctx: CommandContext): Promise<number> {
  const client = await approvalsClient(ctx);
  const approvals = await client.listApprovals(booleanFlag(ctx, "all"));
  if (ctx.json) {
    ctx.out.json({ approvals: approvals });
    return 0;
  }
  if (approvals.length === 0) ctx.out.line("no parked calls");
  for (const a of approvals) {
    const why = a.ask.guards?.length
      ? a.ask.guards.join(", ")
      : a.ask.ruleId ?? a.ask.decisionReason;
    ctx.out.line(`${a.id}  ${a.status}  ${a.task_id} (${a.cli})  ${a.summary}`);
    ctx.out.line(`    why: ${why}${a.ask.message ? ` — ${a.ask.message}` : ""}`);
    ctx.out.line(`    parked ${a.parked_at}, denied at ${a.expires_at} unless answered`);
  }
  return 0;
}

function answerApproval(verdict: "approve" | "deny") {
  return async (ctx: CommandContext): Promise<number> => {
    const id = stringArg(ctx, "id") ?? "";
    const client = await approvalsClient(ctx);
    const approval = await client.answerApproval(id, verdict, stringFlag(ctx, "note"));
    if (ctx.json) ctx.out.json({ approval: approval });
    else ctx.out.line(`${approval.id} ${approval.status}: ${approval.summary}`);
    return 0;
  };
}

const SERVER_HELP =
  "Talks to the running task server ($BERNSTEIN_SERVER_URL, else .sdd/runtime/server.port)\n" +
  "with the operator token (beside the audit key, outside the project). Exit codes: 0 done ·\n" +
  "1 refused (unknown id, already answered) or no run · 3 no token.";

/** The `policy` and `approvals` commands. */
export const POLICY_COMMANDS: CommandSpec[] = [
  {
    path: ["policy", "check"],
    summary: "Decide one tool call against the project's rules; print the rule and tier.",
    description:
      "Evaluates a tool call (as an agent in the repository root would make it, or in --cwd)\n" +
      "against .bernstein/always_allow.yaml and .bernstein/rules.yaml with the fixed\n" +
      "precedence (docs/POLICY.md). Rule file problems are printed as warnings; a call they\n" +
      "could reach is asked about. JSON: {tool, family, decision: {action, decisionReason,\n" +
      "tier?, ruleId?, ruleSource?, guards?, message?}, problems}. Exit codes: 0 allow · 1\n" +
      "deny or ask · 2 bad flag.",
    flags: [
      { name: "tool", type: "string", valueName: "NAME", help: "Tool name (Read, Bash, grep, …)." },
      {
        name: "input",
        type: "string",
        valueName: "JSON",
        help: "The tool's input (a JSON object).",
      },
      { name: "cwd", type: "string", valueName: "DIR", help: "The agent's working directory." },
    ],
    json: true,
    examples: [
      `bernstein policy check --tool grep --input '{"path":"src/a.py"}'`,
      `bernstein policy check --tool Bash --input '{"command":"rm -rf /"}' --json`,
    ],
    run: check,
  },
  {
    path: ["policy", "list"],
    summary: "Show the effective rules, their sources and the precedence; exit 1 on problems.",
    description:
      "Lists the built-in immune and safety tiers, every rule by list with its file:line:col,\n" +
      "and every rule file problem. JSON: {precedence, files, rules, guards, problems}.",
    json: true,
    run: list,
  },
  {
    path: ["policy", "hook"],
    summary: "Answer an agent CLI's pre-tool hook (tool call JSON on stdin).",
    description:
      "Reads one hook input (Claude Code's PreToolUse JSON; gemini's BeforeTool) on stdin and\n" +
      "prints the answer in the CLI's format. In a run bernstein wires it into every agent\n" +
      "with --server and --deadline-s (the agent's token: --token-file, else the file\n" +
      "$BERNSTEIN_TASK_TOKEN_FILE names, else $BERNSTEIN_TASK_TOKEN),\n" +
      "and the task server decides (parking an\n" +
      "ask for approval). Without --server it decides from the rules of the project around\n" +
      "the current folder (an ask is left to the CLI). Anything that goes wrong is a deny;\n" +
      "it always exits 0 with an answer.",
    flags: [
      {
        name: "format",
        type: "string",
        valueName: "FORMAT",
        default: "claude",
        help: "claude or gemini.",
      },
      { name: "server", type: "string", valueName: "URL", help: "Ask this task server." },
      {
        name: "token-file",
        type: "string",
        valueName: "FILE",
        help: "The agent token for --server.",
      },
      {
        name: "deadline-s",
        type: "number",
        valueName: "N",
        default: 30,
        help: "Deny when no answer came in N seconds.",
      },
    ],
    examples: [
      `echo '{"tool_name":"Read","tool_input":{"file_path":"src/a.py"}}' | bernstein policy hook`,
    ],
    run: hook,
  },
  {
    path: ["approvals", "list"],
    summary: "List tool calls parked for approval in the running run.",
    description:
      `${SERVER_HELP}\nJSON: {approvals: [{id, status, task_id, session, cli, tool, summary,\ninput_sha256, ask, parked_at, expires_at, …}]}.`,
    flags: [{ name: "all", type: "boolean", help: "Include answered and timed-out calls." }],
    json: true,
    run: approvalsList,
  },
  {
    path: ["approvals", "approve"],
    summary: "Let a parked tool call run.",
    description: `${SERVER_HELP}\nJSON: {approval} (the answered call).`,
    args: [{ name: "id", required: true, help: "Approval id (ap-…)." }],
    flags: [{ name: "note", type: "string", valueName: "TEXT", help: "Why (recorded)." }],
    json: true,
    run: answerApproval("approve"),
  },
  {
    path: ["approvals", "deny"],
    summary: "Refuse a parked tool call; the agent is told why.",
    description: `${SERVER_HELP}\nJSON: {approval} (the answered call).`,
    args: [{ name: "id", required: true, help: "Approval id (ap-…)." }],
    flags: [{ name: "note", type: "string", valueName: "TEXT", help: "Why (told to the agent)." }],
    json: true,
    run: answerApproval("deny"),
  },
];
