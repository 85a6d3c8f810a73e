// Storage URLs: what is accepted, what is refused (naming key and layer, never echoing the URL),
// and the password-free forms that are all output ever sees.
import assert from "node:assert/strict";
import { parseEndpoint, scrubSecrets, type UrlSource } from "../../src/storage/mod.ts";
import { redactUrlPassword, shownConfigValue } from "../../src/config/mod.ts";

const PG: UrlSource = { key: "storage.database_url", layer: "bernstein.yaml" };
const RD: UrlSource = { key: "storage.redis_url", layer: "env:BERNSTEIN_REDIS_URL" };

Deno.test("postgres URLs: host, port, credentials, database, sslmode and the shown form", () => {
  const e = parseEndpoint(
    "postgres",
    "postgres://app:p%40ss%2Fw0rd@db.internal:6543/work?sslmode=require",
    PG,
  );
  assert.deepEqual(
    [e.host, e.port, e.user, e.password, e.database, e.tls, e.address],
    ["db.internal", 6543, "app", "p@ss/w0rd", "work", "require", "db.internal:6543"],
  );
  assert.equal(e.shown, "postgres://app:***@db.internal:6543/work?sslmode=require");
  const d = parseEndpoint("postgres", "postgresql://u@127.0.0.1", PG);
  assert.deepEqual([d.port, d.password, d.database, d.tls], [5432, undefined, "u", "prefer"]);
  const v6 = parseEndpoint("postgres", "postgres://u:x@[::1]:5433/db", PG);
  assert.deepEqual([v6.host, v6.address], ["::1", "[::1]:5433"]);
  assert.equal(
    parseEndpoint("postgres", "postgres://h/db?sslmode=verify-ca", PG).tls,
    "verify-full",
  );
});

Deno.test("redis URLs: database index, TLS scheme, default port", () => {
  const r = parseEndpoint("redis", "rediss://:s3cret@cache:6380/2", RD);
  assert.deepEqual([r.host, r.port, r.password, r.database, r.tls], [
    "cache",
    6380,
    "s3cret",
    "2",
    "verify-full",
  ]);
  assert.equal(r.shown, "rediss://:***@cache:6380/2");
  assert.deepEqual(
    (({ port, database, tls }) => [port, database, tls])(
      parseEndpoint("redis", "redis://localhost", RD),
    ),
    [6379, "0", "disable"],
  );
});

Deno.test("bad URLs are refused with exit 2 naming key and layer, never the URL or its password", () => {
  const cases: [string, string, UrlSource, RegExp][] = [
    ["postgres", "not a url with hunter2", PG, /not a URL/],
    ["postgres", "mysql://u:hunter2@h/db", PG, /scheme 'mysql:' is not postgres: or postgresql:/],
    ["postgres", "postgres://u:hunter2@h:0/db", PG, /port 0 is out of range|not a URL/],
    [
      "postgres",
      "postgres://u:hunter2@h/db?sslmode=sometimes",
      PG,
      /sslmode 'sometimes' is not one of/,
    ],
    [
      "postgres",
      "postgres://u:hunter2@h/db?application_name=x",
      PG,
      /unknown option 'application_name'/,
    ],
    ["postgres", "postgres:///db?host=/var/run/postgresql", PG, /Unix sockets are not supported/],
    ["redis", "redis://:hunter2@h/zero", RD, /database after the host must be a number/],
    ["redis", "http://:hunter2@h", RD, /scheme 'http:' is not redis: or rediss:/],
  ];
  for (const [engine, url, source, why] of cases) {
    assert.throws(
      () => parseEndpoint(engine as "postgres" | "redis", url, source),
      (e: unknown) => {
        const err = e as { code?: string; message?: string; exitCode?: number; hint?: string };
        assert.equal(err.code, "storage.url_invalid", url);
        assert.equal(err.exitCode, 2);
        assert.ok(err.message?.startsWith(`${source.key} (set by ${source.layer}): `), err.message);
        assert.match(err.message ?? "", why, url);
        assert.ok(!JSON.stringify([err.message, err.hint]).includes("hunter2"), url);
        return true;
      },
    );
  }
});

Deno.test("driver messages are scrubbed of the password, plain and percent-encoded", () => {
  const e = parseEndpoint("postgres", "postgres://u:a%20b@h/db", PG);
  assert.equal(scrubSecrets("failed for a b and a%20b", e), "failed for *** and ***");
});

Deno.test("config values: storage URLs are shown without their password, other keys as they are", () => {
  assert.equal(redactUrlPassword("postgres://u:pw@h:1/db"), "postgres://u:***@h:1/db");
  assert.equal(redactUrlPassword("redis://h:6379"), "redis://h:6379");
  assert.equal(redactUrlPassword("not a url //u:pw@h"), "not a url //u:***@h");
  assert.equal(shownConfigValue("storage.redis_url", "redis://:pw@h"), "redis://:***@h");
  assert.equal(shownConfigValue("goal", "postgres://u:pw@h"), "postgres://u:pw@h");
});
