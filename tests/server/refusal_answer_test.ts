import { equal, ok } from "node:assert/strict";
import { refusalOfAnswer, ServerRefusalError } from "../../src/server/mod.ts";

Deno.test("an error answer with a known code becomes that refusal", () => {
  const e = refusalOfAnswer(404, { error: { code: "task.not_found", message: "no task t1" } });
  ok(e instanceof ServerRefusalError);
  equal(e.code, "task.not_found");
  equal(e.message, "no task t1");
  equal(e.status, 404);
});

Deno.test("a code this version does not know is server.bad_response, the server's code kept in the message", () => {
  const e = refusalOfAnswer(409, { error: { code: "task.from_the_future", message: "later" } });
  equal(e.code, "server.bad_response");
  equal(e.message, "later (server code 'task.from_the_future', unknown here)");
  equal(e.status, 409);
});

Deno.test("a malformed error answer is server.bad_response with the HTTP status", () => {
  for (
    const answer of [null, "oops", [], {}, { error: "x" }, { error: { code: 7, message: [] } }]
  ) {
    const e = refusalOfAnswer(500, answer);
    equal(e.code, "server.bad_response", JSON.stringify(answer));
    equal(e.message, "HTTP 500", JSON.stringify(answer));
  }
});
