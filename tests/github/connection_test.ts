// The GitHub token from a `bernstein conn` connection (`github.connection`), against the fake
// API: the resolved secret is the bearer token (over GITHUB_TOKEN), each resolution is on the
// chain (fleet.conn_resolve, or the run's own audit sink for the merge comment), a connection
// that gives no token fails the sync loudly and sends nothing — never a fallback to the
// environment — and doctor shows the connection and its reference, never the secret.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { ensureAuditKey, MemoryAuditSink } from "../../src/audit/mod.ts";
import { ConnectionStore, ensureInstallIdentity, readFleetChain } from "../../src/fleet/mod.ts";
import { FakeClock, mapEnv, systemRandom } from "../../src/io/mod.ts";
import {
  githubCommentChannel,
  githubConnectionSecrets,
  githubDoctor,
  syncGithubBacklog,
} from "../../src/orchestrator/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";
import { configOf } from "../notify/_config.ts";
import { startFakeGitHub } from "./_fake_github.ts";

const TOKEN = "ghp_CONNECTIONTOKENabcdef0123456789";
const OTHER = "ghp_ENVIRONMENTTOKENshouldnotbeused";

interface Project {
  dir: string;
  sdd: string;
  keyPath: string;
}

/** A repository with the audit key outside it and connection `gh` → env:BERNSTEIN_SECRET_GH. */
async function project(root: string): Promise<Project> {
  const dir = join(root, "repo");
  await Deno.mkdir(dir);
  await makeRepo(dir);
  const sdd = join(dir, ".sdd");
  const keyPath = join(root, "state", "audit.key");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  const auditKey = await ensureAuditKey(keyPath, systemRandom);
  const identity = await ensureInstallIdentity(sdd, systemRandom);
  await new ConnectionStore({ sdd, auditKey, random: systemRandom }).create(identity, {
    name: "gh",
    secret: { kind: "env", name: "BERNSTEIN_SECRET_GH" },
    scope: "repo",
    defaults: {},
  });
  return { dir, sdd, keyPath };
}

function parts(
  p: Project,
  github: Record<string, unknown>,
  env: Record<string, string>,
) {
  return {
    config: configOf({ github: { sync_backlog: true, repo: "acme/widget", ...github } }),
    root: p.dir,
    sdd: p.sdd,
    env: mapEnv({ BERNSTEIN_AUDIT_KEY_PATH: p.keyPath, ...env }),
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
  };
}

async function connEvents(p: Project): Promise<string[]> {
  const key = await ensureAuditKey(p.keyPath, systemRandom);
  const chain = await readFleetChain(join(p.sdd, "audit"), key);
  strictEqual(chain.unauthenticated, 0);
  return chain.events.map((e) => e.event_type).filter((t) => t.startsWith("fleet.conn_"));
}

Deno.test("github.connection: its secret is the token (over GITHUB_TOKEN), the resolution is on the chain, the token in no message", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 7, title: "Seven" }]);
  try {
    await withTempDir(async (root) => {
      const p = await project(root);
      const { warnings, synced } = await syncGithubBacklog(
        parts(p, { api_url: fake.apiUrl, connection: "gh" }, {
          BERNSTEIN_SECRET_GH: TOKEN,
          GITHUB_TOKEN: OTHER,
        }),
      );
      deepStrictEqual(warnings.map((w) => w.code), ["github.synced"]);
      strictEqual(synced?.created, 1);
      ok(fake.requests.length > 0 && fake.requests.every((r) => r.auth === `Bearer ${TOKEN}`));
      ok(!JSON.stringify(warnings).includes(TOKEN));
      deepStrictEqual(await connEvents(p), ["fleet.conn_create", "fleet.conn_resolve"]);
      // Doctor names the connection and its reference; it resolves nothing.
      const doctor = await githubDoctor(
        parts(p, { connection: "gh" }, { BERNSTEIN_SECRET_GH: TOKEN }),
      );
      deepStrictEqual(doctor.map((c) => [c.status, c.detail]), [[
        "OK",
        "backlog sync on: acme/widget (github.repo) via https://api.github.com; token: " +
        "connection gh v1 (env:BERNSTEIN_SECRET_GH)",
      ]]);
      deepStrictEqual(await connEvents(p), ["fleet.conn_create", "fleet.conn_resolve"]);
    });
  } finally {
    await fake.close();
  }
});

Deno.test("a connection that gives no token fails the sync loudly, sends nothing and does not fall back to GITHUB_TOKEN", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 7, title: "Seven" }]);
  try {
    await withTempDir(async (root) => {
      const p = await project(root);
      // The connection's variable is unset: refused (and the refusal is on the chain).
      const unset = await syncGithubBacklog(
        parts(p, { api_url: fake.apiUrl, connection: "gh" }, { GITHUB_TOKEN: TOKEN }),
      );
      deepStrictEqual(unset.warnings.map((w) => w.code), ["github.sync_failed"]);
      strictEqual(unset.synced, undefined);
      ok(
        unset.warnings[0].message.startsWith(
          "!!! GitHub backlog sync FAILED: github.connection 'gh' gives no token: ",
        ) && unset.warnings[0].message.includes("BERNSTEIN_SECRET_GH is not set"),
        unset.warnings[0].message,
      );
      ok(unset.warnings[0].hint?.includes("bernstein conn check gh"));
      strictEqual(fake.requests.length, 0, "nothing was sent, with or without a token");
      deepStrictEqual(await connEvents(p), ["fleet.conn_create", "fleet.conn_refuse"]);
      // An unknown connection: the same.
      const unknown = await syncGithubBacklog(
        parts(p, { api_url: fake.apiUrl, connection: "nope" }, { GITHUB_TOKEN: TOKEN }),
      );
      deepStrictEqual(unknown.warnings.map((w) => w.code), ["github.sync_failed"]);
      strictEqual(fake.requests.length, 0);
      const doctorUnknown = await githubDoctor(parts(p, { connection: "nope" }, {}));
      deepStrictEqual(doctorUnknown.map((c) => c.status), ["WARN"]);
      ok(doctorUnknown[0].hint?.includes("bernstein conn create nope"), doctorUnknown[0].hint);
      // The document copied from another install (this install's identity is not its signer).
      await Deno.remove(join(p.sdd, "keys"), { recursive: true });
      await ensureInstallIdentity(p.sdd, systemRandom);
      const foreign = await syncGithubBacklog(
        parts(p, { api_url: fake.apiUrl, connection: "gh" }, { BERNSTEIN_SECRET_GH: TOKEN }),
      );
      ok(foreign.warnings[0].message.includes("does not verify"), foreign.warnings[0].message);
      strictEqual(fake.requests.length, 0);
      const doctor = await githubDoctor(
        parts(p, { connection: "gh" }, { BERNSTEIN_SECRET_GH: TOKEN }),
      );
      deepStrictEqual(doctor.map((c) => c.status), ["WARN"]);
      ok(doctor[0].detail.includes("not signed by this install"), doctor[0].detail);
      ok(!JSON.stringify([unset, unknown, foreign, doctor]).includes(TOKEN));
    });
  } finally {
    await fake.close();
  }
});

Deno.test("the merge comment resolves its connection into the run's audit sink and posts with its token", async () => {
  const fake = startFakeGitHub(TOKEN);
  fake.repos.set("acme/widget", [{ number: 7, title: "Seven" }]);
  try {
    await withTempDir(async (root) => {
      const p = await project(root);
      const env = { BERNSTEIN_SECRET_GH: TOKEN };
      await syncGithubBacklog(parts(p, { api_url: fake.apiUrl, connection: "gh" }, env));
      const audit = new MemoryAuditSink();
      const channel = await githubCommentChannel({
        ...parts(p, { api_url: fake.apiUrl, connection: "gh", comment_on_merge: true }, env),
        audit,
        runId: "brave-otter-3fa9c2",
      });
      ok("send" in channel, JSON.stringify(channel));
      deepStrictEqual(
        audit.records.map((r) => [r.event_type, r.details.run_id]),
        [["fleet.conn_resolve", "brave-otter-3fa9c2"]],
      );
      const sent = await channel.send({
        id: "n1",
        event: "task.merged",
        severity: "info",
        occurred_at: "2026-01-01T00:00:00.000Z",
        project: "widget",
        run: { id: "brave-otter-3fa9c2", branch: "main" },
        title: "Task gh-7 merged",
        text: "",
        details: { task_id: "gh-7", sha: "0123abcd", files: 1 },
        report: null,
      }, new AbortController().signal);
      strictEqual(sent.ok, true);
      strictEqual(fake.comments.length, 1);
      strictEqual(fake.requests.at(-1)?.auth, `Bearer ${TOKEN}`);
      // No token: the channel is off and says why; nothing is posted.
      const off = await githubCommentChannel(
        parts(p, { api_url: fake.apiUrl, connection: "gh", comment_on_merge: true }, {}),
      );
      ok("code" in off && off.code === "github.comment_off", JSON.stringify(off));
      ok(off.message.includes("gives no token") && off.message.endsWith("no comment is posted"));
    });
  } finally {
    await fake.close();
  }
});

Deno.test("the connection's token is a secret of the run for the merge gate, read without a resolution", async () => {
  await withTempDir(async (root) => {
    const p = await project(root);
    const secrets = await githubConnectionSecrets(
      parts(p, { connection: "gh" }, { BERNSTEIN_SECRET_GH: TOKEN }),
    );
    deepStrictEqual(secrets, [{ name: "the token of connection gh", value: TOKEN }]);
    deepStrictEqual(await connEvents(p), ["fleet.conn_create"], "nothing resolved");
    deepStrictEqual(await githubConnectionSecrets(parts(p, { connection: "gh" }, {})), []);
    deepStrictEqual(await githubConnectionSecrets(parts(p, { connection: "nope" }, {})), []);
    deepStrictEqual(
      await githubConnectionSecrets(parts(p, {}, { BERNSTEIN_SECRET_GH: TOKEN })),
      [],
    );
  });
});
