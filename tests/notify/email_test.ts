// The email channel against a real SMTP server on loopback (tests/notify/_smtp_sink.ts):
// plain to a local relay, STARTTLS and implicit TLS with login, STARTTLS refused when the
// server does not offer it or its certificate is not trusted, a 4xx retried and a 5xx final,
// the password never in a record, and agent text that tries to add headers or end the
// message early.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { FakeClock, mapEnv } from "../../src/io/mod.ts";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { configOf } from "./_config.ts";
import {
  backoffMs,
  type Delivery,
  emailChannel,
  type EmailSettings,
  type ManagerLimits,
  nodemailerSend,
  NotificationManager,
  planChannels,
} from "../../src/notify/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { notification } from "./_notification.ts";
import {
  haveOpenssl,
  mailBody,
  mailHeader,
  makeCertificate,
  type SmtpSinkOptions,
  startSmtpSink,
} from "./_smtp_sink.ts";

const PASSWORD = "PLANTED-SMTP-PASSWORD-93be";
const LIMITS: ManagerLimits = {
  timeoutMs: 30_000,
  maxAttempts: 3,
  backoffBaseMs: 1000,
  backoffMaxMs: 8000,
  queueSize: 10,
};
const TLS = await haveOpenssl();

async function deliver(
  sinkOptions: SmtpSinkOptions,
  settings: Partial<EmailSettings>,
  n = notification("run.unhealthy", "m1", { report: "file:///tmp/x/report.html" }),
  clock = new FakeClock(Date.UTC(2026, 0, 1)),
) {
  const sink = await startSmtpSink(sinkOptions);
  const deliveries: Delivery[] = [];
  const attempts: number[] = [];
  const channel = emailChannel(
    {
      host: sink.host,
      port: sink.port,
      tls: "none",
      from: "bernstein@example.test",
      to: ["oncall@example.test"],
      events: new Set(["run.unhealthy"]),
      ...settings,
    },
    nodemailerSend,
    LIMITS.timeoutMs,
  );
  const manager = new NotificationManager({
    channels: [channel],
    limits: LIMITS,
    clock,
    onDelivery: (d) => {
      deliveries.push(d);
    },
    onAttempt: (_c, _id, attempt) => {
      attempts.push(attempt);
    },
  });
  manager.notify(n);
  return { sink, manager, deliveries, attempts, clock };
}

/** Waits (on events, not time) until `done()` holds, yielding to I/O between checks. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

Deno.test("email to a relay on this host: the run's summary in plain text, the report link, bernstein's headers", async () => {
  const t = await deliver({ tls: "none" }, {});
  try {
    const [mail] = await t.sink.waitFor(1);
    await until(() => t.deliveries.length === 1);
    await t.manager.drain(0);
    deepStrictEqual([mail.from, mail.to, mail.secure], [
      "bernstein@example.test",
      ["oncall@example.test"],
      false,
    ]);
    strictEqual(mailHeader(mail.raw, "Subject"), "[bernstein] title of m1");
    strictEqual(mailHeader(mail.raw, "X-Bernstein-Event"), "run.unhealthy");
    strictEqual(mailHeader(mail.raw, "X-Bernstein-Delivery"), "m1");
    ok(/content-type:\s*text\/plain/i.test(mail.raw), "plain text");
    const body = mailBody(mail.raw);
    for (
      const want of ["text of m1", "Event:   run.unhealthy", "Report:  file:///tmp/x/report.html"]
    ) {
      ok(body.includes(want), `${want} in ${body}`);
    }
    deepStrictEqual(t.deliveries.map((d) => [d.outcome, d.attempts]), [["delivered", 1]]);
    ok(t.deliveries[0].status?.startsWith("250"), String(t.deliveries[0].status));
  } finally {
    await t.sink.close();
  }
});

Deno.test({
  name: "STARTTLS with login: the session is encrypted before the password is sent",
  ignore: !TLS,
  fn: () =>
    withTempDir(async (dir) => {
      const cert = await makeCertificate(dir);
      const login = { user: "bern", pass: PASSWORD };
      const t = await deliver({ tls: "starttls", cert, login }, {
        tls: "starttls",
        ca: cert.cert,
        auth: login,
      });
      try {
        const [mail] = await t.sink.waitFor(1);
        await until(() => t.deliveries.length === 1);
        await t.manager.drain(0);
        deepStrictEqual([mail.secure, mail.user], [true, "bern"]);
        deepStrictEqual(t.deliveries.map((d) => d.outcome), ["delivered"]);
      } finally {
        await t.sink.close();
      }
    }),
});

Deno.test({
  name: "implicit TLS (tls: implicit) delivers over TLS from the first byte",
  ignore: !TLS,
  fn: () =>
    withTempDir(async (dir) => {
      const cert = await makeCertificate(dir);
      const t = await deliver({ tls: "implicit", cert }, { tls: "implicit", ca: cert.cert });
      try {
        const [mail] = await t.sink.waitFor(1);
        await until(() => t.deliveries.length === 1);
        await t.manager.drain(0);
        strictEqual(mail.secure, true);
        deepStrictEqual(t.deliveries.map((d) => d.outcome), ["delivered"]);
      } finally {
        await t.sink.close();
      }
    }),
});

Deno.test({
  name: "STARTTLS is required: a server without it, or with an untrusted certificate, gets nothing",
  ignore: !TLS,
  fn: () =>
    withTempDir(async (dir) => {
      const cert = await makeCertificate(dir);
      const login = { user: "bern", pass: PASSWORD };
      // The relay offers no STARTTLS: the password must not go out in the clear.
      const plain = await deliver({ tls: "none" }, { tls: "starttls", auth: login });
      // The relay's certificate is signed by nobody the channel trusts (no ca).
      const untrusted = await deliver({ tls: "starttls", cert, login }, {
        tls: "starttls",
        auth: login,
      });
      try {
        for (const t of [plain, untrusted]) {
          await until(() => t.deliveries.length === 1);
          await t.manager.drain(0);
          strictEqual(t.sink.received.length, 0);
          strictEqual(t.sink.badLogins, 0, "no login was tried");
          // Final at once: no retry makes the relay offer STARTTLS or trust the certificate.
          const [d] = t.deliveries;
          deepStrictEqual([d.outcome, d.attempts], ["failed", 1], JSON.stringify(d));
          ok(/STARTTLS|certificate/i.test(String(d.error)), String(d.error));
        }
      } finally {
        await plain.sink.close();
        await untrusted.sink.close();
      }
    }),
});

Deno.test("a 4xx reply is retried after the backoff; a 5xx reply and a wrong password are final, and the password is in no record", async () => {
  const retried = await deliver({ tls: "none", dataReplies: [451] }, {});
  try {
    await until(() => retried.attempts.length === 1);
    retried.clock.advance(backoffMs(1, LIMITS));
    await retried.sink.waitFor(1);
    await until(() => retried.deliveries.length === 1);
    await retried.manager.drain(0);
    deepStrictEqual(retried.deliveries.map((d) => [d.outcome, d.attempts]), [["delivered", 2]]);
  } finally {
    await retried.sink.close();
  }
  const refused = await deliver({ tls: "none", dataReplies: [554] }, {});
  try {
    await until(() => refused.deliveries.length === 1);
    await refused.manager.drain(0);
    deepStrictEqual(refused.deliveries.map((d) => [d.outcome, d.attempts, d.status]), [
      ["failed", 1, "554"],
    ]);
  } finally {
    await refused.sink.close();
  }
  if (!TLS) return;
  await withTempDir(async (dir) => {
    const cert = await makeCertificate(dir);
    const wrong = await deliver(
      { tls: "starttls", cert, login: { user: "bern", pass: "the-right-one" } },
      { tls: "starttls", ca: cert.cert, auth: { user: "bern", pass: PASSWORD } },
    );
    try {
      await until(() => wrong.deliveries.length === 1);
      await wrong.manager.drain(0);
      const [d] = wrong.deliveries;
      deepStrictEqual([d.outcome, d.attempts, d.status], ["failed", 1, "535"]);
      ok(!JSON.stringify(d).includes(PASSWORD), JSON.stringify(d));
      strictEqual(wrong.sink.badLogins, 1);
    } finally {
      await wrong.sink.close();
    }
  });
});

Deno.test("agent text cannot add a header, a recipient or end the message early", async () => {
  const hostile = "oops\r\nBcc: attacker@evil.test\r\nX-Injected: 1";
  const n = notification("run.unhealthy", "h1", {
    title: hostile,
    text: `line one\r\n.\r\nMAIL FROM:<attacker@evil.test>\r\nBcc: attacker@evil.test\nlast line`,
  });
  const t = await deliver({ tls: "none" }, {}, n);
  try {
    const [mail] = await t.sink.waitFor(1);
    await until(() => t.deliveries.length === 1);
    await t.manager.drain(0);
    deepStrictEqual(mail.to, ["oncall@example.test"]);
    strictEqual(mailHeader(mail.raw, "Bcc"), undefined);
    strictEqual(mailHeader(mail.raw, "X-Injected"), undefined);
    ok(mailHeader(mail.raw, "Subject")?.includes("Bcc: attacker@evil.test"), "kept as text");
    const body = mailBody(mail.raw);
    ok(body.includes("MAIL FROM:<attacker@evil.test>") && body.includes("last line"), body);
    strictEqual(t.sink.received.length, 1);
  } finally {
    await t.sink.close();
  }
});

Deno.test("email settings that cannot work turn the channel off with a warning naming the key", () => {
  const base = { from: "b@example.test", to: ["o@example.test"] };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, smtp_host: "smtp.example.test", tls: "none" }, "notify.email_plaintext"],
    [
      { ...base, smtp_host: "127.0.0.1", username_env: "BERNSTEIN_U" },
      "notify.email_auth_incomplete",
    ],
    [
      {
        ...base,
        smtp_host: "127.0.0.1",
        username_env: "BERNSTEIN_TEST_UNSET_USER_41",
        password_env: "BERNSTEIN_TEST_UNSET_PASS_41",
      },
      "notify.variable_unset",
    ],
  ];
  for (const [email, code] of cases) {
    const config = configOf({ notify: { email } });
    const plan = planChannels(config, mapEnv({}));
    strictEqual(plan.email, undefined, code);
    deepStrictEqual([...new Set(plan.problems.map((p) => p.code))], [code]);
    ok(plan.problems[0].location?.startsWith("notify.email"), plan.problems[0].location);
  }
  const ok587 = planChannels(
    configOf({ notify: { email: { ...base, smtp_host: "smtp.example.test" } } }),
    mapEnv({}),
  );
  deepStrictEqual([ok587.email?.port, ok587.email?.tls], [587, "starttls"]);
  strictEqual(DEFAULT_TUNING.notify.max_attempts, 5);
});
