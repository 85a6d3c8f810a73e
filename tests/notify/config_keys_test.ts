// The notify.* and github.* keys work, so loading them must not warn that they do nothing: a
// merge once put `notify` back on the not-implemented list and every run with a webhook warned
// "accepted but has no effect yet" while it delivered.
import { deepStrictEqual, ok } from "node:assert/strict";
import {
  configKeys,
  notImplementedEntry,
  objectLayer,
  resolveConfig,
} from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";

Deno.test("notify.* and github.* keys are not on the not-implemented list and load without that warning", () => {
  const keys = configKeys().filter((k) => /^(notify|github)(\.|$)/.test(k.key));
  ok(keys.length >= 20, `found ${keys.length} keys`);
  deepStrictEqual(
    keys.filter((k) => notImplementedEntry(k.key) !== undefined).map((k) => k.key),
    [],
  );
  const r = resolveConfig({
    layers: [objectLayer("test", {
      notify: {
        on: ["run.unhealthy"],
        webhook: { url: "https://hooks.example.com/x", secret_env: "BERNSTEIN_S", format: "json" },
        email: {
          smtp_host: "smtp.example.com",
          smtp_port: 587,
          tls: "starttls",
          from: "b@example.com",
          to: ["ops@example.com"],
          username_env: "BERNSTEIN_U",
          password_env: "BERNSTEIN_P",
          events: ["run.completed"],
        },
        desktop: { enabled: true, events: ["run.unhealthy"] },
      },
      github: {
        sync_backlog: true,
        repo: "acme/widgets",
        api_url: "https://ghe.example.com/api/v3",
        labels: ["bernstein"],
        comment_on_merge: true,
      },
    })],
    env: mapEnv({}),
  });
  ok(r.config, JSON.stringify(r.problems));
  deepStrictEqual(r.problems.filter((p) => p.code === "config.not_implemented"), []);
});
