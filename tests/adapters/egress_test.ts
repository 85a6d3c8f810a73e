// Which hosts an agent's egress allowlist names: the task server, its endpoint (or, without
// one, its provider's hosts), base-URL variables it was given, and `network.egress`.
import assert from "node:assert/strict";
import { agentEgress, PROVIDER_HOSTS } from "../../src/adapters/mod.ts";

Deno.test("an agent with an endpoint reaches the endpoint and the task server, not its provider", () => {
  assert.deepEqual(
    agentEgress({
      adapter: "claude",
      endpointUrl: "http://127.0.0.1:8080/v1",
      env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:8080", HTTPS_PROXY: "http://10.0.0.1:3128" },
      serverUrl: "http://127.0.0.1:4000",
    }),
    ["127.0.0.1:4000", "127.0.0.1:8080"],
  );
});

Deno.test("without an endpoint the provider's hosts; base URLs and network.egress are added", () => {
  assert.deepEqual(
    agentEgress({
      adapter: "codex",
      env: { OLLAMA_HOST: "127.0.0.1:11434", OPENAI_BASE_URL: "https://gw.example.com/v1" },
      extra: ["pypi.org:443"],
    }),
    [
      "127.0.0.1:11434",
      "api.openai.com:443",
      "chatgpt.com:443",
      "gw.example.com:443",
      "pypi.org:443",
    ],
  );
  assert.deepEqual(agentEgress({ adapter: "scripted", env: {} }), []);
  for (const hosts of Object.values(PROVIDER_HOSTS)) {
    for (const h of hosts) assert.match(h, /^[a-z0-9.-]+:\d+$/);
  }
});
