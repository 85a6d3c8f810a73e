// The notify.* and github.* keys work, so loading them must not warn that they do nothing: a
// merge once put `notify` back on the not-implemented list and every run with a webhook warned
// "accepted but has no effect yet" while it delivered. And the notification secrets are among
// the values the merge-time secrets gate refuses in an agent's diff.
import { deepStrictEqual, ok } from "node:assert/strict";
import {
  configKeys,
  notImplementedEntry,
  objectLayer,
  resolveConfig,
} from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";
import { runSecrets, secretVariableNames } from "../../src/orchestrator/mod.ts";
import { configOf } from "./_config.ts";

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

Deno.test("the notification secrets are among the run's secrets, which the merge-time secrets gate refuses in a diff", async () => {
  const config = configOf({
    notify: {
      webhook: { url_env: "BERNSTEIN_HOOK_URL", secret_env: "BERNSTEIN_HOOK_SECRET" },
      email: {
        smtp_host: "smtp.example.com",
        from: "b@example.com",
        to: ["ops@example.com"],
        username_env: "BERNSTEIN_SMTP_USER",
        password_env: "BERNSTEIN_SMTP_PASSWORD",
      },
    },
  });
  const names = secretVariableNames(config);
  for (const n of ["BERNSTEIN_HOOK_URL", "BERNSTEIN_HOOK_SECRET", "BERNSTEIN_SMTP_PASSWORD"]) {
    ok(names.includes(n), n);
  }
  ok(!names.includes("BERNSTEIN_SMTP_USER"), "a user name is not a secret");
  const secrets = await runSecrets(
    config,
    mapEnv({
      BERNSTEIN_HOOK_URL: "https://hooks.slack.com/services/T0/B0/abcdefabcdef",
      BERNSTEIN_HOOK_SECRET: "hook-secret-value",
      BERNSTEIN_SMTP_PASSWORD: "smtp-password-value",
    }),
    { auditKey: "/nonexistent/audit.key", operatorToken: "/nonexistent/auth.token" },
  );
  deepStrictEqual(secrets.map((s) => s.name).sort(), [
    "$BERNSTEIN_HOOK_SECRET",
    "$BERNSTEIN_HOOK_URL",
    "$BERNSTEIN_SMTP_PASSWORD",
  ]);
});
