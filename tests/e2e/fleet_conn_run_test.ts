// Connections in a run, against a hostile scripted agent: a plan step names a connection, the
// claim mints its secret into that agent's environment (the agent proves it got the exact
// bytes by printing their SHA-256), and the agent then tries to leak it every way it has —
// stdout, stderr, a progress report, its completion summary, a file in its change (base64 too)
// and, without a sandbox, a commit message. The secrets gate refuses the change; every file
// the run wrote (.sdd, the refused-merge record, the audit chain, ledger, task log, agent log,
// summary), the run's own output and the compliance pack carry the marker, never the secret.
// A second step without `connections:` never sees it; the chain records the resolution with
// hashes only and the spine pins the document.
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { toBase64, toHex } from "../../src/canonical/mod.ts";
import { runVerify } from "../_helpers/cli.ts";
import { git, withTempDir } from "../_helpers/temp.ts";
import { bern, prepareRepo, summaryOf } from "./_run_helpers.ts";

const SECRET = "ghp_PLANTEDsecret0123456789abcdefXYZ";
const FORMS = [
  SECRET,
  toBase64(new TextEncoder().encode(SECRET)).replace(/=+$/, ""),
  toHex(new TextEncoder().encode(SECRET)),
];
const BWRAP = await Deno.stat("/usr/bin/bwrap").then(() => true, () => false);

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toHex(new Uint8Array(d));
}

function plan(): string {
  const leak = "$BERNSTEIN_CONN_PROD_GITHUB";
  return `name: conn
cli: scripted
stages:
  - name: work
    steps:
      - title: Use the token
        connections: [prod-github]
        description: |
          @agent run sh -c 'printf "got %s\\\\n" "$(printf %s "${leak}" | sha256sum | cut -c1-64)"'
          @agent run sh -c 'echo "stdout ${leak}"; echo "stderr ${leak}" >&2'
          @agent run sh -c 'bernstein task progress "$BERNSTEIN_TASK_ID" --message "progress ${leak}"'
          @agent run sh -c 'printf %s "${leak}" > leak.txt; printf %s "${leak}" | base64 > leak64.txt'
          @agent run sh -c 'printf "note %s\\n" "${leak}" > "$HOME/notes.txt"'
          @agent run sh -c 'git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm "leak ${leak}" || true'
          @agent summary done
      - title: No connection here
        description: |
          @agent run sh -c 'test -z "$BERNSTEIN_CONN_PROD_GITHUB" && echo clean > clean.txt'
`;
}

/** A UTC day relative to today (the pack's period covers the run whatever the hour). */
function day(offset: number): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

async function filesUnder(dir: string, skip: (path: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (skip(p)) continue;
    if (e.isDirectory) out.push(...await filesUnder(p, skip));
    else if (e.isFile) out.push(p);
  }
  return out;
}

async function unzipInto(zip: string, out: string): Promise<void> {
  await Deno.mkdir(out, { recursive: true });
  const r = await new Deno.Command("unzip", { args: ["-q", "-o", zip, "-d", out] }).output();
  strictEqual(r.code, 0, new TextDecoder().decode(r.stderr));
}

function noSecretIn(text: string, where: string): void {
  for (const f of FORMS) ok(!text.includes(f), `${where} holds the secret (${f.slice(0, 8)}…)`);
}

for (const isolation of ["sandbox", "none"] as const) {
  Deno.test({
    name:
      `a step's connection reaches only its agent, and a hostile agent cannot leak it (${isolation})${
        isolation === "sandbox" && !BWRAP ? " (ignored: no bwrap)" : ""
      }`,
    ignore: isolation === "sandbox" && !BWRAP,
    fn: async () => {
      await withTempDir(async (dir) => {
        await prepareRepo(dir, plan(), {
          isolation,
          ...(isolation === "none" ? { policy: { enabled: false } } : {}),
        });
        const env = { BERNSTEIN_SECRET_GH: SECRET };
        strictEqual((await bern(dir, ["init"])).code, 0);
        const created = await bern(dir, [
          "conn",
          "create",
          "prod-github",
          "--secret",
          "env:BERNSTEIN_SECRET_GH",
          "--scope",
          "repo:read",
        ]);
        strictEqual(created.code, 0, created.stderr);
        const run = await bern(dir, ["run", "plan.yaml", "--json"], env);
        const summary = summaryOf(run);
        const outputs = [run.stdout, run.stderr];
        // The agent got the exact secret: it printed its SHA-256.
        const log = (await filesUnder(join(dir, ".sdd/runtime"), () => false))
          .filter((p) => p.endsWith(".log") && p.includes("use-the-token"));
        strictEqual(log.length, 1, JSON.stringify(log));
        const logText = await Deno.readTextFile(log[0]);
        ok(logText.includes(`got ${await sha256Hex(SECRET)}`), logText);
        // Its attempts to print it are in the log, redacted.
        match(logText, /stdout \[REDACTED: connection prod-github\]/);
        match(logText, /stderr \[REDACTED: connection prod-github\]/);
        // The change carried it: the secrets gate refused the merge, naming where, not what.
        const listed = await bern(dir, ["task", "list", "--json"]);
        outputs.push(listed.stdout, listed.stderr, JSON.stringify(summary));
        const tasks = JSON.parse(listed.stdout).tasks as { id: string; status: string }[];
        const used = tasks.find((t) => t.id.includes("use-the-token"));
        const other = tasks.find((t) => t.id.includes("no-connection"));
        strictEqual(other?.status, "closed", JSON.stringify(tasks));
        strictEqual(used?.status, "failed", JSON.stringify(tasks));
        const show = await bern(dir, ["task", "show", used.id, "--json"]);
        outputs.push(show.stdout, show.stderr);
        match(show.stdout, /secrets/);
        match(show.stdout, /leak\.txt: connection prod-github/);
        match(show.stdout, /leak64\.txt: connection prod-github/);
        // Unsandboxed, the agent committed itself: its message carries the secret too.
        if (isolation === "none") {
          match(show.stdout, /commit [0-9a-f]{12} \(author or message\): connection prod-github/);
        }
        // The resolution is on the chain with hashes only; the spine pins the document.
        const audit = await bern(dir, ["conn", "audit", "prod-github", "--json"]);
        strictEqual(audit.code, 0, audit.stderr);
        const resolutions = JSON.parse(audit.stdout).resolutions;
        strictEqual(resolutions.length, 1, audit.stdout);
        strictEqual(resolutions[0].task_id, used.id);
        outputs.push(audit.stdout);
        const verify = await bern(dir, ["audit", "verify"]);
        strictEqual(verify.code, 0, verify.stdout + verify.stderr);
        outputs.push(verify.stdout, verify.stderr);
        const pack = await bern(dir, [
          "compliance",
          "pack",
          "--since",
          day(-1),
          "--until",
          day(1),
          "--org",
          "Acme",
          "--output",
          join(dir, "..", "pack.zip"),
        ]);
        outputs.push(pack.stdout, pack.stderr);
        if (pack.code === 0) await unzipInto(join(dir, "..", "pack.zip"), join(dir, "..", "pack"));
        for (const text of outputs) noSecretIn(text, "command output");
        // Every file the run wrote: .sdd (chain, ledger, task log, agent logs, records), minus
        // what the agent itself wrote in its worktree (its change, refused above), and
        // git's store (the refused branch keeps the agent's commits; the operator's branch is
        // checked below).
        const files = await filesUnder(
          dir,
          (p) =>
            p.includes("/.sdd/worktrees/") ||
            p.endsWith("/.git") || p.endsWith(".zip"),
        );
        ok(files.length > 20, `only ${files.length} files`);
        // Its private HOME was scrubbed when it ended: the note it wrote there holds the marker.
        const notes = (await filesUnder(join(dir, ".sdd/runtime/homes"), () => false))
          .filter((p) => p.endsWith("/notes.txt"));
        strictEqual(notes.length, 1, JSON.stringify(notes));
        strictEqual(await Deno.readTextFile(notes[0]), "note [REDACTED: connection prod-github]\n");
        for (const path of files) {
          noSecretIn(await Deno.readTextFile(path).catch(() => ""), path);
        }
        for (const path of await filesUnder(join(dir, "..", "pack"), () => false).catch(() => [])) {
          noSecretIn(await Deno.readTextFile(path).catch(() => ""), path);
        }
        strictEqual(pack.code, 0, pack.stderr);
        // The pack carries the window's fleet events, and the offline verifier checks them.
        const fleetLines = (await Deno.readTextFile(join(dir, "..", "pack", "fleet-events.jsonl")))
          .trim().split("\n").map((l) => JSON.parse(l));
        const types = fleetLines.map((e: { event_type: string }) => e.event_type);
        ok(types.includes("fleet.conn_create") && types.includes("fleet.conn_resolve"), `${types}`);
        const verified = await runVerify(["pack", join(dir, "..", "pack.zip")]);
        strictEqual(verified.code, 0, verified.stdout + verified.stderr);
        // Nothing of it reached the operator's branch: commits, messages, contents.
        noSecretIn(
          await git(dir, "log", "-p", "--format=%an %ae %cn %ce %B", "feature"),
          "feature",
        );
        strictEqual(await git(dir, "show", "feature:clean.txt"), "clean\n");
        const shown = await bern(dir, ["audit", "show", "--json"]);
        noSecretIn(shown.stdout, "audit show");
        // The progress report reached the chain, redacted by the task server.
        ok(shown.stdout.includes("progress [REDACTED: connection prod-github]"), "no progress");
      });
    },
  });
}
