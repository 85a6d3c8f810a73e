// `bernstein notify test` and doctor's notification lines, through the real binary and its
// permission set, against a loopback webhook sink: a signed test delivery, a refusal with
// the receiver's answer, a channel that is off because its secret variable is not visible,
// and bad --channel values.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { checkDelivery } from "../../src/notify/mod.ts";
import { runBernstein } from "../_helpers/cli.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";
import { startSink } from "../notify/_sink.ts";
import { startSmtpSink } from "../notify/_smtp_sink.ts";

const SECRET = "PLANTED-NOTIFY-CLI-SECRET-6d1e";

async function project(dir: string, notify: string): Promise<void> {
  await makeRepo(dir);
  await Deno.writeTextFile(`${dir}/bernstein.yaml`, `notify:\n${notify}`);
}

Deno.test("notify test sends one signed notify.test to the webhook and reports it; a 500 is exit 1", async () => {
  const sink = startSink([{ status: 200 }, { status: 500 }]);
  try {
    await withTempDir(async (dir) => {
      await project(
        dir,
        `  webhook:\n    url: ${sink.url}\n    secret_env: BERNSTEIN_HOOK_SECRET\n` +
          `    events: [run.unhealthy]\n`,
      );
      const env = { BERNSTEIN_HOOK_SECRET: SECRET };
      const sent = await runBernstein(["notify", "test", "--json"], { cwd: dir, env });
      strictEqual(sent.code, 0, sent.stderr);
      const report = JSON.parse(sent.stdout);
      strictEqual(report.ok, true);
      deepStrictEqual(
        report.results.map((r: Record<string, unknown>) => [
          r.channel,
          r.outcome,
          r.attempts,
          r.status,
        ]),
        [["webhook", "delivered", 1, "HTTP 200"]],
      );
      ok(!sent.stdout.includes("SECRETPATH"), "the hook's path is not printed");
      const [got] = await sink.waitFor(1);
      strictEqual((got.json as { event: string }).event, "notify.test");
      strictEqual(checkDelivery(SECRET, got.body, got.headers, Date.now() / 1000), undefined);
      const refused = await runBernstein(["notify", "test"], { cwd: dir, env });
      strictEqual(refused.code, 1, refused.stdout);
      ok(
        /failed\s+webhook → http:\/\/127\.0\.0\.1:\d+\/…\s+\(HTTP 500/.test(refused.stdout),
        refused.stdout,
      );
      ok(!(sent.stdout + sent.stderr + refused.stdout + refused.stderr).includes(SECRET));
    });
  } finally {
    await sink.close();
  }
});

Deno.test("a secret variable bernstein cannot see turns the webhook off: notify test and doctor say why", async () => {
  const sink = startSink();
  try {
    await withTempDir(async (dir) => {
      // MY_HOOK_SECRET is outside the binary's env permission: it reads as unset.
      await project(dir, `  webhook:\n    url: ${sink.url}\n    secret_env: MY_HOOK_SECRET\n`);
      const env = { MY_HOOK_SECRET: SECRET };
      const r = await runBernstein(["notify", "test", "--json"], { cwd: dir, env });
      strictEqual(r.code, 1);
      const report = JSON.parse(r.stdout);
      deepStrictEqual(report.results, []);
      deepStrictEqual(report.off.map((o: { code: string }) => o.code), ["notify.variable_unset"]);
      strictEqual(sink.received.length, 0, "never sent unsigned");
      const doctor = JSON.parse(
        (await runBernstein(["doctor", "--json"], { cwd: dir, env })).stdout,
      );
      const lines = doctor.checks.filter((c: { name: string }) => c.name === "notify");
      deepStrictEqual(lines.map((c: { status: string }) => c.status), ["WARN"]);
      ok(lines[0].detail.includes("MY_HOOK_SECRET, which is not set"), lines[0].detail);
      ok(lines[0].hint.includes("BERNSTEIN_"), lines[0].hint);
    });
  } finally {
    await sink.close();
  }
});

Deno.test("doctor lists each channel with where it goes and its events; bad --channel values", async () => {
  await withTempDir(async (dir) => {
    await project(
      dir,
      "  webhook_url: https://hooks.example.test/services/T0/SECRET-PATH\n" +
        "  on: [run.unhealthy, task.failed]\n",
    );
    const doctor = JSON.parse((await runBernstein(["doctor", "--json"], { cwd: dir })).stdout);
    deepStrictEqual(
      doctor.checks.filter((c: { name: string }) => c.name === "notify")
        .map((c: { status: string; detail: string }) => [c.status, c.detail]),
      [["OK", "webhook → https://hooks.example.test/…; events: run.unhealthy, task.failed"]],
    );
    const shown = await runBernstein(["config", "get", "notify.webhook_url"], { cwd: dir });
    ok(shown.stdout.startsWith("https://hooks.example.test/…"), shown.stdout);
    const listed = await runBernstein(["config", "list"], { cwd: dir });
    ok(!listed.stdout.includes("SECRET-PATH"), "config list hides the hook's path");
    const unknown = await runBernstein(["notify", "test", "--channel", "sms"], { cwd: dir });
    strictEqual(unknown.code, 2);
    ok(unknown.stderr.includes("notify.unknown_channel"), unknown.stderr);
    const email = await runBernstein(["notify", "test", "--channel", "email"], { cwd: dir });
    strictEqual(email.code, 1);
    ok(email.stdout.includes("notify.email is not configured"), email.stdout);
  });
});

Deno.test("notify test --channel email delivers through the real binary's permission set", async () => {
  const smtp = await startSmtpSink({ tls: "none" });
  try {
    await withTempDir(async (dir) => {
      await project(
        dir,
        `  email:\n    smtp_host: 127.0.0.1\n    smtp_port: ${smtp.port}\n    tls: none\n` +
          `    from: bernstein@example.test\n    to: [oncall@example.test]\n`,
      );
      const r = await runBernstein(["notify", "test", "--channel", "email", "--json"], {
        cwd: dir,
      });
      strictEqual(r.code, 0, r.stdout + r.stderr);
      const [mail] = await smtp.waitFor(1);
      ok(mail.raw.includes("Test notification from bernstein"), mail.raw);
      deepStrictEqual(JSON.parse(r.stdout).results.map((x: { outcome: string }) => x.outcome), [
        "delivered",
      ]);
    });
  } finally {
    await smtp.close();
  }
});
