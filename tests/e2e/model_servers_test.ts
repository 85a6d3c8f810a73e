// The deterministic model servers and the egress sentinel on their own (no agent CLI): scripts,
// tool choice, working-directory detection, the four wire formats, scripted failures, request
// logs and the refusal of other hosts.
import assert from "node:assert/strict";
import { join } from "node:path";
import { outputText, runProcess } from "../../src/io/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import {
  CALL_USAGE,
  FailureCounters,
  findCwd,
  ModelScriptError,
  type ModelServer,
  namedCall,
  parseScript,
  scriptLines,
  SIDE_USAGE,
  startEgressSentinel,
  startModelServer,
  TEXT_USAGE,
  writeCall,
} from "./model_servers/mod.ts";
import { pipe } from "./model_servers/egress.ts";

// --- scripts ---------------------------------------------------------------------------------

Deno.test("a script's failures attach to the next action; trailing failures to a final text", () => {
  const s = parseScript([
    "@model fail 429 times=1 retry-after=2",
    "@model write src/a.txt hello  world",
    "@model shell ls -la",
    "@model say all done",
    "@model hang",
  ]);
  assert.equal(s.turns.length, 4);
  assert.deepEqual(s.turns[0], {
    failures: [{ failure: { kind: "status", status: 429, retry_after_s: 2 }, times: 1 }],
    action: { kind: "write", path: "src/a.txt", content: "hello world\n" },
  });
  assert.deepEqual(s.turns[1], { failures: [], action: { kind: "shell", command: "ls -la" } });
  assert.deepEqual(s.turns[2], { failures: [], action: { kind: "say", text: "all done" } });
  assert.deepEqual(s.turns[3], {
    failures: [{ failure: { kind: "hang" }, times: null }],
    action: { kind: "say", text: "done" },
  });
});

Deno.test("script lines that cannot work are refused with the line", () => {
  const bad = [
    "@model write /etc/passwd x",
    "@model write ../out.txt x",
    "@model write a/../../b x",
    "@model fail 200",
    "@model fail soon",
    "@model shell",
    "@model dance",
    "@model call Read",
    "@model call Read {not json}",
    "model write a.txt x",
  ];
  for (const line of bad) {
    assert.throws(() => parseScript([line]), ModelScriptError, line);
  }
});

Deno.test("a call action names tools to pick from and JSON arguments with the cwd filled in", () => {
  const s = parseScript(['@model call Read|read_file {"file_path":"{cwd}/a \\"b\\".txt"}']);
  assert.deepEqual(s.turns[0].action, {
    kind: "call",
    tools: ["Read", "read_file"],
    args: '{"file_path":"{cwd}/a \\"b\\".txt"}',
  });
  const offered = [{ name: "read_file", props: ["file_path"] }];
  const action = s.turns[0].action as { tools: string[]; args: string };
  assert.deepEqual(namedCall(offered, action.tools, action.args, '/w/q"d'), {
    name: "read_file",
    args: { file_path: '/w/q"d/a "b".txt' },
  });
  assert.match(
    String(namedCall([{ name: "Write", props: [] }], action.tools, action.args, "/w")),
    /none of Read, read_file among Write/,
  );
});

Deno.test("script lines are found at the start of a line, also behind qwen's blank", () => {
  const text = "Write it.\n@model write a.txt x\n @model say ok\nsee @model write b.txt y\n";
  assert.deepEqual(scriptLines(text), ["@model write a.txt x", "@model say ok"]);
  assert.deepEqual(scriptLines("no script here"), []);
});

Deno.test("failure counters: N failures per turn, then the action; none past the script", () => {
  const script = parseScript([
    "@model fail 500 times=2",
    "@model malformed times=1",
    "@model write a.txt x",
    "@model hang",
    "@model say never",
  ]);
  const c = new FailureCounters();
  const kinds = (turn: number) => {
    const r = c.next(script, turn);
    return r.failure
      ? (r.failure.kind === "status" ? r.failure.status : r.failure.kind)
      : r.action.kind;
  };
  assert.deepEqual([kinds(0), kinds(0), kinds(0), kinds(0), kinds(0)], [
    500,
    500,
    "malformed",
    "write",
    "write",
  ]);
  assert.deepEqual([kinds(1), kinds(1)], ["hang", "hang"], "no times= fails for ever");
  assert.deepEqual(c.next(script, 5), { action: { kind: "say", text: "done" } });
  // Another script (another key) has its own counters.
  const other = parseScript(["@model fail 500 times=1", "@model say x"]);
  assert.equal(c.next(other, 0).failure?.kind, "status");
  assert.equal(c.next(other, 0).failure, undefined);
});

// --- tools and working directory -------------------------------------------------------------

Deno.test("the write call uses the CLI's own file tool and its parameter names", () => {
  const cases = [
    {
      tools: [{ name: "Bash", props: ["command"] }, {
        name: "Write",
        props: ["file_path", "content"],
      }],
      want: { name: "Write", args: { file_path: "/w/a.txt", content: "x\n" } },
    },
    {
      tools: [{ name: "write_file", props: ["file_path", "content"] }],
      want: { name: "write_file", args: { file_path: "/w/a.txt", content: "x\n" } },
    },
    {
      tools: [{ name: "write", props: ["filePath", "content"] }, {
        name: "todowrite",
        props: ["todos"],
      }],
      want: { name: "write", args: { filePath: "/w/a.txt", content: "x\n" } },
    },
    {
      tools: [{ name: "save_document", props: ["path", "text"] }, {
        name: "create_note",
        props: ["path", "text"],
      }],
      want: { name: "create_note", args: { path: "/w/a.txt", text: "x\n" } },
    },
  ];
  for (const c of cases) assert.deepEqual(writeCall(c.tools, "/w/a.txt", "x\n"), c.want);
  assert.equal(
    writeCall([{ name: "read_file", props: ["file_path"] }], "/w/a.txt", "x"),
    undefined,
  );
});

Deno.test("without a file tool the shell tool writes the exact bytes, quotes included", async () => {
  await withTempDir(async (dir) => {
    const content = 'it\'s "quoted" $HOME `x` \\n\n';
    const path = join(dir, "sub dir", "a.txt");
    const call = writeCall([{ name: "exec_command", props: ["cmd", "workdir"] }], path, content);
    assert.equal(call?.name, "exec_command");
    const r = await runProcess(["sh", "-c", String(call?.args.cmd ?? "false")], {
      env: { PATH: "/usr/bin:/bin" },
    });
    assert.equal(r.code, 0, outputText(r.stderr));
    assert.equal(await Deno.readTextFile(path), content);
  });
});

Deno.test("the working directory is read from each pinned CLI's own wording", () => {
  assert.equal(
    findCwd(["env:\n - Primary working directory: /r/.sdd/worktrees/s1\n - Is a git"]),
    "/r/.sdd/worktrees/s1",
  );
  assert.equal(findCwd(["<environment_context>\n  <cwd>/r/w</cwd>\n"]), "/r/w");
  assert.equal(
    findCwd(["temporary directory is: /h/.gemini/tmp/w\n- **Workspace Directories:**\n  - /r/w\n"]),
    "/r/w",
  );
  assert.equal(findCwd(["<env>\n  Working directory: /r/w\n  Workspace root"]), "/r/w");
  assert.equal(findCwd(["I'm currently working in the directory: /r/w\nHere is"]), "/r/w");
  assert.equal(findCwd(["nothing here", "Working directory for the command. Defaults"]), undefined);
});

async function rawRequest(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(text));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(8192);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      if (new TextDecoder().decode(chunks.at(-1)).includes("\r\n\r\n")) break;
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } finally {
    conn.close();
  }
}

// --- the server over HTTP --------------------------------------------------------------------

async function post(
  server: ModelServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${server.origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function sseData(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").map((l) =>
    JSON.parse(l.slice(6))
  );
}

const SCRIPT = "Do the task.\n@model write notes/a.txt hello\n@model say finished\n";

Deno.test("anthropic: a tool call aimed inside the announced cwd, then the final text", async () => {
  const server = startModelServer();
  try {
    const tools = [
      { name: "Bash", input_schema: { properties: { command: {} } } },
      { name: "Write", input_schema: { properties: { file_path: {}, content: {} } } },
    ];
    const first = await post(server, "/v1/messages?beta=true", {
      stream: true,
      system: [{ type: "text", text: "env\n - Primary working directory: /w/s1\n" }],
      tools,
      messages: [{ role: "user", content: [{ type: "text", text: SCRIPT }] }],
    });
    assert.equal(first.status, 200);
    const events = sseData(first.text);
    assert.deepEqual(events.map((e) => e.type), [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    assert.equal((events[1].content_block as Record<string, unknown>).name, "Write");
    const delta = events[2].delta as { partial_json: string };
    assert.deepEqual(JSON.parse(delta.partial_json), {
      file_path: "/w/s1/notes/a.txt",
      content: "hello\n",
    });
    const second = await post(server, "/v1/messages", {
      stream: true,
      tools,
      messages: [
        { role: "user", content: SCRIPT },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "Write", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] },
      ],
    });
    const text = sseData(second.text).find((e) => e.type === "content_block_delta");
    assert.deepEqual(text?.delta, { type: "text_delta", text: "finished" });
    assert.deepEqual(server.turns().map((r) => [r.turn, r.answer, r.cwd ?? null]), [
      [0, "write notes/a.txt via Write", "/w/s1"],
      [1, "say finished", null],
    ]);
    assert.deepEqual(server.turns()[0].usage, CALL_USAGE);
    assert.deepEqual(server.turns()[1].usage, TEXT_USAGE);
    assert.deepEqual(server.problems, []);
  } finally {
    await server.close();
  }
});

Deno.test("openai responses: codex's shell tool gets the write; usage in response.completed", async () => {
  const server = startModelServer();
  try {
    const res = await post(server, "/v1/responses", {
      stream: true,
      tools: [{ type: "function", name: "exec_command", parameters: { properties: { cmd: {} } } }],
      input: [
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "<environment_context>\n  <cwd>/w/s2</cwd>\n" }],
        },
        { type: "message", role: "user", content: [{ type: "input_text", text: SCRIPT }] },
      ],
    });
    const events = sseData(res.text);
    const done = events.find((e) => e.type === "response.output_item.done");
    const item = done?.item as { name: string; arguments: string; call_id: string };
    assert.equal(item.name, "exec_command");
    assert.match(
      JSON.parse(item.arguments).cmd,
      /^mkdir -p '\/w\/s2\/notes' && printf '%s' 'hello\n' > '\/w\/s2\/notes\/a.txt'$/,
    );
    const completed = events.find((e) => e.type === "response.completed");
    assert.equal(
      (completed?.response as { usage: { input_tokens: number } }).usage.input_tokens,
      CALL_USAGE.input,
    );
    // The tool output is in the next request: the final text.
    const next = await post(server, "/v1/responses", {
      tools: [{ type: "function", name: "exec_command", parameters: { properties: { cmd: {} } } }],
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: SCRIPT }] },
        { type: "function_call_output", call_id: item.call_id, output: "" },
      ],
    });
    const last = sseData(next.text).find((e) => e.type === "response.output_item.done");
    assert.deepEqual((last?.item as { content: unknown[] }).content, [{
      type: "output_text",
      text: "finished",
      annotations: [],
    }]);
  } finally {
    await server.close();
  }
});

Deno.test("openai chat: streamed tool_calls with [DONE]; titles without tools get a plain text", async () => {
  const server = startModelServer();
  try {
    const tools = [{
      type: "function",
      function: { name: "write", parameters: { properties: { filePath: {}, content: {} } } },
    }];
    const res = await post(server, "/v1/chat/completions", {
      stream: true,
      tools,
      messages: [
        { role: "system", content: "<env>\n  Working directory: /w/s3\n</env>" },
        { role: "user", content: [{ type: "text", text: SCRIPT }] },
      ],
    });
    assert.ok(res.text.trimEnd().endsWith("data: [DONE]"));
    const chunks = sseData(res.text);
    const call = (chunks[0].choices as {
      delta: { tool_calls: { function: { name: string; arguments: string } }[] };
    }[])[0]
      .delta.tool_calls[0].function;
    assert.equal(call.name, "write");
    assert.deepEqual(JSON.parse(call.arguments), {
      filePath: "/w/s3/notes/a.txt",
      content: "hello\n",
    });
    assert.deepEqual(chunks[2].usage, {
      prompt_tokens: 20,
      completion_tokens: 9,
      total_tokens: 29,
    });
    const title = await post(server, "/v1/chat/completions", {
      messages: [{ role: "user", content: "Generate a title" }],
    });
    assert.equal(JSON.parse(title.text).choices[0].message.content, "Fake title");
    assert.equal(server.requests[1].kind, "side");
    assert.deepEqual(server.requests[1].usage, SIDE_USAGE);
  } finally {
    await server.close();
  }
});

Deno.test("gemini: functionCall for write_file; a next-speaker check is answered 'user'", async () => {
  const server = startModelServer();
  try {
    const body = {
      tools: [{
        functionDeclarations: [{
          name: "write_file",
          parametersJsonSchema: { properties: { file_path: {}, content: {} } },
        }],
      }],
      contents: [
        { role: "user", parts: [{ text: "- **Workspace Directories:**\n  - /w/s4\n" }] },
        { role: "user", parts: [{ text: SCRIPT }] },
      ],
    };
    const res = await post(server, "/v1beta/models/fake-model:streamGenerateContent?alt=sse", body);
    const [chunk] = sseData(res.text) as {
      candidates: { content: { parts: { functionCall: unknown }[] } }[];
    }[];
    assert.deepEqual(chunk.candidates[0].content.parts[0].functionCall, {
      name: "write_file",
      args: { file_path: "/w/s4/notes/a.txt", content: "hello\n" },
    });
    const check = await post(server, "/v1beta/models/fake-model:generateContent", {
      contents: [{ role: "user", parts: [{ text: "who is next_speaker?" }] }],
    });
    const parsed = JSON.parse(check.text);
    assert.equal(JSON.parse(parsed.candidates[0].content.parts[0].text).next_speaker, "user");
    const count = await post(server, "/v1beta/models/fake-model:countTokens", {});
    assert.equal(JSON.parse(count.text).totalTokens, 12);
  } finally {
    await server.close();
  }
});

Deno.test("the server's own script applies when the prompt has none; it can be replaced", async () => {
  const server = startModelServer({ script: ["@model say from the server"], cwd: "/w/default" });
  try {
    const tools = [{ name: "Write", input_schema: { properties: { file_path: {}, content: {} } } }];
    const first = await post(server, "/v1/messages", {
      tools,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(JSON.parse(first.text).content[0].text, "from the server");
    server.script = parseScript(["@model write b.txt x"]);
    const second = await post(server, "/v1/messages", {
      tools,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.deepEqual(JSON.parse(second.text).content[0].input, {
      file_path: "/w/default/b.txt",
      content: "x\n",
    });
  } finally {
    await server.close();
  }
});

Deno.test("scripted 429/500: each API's error shape, retry-after, then the turn proceeds", async () => {
  const server = startModelServer();
  try {
    const script = "@model fail 429 times=1 retry-after=3\n@model fail 500 times=1\n@model say ok";
    const tools = [{
      type: "function",
      function: { name: "write", parameters: { properties: { filePath: {}, content: {} } } },
    }];
    const body = { tools, messages: [{ role: "user", content: script }] };
    const a = await post(server, "/v1/chat/completions", body);
    assert.equal(a.status, 429);
    assert.equal(a.headers.get("retry-after"), "3");
    assert.equal(JSON.parse(a.text).error.code, "rate_limit_exceeded");
    const b = await post(server, "/v1/chat/completions", body);
    assert.equal(b.status, 500);
    const c = await post(server, "/v1/chat/completions", body);
    assert.equal(JSON.parse(c.text).choices[0].message.content, "ok");
    const g = await post(server, "/v1beta/models/m:generateContent", {
      tools: [{ functionDeclarations: [{ name: "write_file" }] }],
      contents: [{ role: "user", parts: [{ text: "@model fail 429" }] }],
    });
    assert.equal(JSON.parse(g.text).error.status, "RESOURCE_EXHAUSTED");
    const m = await post(server, "/v1/messages", {
      tools: [{ name: "Write" }],
      messages: [{ role: "user", content: "@model fail 429" }],
    });
    assert.equal(JSON.parse(m.text).error.type, "rate_limit_error");
    assert.deepEqual(server.turns().map((r) => r.answer), [
      "fail 429",
      "fail 500",
      "say ok",
      "fail 429",
      "fail 429",
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("answered() resolves once enough matching requests were answered; close rejects it", async () => {
  const server = startModelServer({ script: ["@model fail 500"] });
  const body = {
    stream: false,
    tools: [{ name: "Write" }],
    messages: [{ role: "user", content: "x" }],
  };
  const twice = server.answered((r) => r.answer === "fail 500", 2);
  let settled = false;
  twice.then(() => (settled = true), () => {});
  assert.equal((await post(server, "/v1/messages", body)).status, 500);
  await Promise.resolve();
  assert.equal(settled, false, "one matching answer is not two");
  assert.equal((await post(server, "/v1/messages", body)).status, 500);
  assert.deepEqual((await twice).map((r) => r.seq), [0, 1]);
  // Already true when asked: resolves at once.
  assert.equal((await server.answered((r) => r.answer === "fail 500")).length, 2);
  const never = assert.rejects(server.answered((r) => r.answer === "hang"), /model server closed/);
  await server.close();
  await never;
});

Deno.test("a scripted hang sends headers and nothing more, until the server closes", async () => {
  const server = startModelServer();
  const res = await fetch(`${server.origin}/v1/messages`, {
    method: "POST",
    body: JSON.stringify({
      stream: true,
      tools: [{ name: "Write" }],
      messages: [{ role: "user", content: "@model hang" }],
    }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const pending = reader.read();
  const first = await Promise.race([
    pending.then(() => "data"),
    new Promise((r) => setTimeout(() => r("nothing"), 300)),
  ]);
  assert.equal(first, "nothing");
  await server.close();
  await pending.then(() => {}, () => {}); // the stream ends (or errors) once the server is gone
  assert.equal(server.turns()[0].answer, "hang");
});

Deno.test("a scripted malformed stream breaks off inside an event", async () => {
  const server = startModelServer();
  try {
    const res = await post(server, "/v1/responses", {
      tools: [{ type: "function", name: "exec_command", parameters: {} }],
      input: [{ type: "message", role: "user", content: "@model malformed" }],
    });
    assert.equal(res.status, 200);
    const data = res.text.split("\n").filter((l) => l.startsWith("data: "));
    assert.doesNotThrow(() => JSON.parse(data[0].slice(6)));
    assert.throws(() => JSON.parse(data[data.length - 1].slice(6)));
    assert.ok(!res.text.includes("response.completed"));
  } finally {
    await server.close();
  }
});

Deno.test("every request is logged; another Host, an unknown route or a missing tool is a problem", async () => {
  const server = startModelServer();
  try {
    await post(server, "/v1/messages", {
      tools: [{ name: "Read", input_schema: { properties: { file_path: {} } } }],
      messages: [{ role: "user", content: "@model write a.txt x" }],
    }, { "x-api-key": "k1" });
    await post(server, "/v2/unknown", {});
    // fetch cannot set Host: a raw request as a proxy client would send it.
    const foreign = await rawRequest(
      server.port,
      "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    assert.match(foreign, /^HTTP\/1\.1 421/);
    assert.equal(server.requests.length, 3);
    assert.equal(server.requests[0].headers["x-api-key"], "k1");
    assert.equal(
      server.requests[0].answer,
      "say (cannot write: no working directory in the request)",
    );
    assert.equal(server.problems.length, 3);
    assert.match(server.problems[0], /cannot write/);
    assert.match(server.problems[1], /no route: POST \/v2\/unknown/);
    assert.match(server.problems[2], /another host: api\.anthropic\.com/);
  } finally {
    await server.close();
  }
});

// --- the egress sentinel ---------------------------------------------------------------------

Deno.test("the sentinel refuses and records other hosts, forwards loopback to the model server", async () => {
  const server = startModelServer();
  const sentinel = startEgressSentinel();
  const port = Number(new URL(sentinel.url).port);
  try {
    const refused = await rawRequest(
      port,
      "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n",
    );
    assert.match(refused, /^HTTP\/1\.1 403/);
    const plain = await rawRequest(
      port,
      "GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
    );
    assert.match(plain, /^HTTP\/1\.1 403/);
    assert.deepEqual(sentinel.foreign, [
      { method: "CONNECT", target: "api.openai.com:443" },
      { method: "GET", target: "http://example.com/x" },
    ]);
    // Absolute-form requests for the model server go through (qwen ignores NO_PROXY).
    const through = await rawRequest(
      port,
      `GET ${server.origin}/v1/models HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(through, /^HTTP\/1\.1 200/);
    const tunnel = await rawRequest(port, `CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\n\r\n`);
    assert.match(tunnel, /^HTTP\/1\.1 200 Connection Established/);
    assert.deepEqual(sentinel.forwarded, [`127.0.0.1:${server.port}`, `127.0.0.1:${server.port}`]);
    assert.equal(server.requests[0].answer, "model list");
    assert.equal(sentinel.env().HTTPS_PROXY, sentinel.url);
    assert.equal(sentinel.env().NO_PROXY, "127.0.0.1,localhost,::1");
    const garbage = await rawRequest(port, "HELLO\r\n\r\n");
    assert.match(garbage, /^HTTP\/1\.1 400/);
  } finally {
    await sentinel.close();
    await server.close();
  }
});

Deno.test("the sentinel's pipe ends quietly when the side it half-closes is already closed", async () => {
  // The race the sentinel meets under load: one direction's copy ends and its handler closes
  // both connections while the other direction is about to half-close its side. Deno's
  // closeWrite then rejects (BadResource); a rejection that escaped failed the whole file.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const [from, accepted] = await Promise.all([
    Deno.connect({ hostname: "127.0.0.1", port }),
    listener.accept(),
  ]);
  const to = await Deno.connect({ hostname: "127.0.0.1", port });
  const peer = await listener.accept();
  accepted.close(); // `from` reads end of file at once
  to.close(); // the side pipe half-closes is gone already
  await pipe(from, to);
  from.close();
  peer.close();
  listener.close();
});

// --- media -----------------------------------------------------------------------------------

/** A real 1×1 PNG and its digest. */
const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const PNG_SHA = sha256Hex(Uint8Array.from(atob(PNG_B64), (c) => c.charCodeAt(0)));

function marker(mime: string, sha: string, delivery: string): string {
  return `<attachment mime="${mime}" sha256="${sha}" delivery="${delivery}">\n…\n</attachment>\n`;
}

const WRITE_TOOL = [{
  name: "Write",
  input_schema: { properties: { file_path: {}, content: {} } },
}];

Deno.test("media that arrives as media is logged with its digest; a marked attachment that did not is a problem", async () => {
  const server = startModelServer({ cwd: "/w" });
  try {
    const says = marker("image/png", PNG_SHA, "content-block") + "@model say seen";
    // Anthropic: an image block with the bytes.
    await post(server, "/v1/messages", {
      tools: WRITE_TOOL,
      messages: [{
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_B64 } },
          { type: "text", text: says },
        ],
      }],
    });
    // The same marker but the bytes only as text in the prompt: not delivered as an image.
    await post(server, "/v1/messages", {
      tools: WRITE_TOOL,
      messages: [{ role: "user", content: [{ type: "text", text: says + "\n" + PNG_B64 }] }],
    });
    // Gemini: inlineData with the right bytes but the wrong MIME type.
    await post(server, "/v1beta/models/m:streamGenerateContent?alt=sse", {
      tools: [{ functionDeclarations: [{ name: "write_file", parametersJsonSchema: {} }] }],
      contents: [{
        role: "user",
        parts: [
          { text: marker("image/png", PNG_SHA, "file-reference") + "@model say seen" },
          { inlineData: { mimeType: "image/jpeg", data: PNG_B64 } },
        ],
      }],
    });
    // OpenAI chat (qwen): an image_url data URL.
    await post(server, "/v1/chat/completions", {
      tools: [{ type: "function", function: { name: "write_file", parameters: {} } }],
      messages: [{
        role: "user",
        content: [
          {
            type: "text",
            text: marker("image/png", PNG_SHA, "file-reference") + "@model say seen",
          },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } },
        ],
      }],
    });
    // OpenAI Responses (codex): an input_image data URL.
    await post(server, "/v1/responses", {
      tools: [{ type: "function", name: "write_file", parameters: {} }],
      input: [{
        type: "message",
        role: "user",
        content: [
          { type: "input_image", image_url: `data:image/png;base64,${PNG_B64}` },
          {
            type: "input_text",
            text: marker("image/png", PNG_SHA, "file-argument") + "@model say seen",
          },
        ],
      }],
    });
    const turns = server.turns();
    assert.deepEqual(turns.map((t) => t.media ?? []), [
      [{ via: "image", mime: "image/png", sha256: PNG_SHA, size: 70 }],
      [],
      [{ via: "inlineData", mime: "image/jpeg", sha256: PNG_SHA, size: 70 }],
      [{ via: "image_url", mime: "image/png", sha256: PNG_SHA, size: 70 }],
      [{ via: "input_image", mime: "image/png", sha256: PNG_SHA, size: 70 }],
    ]);
    assert.deepEqual(server.problems, [
      `#1: attachment ${PNG_SHA.slice(0, 12)}… (image/png) did not arrive as media`,
      `#2: attachment ${PNG_SHA.slice(0, 12)}… arrived as image/jpeg, not image/png`,
    ]);
  } finally {
    await server.close();
  }
});
