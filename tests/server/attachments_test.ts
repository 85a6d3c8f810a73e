// Attachments held by value through the task server: `POST /tasks` takes `{name, text}` and
// `{name, image: {mime, base64}}` beside paths, and refuses a bad one with the agent-core field
// path, code `attach.invalid` and its alias `config.user_attachment_invalid` (400). A manager
// agent's request is as untrusted as a plan file.
import assert from "node:assert/strict";
import { toBase64 } from "../../src/canonical/mod.ts";
import type { Task } from "../../src/tasks/mod.ts";
import { errorCode, errorField, startTestServer } from "./_server.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]);

Deno.test("server: POST /tasks keeps held attachments; a bad one is 400 attach.invalid at its field path", async () => {
  const s = await startTestServer();
  try {
    const attachments = [
      "docs/spec.md",
      { name: "notes.md", text: "- totals round half to even\n" },
      { name: "screen.png", image: { mime: "image/png", base64: toBase64(PNG) } },
    ];
    const made = await s.call("POST", "/tasks", {
      token: s.operator,
      body: { id: "t-held", title: "Look", role: "backend", attachments },
    });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual((made.json.task as Task).attachments, attachments);
    assert.deepEqual((await s.store.get("t-held"))?.attachments, attachments);

    const cases: [unknown[], string, string][] = [
      [
        ["a.txt", "b.txt", "c.txt", {
          name: "x.png",
          image: { mime: "image/png", base64: toBase64(JPEG) },
        }],
        "attachments[3].image.mime",
        "declared image/png, but the bytes are image/jpeg",
      ],
      [
        [{ name: "../../etc/passwd", text: "x" }],
        "attachments[0].name",
        "is a name, not a path: no '/' or '\\'",
      ],
      [
        [{ name: "x.svg", image: { mime: "image/svg+xml", base64: "PHN2Zy8+" } }],
        "attachments[0].image.mime",
        "'image/svg+xml' is not one of image/png, image/jpeg, image/gif, image/webp",
      ],
      [
        Array.from({ length: 21 }, (_, i) => `f${i}.txt`),
        "attachments",
        "has 21 attachments; at most 20 per task",
      ],
    ];
    for (const [list, field, message] of cases) {
      const r = await s.call("POST", "/tasks", {
        token: s.operator,
        body: { title: "x", role: "backend", attachments: list },
      });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(errorCode(r.json), "attach.invalid");
      assert.deepEqual((r.json.error as { aliases: string[] }).aliases, [
        "config.user_attachment_invalid",
      ]);
      assert.equal(errorField(r.json), field);
      assert.equal((r.json.error as { message: string }).message, `${field}: ${message}`);
    }
    // Nothing of the refused requests was stored.
    assert.deepEqual((await s.store.list()).map((t) => t.id), ["t-held"]);
  } finally {
    await s.stop();
  }
});

Deno.test("server: a manager agent's child task is held to the same rules (its request is untrusted)", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany([{ id: "goal", title: "goal", role: "manager" }], {
      actor: "test",
      reason: "setup",
    });
    const { token } = await s.tokens.issueAgentToken({
      session: "sess-goal",
      agent_id: "agent-goal",
      task_ids: ["goal"],
      can_create_tasks: true,
    });
    const hostile = await s.call("POST", "/tasks", {
      token,
      body: {
        title: "read the key",
        role: "dev",
        attachments: [
          { name: "id_rsa", text: "fine" },
          { name: "../../.sdd/keys/operator.key", text: "x" },
        ],
      },
    });
    assert.equal(hostile.status, 400);
    assert.equal(errorCode(hostile.json), "attach.invalid");
    assert.equal(errorField(hostile.json), "attachments[1].name");
    const child = await s.call("POST", "/tasks", {
      token,
      body: { title: "look", role: "dev", attachments: [{ name: "notes.md", text: "see it\n" }] },
    });
    assert.equal(child.status, 201, JSON.stringify(child.json));
    assert.deepEqual((child.json.task as Task).attachments, [{
      name: "notes.md",
      text: "see it\n",
    }]);
    assert.equal((child.json.task as Task).parent_task_id, "goal");
  } finally {
    await s.stop();
  }
});
