// Output parsers fed recorded real CLI outputs (fixtures/adapters/, see its README).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  ADAPTERS,
  type AgentResult,
  getAdapter,
  LineSplitter,
  parseOutput,
  type ProgressEvent,
  StreamingParse,
} from "../../src/adapters/mod.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/adapters/", import.meta.url));

interface Meta {
  exit_code: number;
  timed_out: boolean;
  requests: { path: string; prompt_marker: boolean }[];
  stderr_head: string[];
}

async function recorded(
  cli: string,
  file: string,
): Promise<{ events: ProgressEvent[]; result: AgentResult; meta: Meta }> {
  const stdout = await Deno.readTextFile(`${FIXTURES}${cli}/${file}.stdout.jsonl`);
  const meta = JSON.parse(await Deno.readTextFile(`${FIXTURES}${cli}/${file}.meta.json`)) as Meta;
  const parsed = parseOutput(getAdapter(cli), stdout, {
    code: meta.exit_code,
    timed_out: meta.timed_out,
    stderr: meta.stderr_head.join("\n"),
  });
  return { ...parsed, meta };
}

const REPLY = "All done: MARKER-42";

Deno.test("claude text reply (recorded 2.1.332): summary, one turn, usage and cost from `result`", async () => {
  const { events, result, meta } = await recorded("claude", "text_reply");
  assert.ok(meta.requests.every((r) => r.prompt_marker), "prompt went through stdin");
  assert.equal(result.ok, true);
  assert.equal(result.summary, REPLY);
  assert.equal(result.turns, 1);
  assert.deepEqual(result.tokens, { input: 12, output: 5, cache_read: 0, cache_write: 0 });
  assert.ok(result.cost_usd !== null && result.cost_usd > 0);
  assert.equal(result.subtype, "success");
  assert.match(result.session_id ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(events[0].kind, "started");
  assert.ok(events.some((e) => e.kind === "message" && e.text === REPLY));
});

Deno.test("claude API error (recorded): not ok, the API error text, exit 1", async () => {
  const { result } = await recorded("claude", "api_error");
  assert.equal(result.ok, false);
  assert.equal(result.exit_code, 1);
  assert.match(result.error ?? "", /API Error: 500 scripted failure 500/);
});

Deno.test("claude max turns (hand-built): error_max_turns with turns, tokens and cost", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}claude/handbuilt_max_turns.stdout.jsonl`);
  const { events, result } = parseOutput(getAdapter("claude"), stdout, { code: 1 });
  assert.equal(result.ok, false);
  assert.equal(result.subtype, "error_max_turns");
  assert.equal(result.error, "error_max_turns");
  assert.equal(result.turns, 2);
  assert.equal(result.cost_usd, 0.0021);
  assert.deepEqual(result.tokens, { input: 340, output: 35, cache_read: 100, cache_write: 0 });
  assert.deepEqual(
    events.filter((e) => e.kind === "tool_use").map((e) => e.tool),
    ["Write", "Bash"],
  );
  assert.equal(events.filter((e) => e.kind === "tool_result").length, 2);
});

Deno.test("codex text reply (recorded 0.171.0): agent_message, token usage, no cost or turns", async () => {
  const { events, result } = await recorded("codex", "text_reply");
  assert.equal(result.ok, true);
  assert.equal(result.summary, REPLY);
  assert.deepEqual(result.tokens, { input: 12, output: 5, cache_read: 0 });
  assert.equal(result.cost_usd, null);
  assert.equal(result.turns, null);
  assert.match(result.session_id ?? "", /^[0-9a-f-]{36}$/);
  assert.ok(events.some((e) => e.kind === "turn"));
  // The "model metadata not found" warning item is progress, not an error.
  assert.ok(events.some((e) => e.kind === "raw" && /Model metadata/.test(e.text ?? "")));
});

Deno.test("codex API error (recorded): turn.failed message is the error", async () => {
  const { result } = await recorded("codex", "api_error");
  assert.equal(result.ok, false);
  assert.equal(result.exit_code, 1);
  assert.match(result.error ?? "", /high demand/);
});

Deno.test("gemini text reply (recorded 0.61.0): assistant delta, stats tokens", async () => {
  const { result, events } = await recorded("gemini", "text_reply");
  assert.equal(result.ok, true);
  assert.equal(result.summary, REPLY);
  assert.deepEqual(result.tokens, { input: 12, output: 5, cache_read: 0 });
  assert.equal(result.cost_usd, null);
  assert.equal(result.subtype, "success");
  assert.equal(events[0].kind, "started");
  assert.equal(events[0].model, "fake-model");
});

Deno.test("gemini API error (recorded): a 500 fails at once, result status error, exit 244", async () => {
  // With an endpoint the adapter sets general.maxAttempts 1: no retries with backoff.
  const { result, meta } = await recorded("gemini", "api_error");
  assert.equal(meta.timed_out, false);
  assert.equal(result.ok, false);
  assert.equal(result.exit_code, 244);
  assert.match(result.error ?? "", /scripted failure 500/);
});

Deno.test("qwen text reply (recorded 0.15.10): Claude-style result without cost", async () => {
  const { result } = await recorded("qwen", "text_reply");
  assert.equal(result.ok, true);
  assert.equal(result.summary, REPLY);
  assert.equal(result.turns, 1);
  assert.equal(result.cost_usd, null);
  assert.equal(result.tokens?.output, 10);
});

Deno.test("qwen API error (recorded): 'success' + exit 0 with an [API Error] result is a failure", async () => {
  const { result, meta } = await recorded("qwen", "api_error");
  assert.equal(meta.exit_code, 0, "the recording really exited 0");
  assert.equal(result.ok, false);
  assert.match(result.error ?? "", /^\[API Error: 400 scripted failure 400\]$/);
});

Deno.test("opencode text reply (recorded 1.18.33): steps as turns, tokens, cost", async () => {
  const { result, events } = await recorded("opencode", "text_reply");
  assert.equal(result.ok, true);
  assert.equal(result.summary, REPLY);
  assert.equal(result.turns, 1);
  assert.equal(result.cost_usd, 0);
  assert.deepEqual(result.tokens, { input: 12, output: 5, cache_read: 0, cache_write: 0 });
  assert.match(result.session_id ?? "", /^ses_/);
  assert.equal(events[0].kind, "started");
});

Deno.test("opencode API error (recorded): a 400 is an error event with the API's message, exit 1", async () => {
  const { result, events } = await recorded("opencode", "api_error");
  assert.deepEqual(events.map((e) => e.kind), ["error"]);
  assert.equal(result.ok, false);
  assert.equal(result.exit_code, 1);
  assert.equal(result.error, "scripted failure 400");
  assert.equal(result.summary, "");
});

Deno.test("codex waiting for an unreachable model server is a fatal event (stop it now)", () => {
  const stdout = [
    '{"type":"thread.started","thread_id":"t1"}',
    '{"type":"turn.started"}',
    '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}',
  ].join("\n");
  const { events, result } = parseOutput(getAdapter("codex"), stdout, { code: 143 });
  const fatal = events.filter((e) => e.fatal === true);
  assert.equal(fatal.length, 1);
  assert.match(fatal[0].text ?? "", /waiting for network/);
  assert.match(result.error ?? "", /^Reconnecting\.\.\. waiting for network/);
  // Other error events are progress, not a reason to stop the CLI.
  const other = parseOutput(getAdapter("codex"), '{"type":"error","message":"slow down"}', {
    code: 0,
  });
  assert.equal(other.events[0].fatal, undefined);
});

interface ToolExpect {
  tool: string;
  turns: number | null;
  tokens: { input: number; output: number };
  cost: "reported" | null;
}

const TOOL_WRITE: Readonly<Record<string, ToolExpect>> = {
  claude: { tool: "Write", turns: 2, tokens: { input: 32, output: 14 }, cost: "reported" },
  codex: { tool: "command_execution", turns: null, tokens: { input: 32, output: 14 }, cost: null },
  gemini: { tool: "write_file", turns: null, tokens: { input: 32, output: 14 }, cost: null },
  qwen: { tool: "write_file", turns: 2, tokens: { input: 32, output: 14 }, cost: null },
  opencode: { tool: "write", turns: 2, tokens: { input: 32, output: 14 }, cost: "reported" },
};

for (const [cli, want] of Object.entries(TOOL_WRITE)) {
  Deno.test(`${cli} tool call (recorded): the write shows as a tool event, then the final text`, async () => {
    const meta = JSON.parse(
      await Deno.readTextFile(`${FIXTURES}${cli}/tool_write.meta.json`),
    ) as Meta & { file_written: boolean };
    assert.equal(meta.file_written, true, "the real CLI wrote the file without asking");
    const { events, result } = await recorded(cli, "tool_write");
    assert.equal(result.ok, true, result.error ?? "");
    assert.equal(result.summary, REPLY);
    assert.equal(result.turns, want.turns);
    assert.equal(result.tokens?.input, want.tokens.input);
    assert.equal(result.tokens?.output, want.tokens.output);
    if (want.cost === null) assert.equal(result.cost_usd, null);
    else assert.ok(result.cost_usd !== null && result.cost_usd >= 0);
    const tools = events.filter((e) => e.kind === "tool_use").map((e) => e.tool);
    assert.deepEqual(tools, [want.tool]);
    const toolAt = events.findIndex((e) => e.kind === "tool_use");
    const finalAt = events.findIndex((e) => e.kind === "message" && e.text === REPLY);
    assert.ok(toolAt >= 0 && finalAt > toolAt, "tool event before the final message");
  });
}

for (const [cli, exit] of [["claude", 1], ["gemini", 53], ["qwen", 53]] as const) {
  Deno.test(`${cli} turn limit 1 (recorded): error_max_turns, not ok, the CLI's reason`, async () => {
    const { result, meta } = await recorded(cli, "max_turns");
    assert.equal(meta.exit_code, exit);
    assert.equal(result.ok, false);
    assert.equal(result.subtype, "error_max_turns");
    assert.match(result.error ?? "", /max(imum)? (number of |session )?turns/i);
  });
}

Deno.test("cursor (hand-built): tool_call events, result text, no cost", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}cursor/handbuilt_success.stdout.jsonl`);
  const { events, result } = parseOutput(getAdapter("cursor"), stdout, { code: 0 });
  assert.equal(result.ok, true);
  assert.equal(result.summary, "I'll create the README.Created README.md.");
  assert.equal(result.cost_usd, null);
  assert.deepEqual(events.filter((e) => e.kind === "tool_use").map((e) => e.tool), ["write"]);
});

Deno.test("amp (hand-built): Claude-compatible stream with turns and usage, cost not trusted", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}amp/handbuilt_success.stdout.jsonl`);
  const { result } = parseOutput(getAdapter("amp"), stdout, { code: 0 });
  assert.equal(result.ok, true);
  assert.equal(result.turns, 2);
  assert.equal(result.summary, "Created README.md.");
  assert.deepEqual(result.tokens, { input: 1860, output: 48, cache_read: 0, cache_write: 0 });
  assert.equal(result.cost_usd, null);
});

Deno.test("aider (hand-built): Tokens/Cost line, applied edit, last text as summary", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}aider/handbuilt_session.stdout.txt`);
  const { events, result } = parseOutput(getAdapter("aider"), stdout, { code: 0 });
  assert.equal(result.ok, true);
  assert.deepEqual(result.tokens, { input: 2300, output: 120 });
  assert.equal(result.cost_usd, 0.02);
  assert.ok(events.some((e) => e.kind === "tool_result" && e.text === "Applied edit to README.md"));
});

Deno.test("goose (hand-built): plain text, last line is the summary", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}goose/handbuilt_session.stdout.txt`);
  const { result } = parseOutput(getAdapter("goose"), stdout, { code: 0 });
  assert.equal(result.ok, true);
  assert.equal(result.summary, "Created README.md with a project heading.");
  assert.equal(result.tokens, null);
});

Deno.test("every parser survives garbage, truncation and non-object JSON without throwing", () => {
  const junk = [
    "",
    "not json at all",
    "{",
    '{"type":',
    "[1,2,3]",
    "null",
    '"a string"',
    '{"type":"result"}',
    '{"type":"assistant","message":null}',
    '{"type":"assistant","message":{"content":[null,1,"x",{"type":"text"}]}}',
    '{"type":"item.completed","item":7}',
    '{"type":"step_finish","part":{"tokens":"many","cost":"free"}}',
    '{"type":"result","usage":{"input_tokens":"NaN"},"num_turns":"3","total_cost_usd":"1"}',
    "\u0000\u0001binary\uFFFD",
  ].join("\n");
  for (const adapter of ADAPTERS) {
    const { result } = parseOutput(adapter, junk, { code: 0 });
    assert.equal(typeof result.summary, "string", adapter.name);
    assert.ok(result.turns === null || Number.isFinite(result.turns), adapter.name);
    assert.ok(result.cost_usd === null || Number.isFinite(result.cost_usd), adapter.name);
  }
});

Deno.test("a non-zero exit without a reported error names the exit code and stderr's last line", () => {
  const { result } = parseOutput(getAdapter("claude"), "", {
    code: 1,
    stderr: "some noise\nError: Input must be provided either through stdin or as a prompt\n",
  });
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    "exited with code 1: Error: Input must be provided either through stdin or as a prompt",
  );
});

Deno.test("a clean exit 0 after a timeout is still not ok", () => {
  const { result } = parseOutput(getAdapter("gemini"), "", { code: 0, timed_out: true });
  assert.equal(result.ok, false);
  assert.equal(result.error, "killed at the deadline");
});

Deno.test("LineSplitter keeps partial lines and split UTF-8 characters across chunks", () => {
  const bytes = new TextEncoder().encode('{"a":"é€😀"}\r\nsecond\nthird');
  const splitter = new LineSplitter();
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i++) lines.push(...splitter.push(bytes.subarray(i, i + 1)));
  lines.push(...splitter.end());
  assert.deepEqual(lines, ['{"a":"é€😀"}', "second", "third"]);
});

Deno.test("streaming chunk by chunk gives the same result as parsing the whole output", async () => {
  const stdout = await Deno.readTextFile(`${FIXTURES}claude/text_reply.stdout.jsonl`);
  const whole = parseOutput(getAdapter("claude"), stdout, { code: 0 });
  const run = new StreamingParse(getAdapter("claude").parser());
  const bytes = new TextEncoder().encode(stdout);
  const events: ProgressEvent[] = [];
  for (let i = 0; i < bytes.length; i += 37) events.push(...run.push(bytes.subarray(i, i + 37)));
  const last = run.finish({ code: 0 });
  assert.deepEqual([...events, ...last.events], whole.events);
  assert.deepEqual(last.result, whole.result);
});
