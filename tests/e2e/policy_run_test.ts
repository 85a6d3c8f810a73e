// The tool-call policy in whole runs with the scripted agent (its pre-tool hook is Claude's):
// every call is decided by the run's task server with the rules of .bernstein/ — an immune
// write refused, an always-allowed grep, an integrity-guard ask approved by the operator on the
// command line, an ask rule denied through the HTTP endpoint, an ask nobody answers denied at
// the timeout — each a `policy.decision` audit event, counted per task in the ledger and in
// the summary; adapters without a hook are named at the start and refused when configured so.
import assert from "node:assert/strict";
import { join } from "node:path";
import { git, withTempDir } from "../_helpers/temp.ts";
import {
  bern,
  eventsOf,
  operatorTokenOf,
  prepareRepo,
  scriptedPlan,
  startBernstein,
  step,
  summaryOf,
} from "./_run_helpers.ts";

const ALWAYS = "- id: grep-src\n  tool: grep\n  input_pattern: ^src/\n";
const RULES = [
  "ask:",
  "  - id: ask-push",
  "    tool: bash",
  "    input_field: command",
  '    input_pattern: "git push*"',
  "",
].join("\n");

async function withRules(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, ".bernstein"), { recursive: true });
  await Deno.writeTextFile(join(dir, ".bernstein", "always_allow.yaml"), ALWAYS);
  await Deno.writeTextFile(join(dir, ".bernstein", "rules.yaml"), RULES);
  await git(dir, "add", ".bernstein");
  await git(dir, "commit", "-q", "-m", "policy");
}

/** The JSON event lines of a running `bernstein run --json`, as they come. */
async function* jsonEvents(child: Deno.ChildProcess): AsyncGenerator<Record<string, unknown>> {
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.startsWith("{")) yield JSON.parse(line);
    }
  }
}

interface AuditRecord {
  actor: string;
  event_type: string;
  details: Record<string, unknown>;
}

async function auditOf(dir: string, type: string): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for (const e of Deno.readDirSync(join(dir, ".sdd", "audit"))) {
    if (!e.name.endsWith(".jsonl")) continue;
    for (const line of (await Deno.readTextFile(join(dir, ".sdd", "audit", e.name))).split("\n")) {
      if (line.trim() === "") continue;
      const r = JSON.parse(line) as AuditRecord;
      if (r.event_type === type) out.push(r);
    }
  }
  return out;
}

async function denyOverHttp(dir: string, id: string, note: string): Promise<number> {
  const runtime = join(dir, ".sdd", "runtime");
  const port = (await Deno.readTextFile(join(runtime, "server.port"))).trim();
  const token = await operatorTokenOf(dir);
  const res = await fetch(`http://127.0.0.1:${port}/approvals/${id}/deny`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ note }),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("a run decides every call: immune write refused, asks approved and denied by the operator, all audited and counted", async () => {
  await withTempDir(async (dir) => {
    await prepareRepo(
      dir,
      scriptedPlan(step("Work", [
        '@agent tool Read {"file_path":"README.md"}',
        "@agent write .bernstein/always_allow.yaml - id: everything",
        '@agent tool Bash {"command":"rm -rf /"}',
        '@agent tool Bash {"command":"git push origin main"}',
        '@agent tool Grep {"pattern":"x","path":"src/a"}',
        "@agent write ok.txt fine",
      ])),
      { tuning: { policy: { approval_timeout_s: 600 } } },
    );
    await withRules(dir);
    const child = startBernstein(dir, ["run", "plan.yaml", "--json"]);
    const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    const errText = (async () => {
      let all = "";
      for (;;) {
        const { value, done } = await stderr.read();
        if (done) return all;
        all += value;
      }
    })();
    const events: Record<string, unknown>[] = [];
    let parked = 0;
    for await (const event of jsonEvents(child)) {
      events.push(event);
      if (event.type !== "policy.parked") continue;
      const id = String(event.approval_id);
      parked++;
      if (parked === 1) {
        const list = await bern(dir, ["approvals", "list", "--json"]);
        assert.equal(list.code, 0, list.stderr);
        const approvals = JSON.parse(list.stdout).approvals;
        assert.deepEqual(
          approvals.map((
            a: { id: string; summary: string; status: string },
          ) => [a.id, a.summary, a.status]),
          [
            [id, "Bash rm -rf /", "pending"],
          ],
        );
        assert.deepEqual(approvals[0].ask.guards, ["dangerous_delete"]);
        const ok = await bern(dir, ["approvals", "approve", id, "--note", "scratch machine"]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.match(ok.stdout, new RegExp(`^${id} approved: Bash rm -rf /`));
        const twice = await bern(dir, ["approvals", "deny", id]);
        assert.equal(twice.code, 1);
        assert.match(twice.stderr, /error\[approval\.not_pending\]/);
      } else {
        assert.equal(await denyOverHttp(dir, id, "no pushing from agents"), 200);
      }
    }
    const code = (await child.status).code;
    assert.equal(code, 0, await errText);
    assert.equal(parked, 2);

    const decisions = await auditOf(dir, "policy.decision");
    assert.deepEqual(
      decisions.map((d) => [d.details.tool, d.details.action, d.details.decision_reason, d.actor]),
      [
        ["Read", "allow", "defaultAllow", "policy"],
        ["Write", "deny", "immunePath", "policy"],
        ["Bash", "ask", "integrityGuard", "policy"],
        ["Bash", "allow", "approvalGranted", "operator"],
        ["Bash", "ask", "askRule", "policy"],
        ["Bash", "deny", "approvalDenied", "operator"],
        ["Grep", "allow", "alwaysAllowRule", "policy"],
        ["Write", "allow", "defaultAllow", "policy"],
      ],
    );
    for (const d of decisions) {
      assert.match(String(d.details.input_sha256), /^sha256:[0-9a-f]{64}$/);
      assert.equal(d.details.task_id, "1.1-work");
    }
    assert.equal(decisions[6].details.rule_id, "grep-src");
    assert.equal(decisions[6].details.tier, "always_allow");
    assert.deepEqual(decisions[3].details.guards, ["dangerous_delete"]);
    assert.match(String(decisions[5].details.message), /no pushing from agents/);

    const summary = summaryOf({
      code,
      stdout: events.map((e) => JSON.stringify(e)).join("\n"),
      stderr: "",
    });
    const counts = { decisions: 8, allow: 4, deny: 2, ask: 2 };
    assert.deepEqual(summary.policy, {
      enabled: true,
      unenforced_adapters: [],
      ...counts,
      by_task: { "1.1-work": counts },
    });
    const runId = String(summary.run_id);
    const ledger =
      (await Deno.readTextFile(join(dir, ".sdd", "runtime", "ledger", runId, "000000.jsonl")))
        .trim().split("\n").map((l) => JSON.parse(l));
    const completed = ledger.find((r) => r.kind === "task.completed");
    assert.deepEqual(completed.payload.policy, counts);
    // The hostile write never happened: the rules on the branch are the operator's.
    assert.equal(await Deno.readTextFile(join(dir, ".bernstein", "always_allow.yaml")), ALWAYS);
    assert.equal(await Deno.readTextFile(join(dir, "ok.txt")), "fine\n");
    const verify = await bern(dir, ["audit", "verify"]);
    assert.equal(verify.code, 0, verify.stdout);
  });
});

Deno.test("an ask nobody answers is denied at the timeout; unhooked adapters are named, or refused", async () => {
  await withTempDir(async (dir) => {
    const plan = `stages:
  - name: s
    steps:
${step("Scripted", ['@agent tool Bash {"command":"rm -rf /srv/data"}'], "        cli: scripted\n")}
${step("Generic", ["anything"], "        cli: generic\n")}
`;
    const generic = { adapters: { generic: { command: ["sh", "-c", "cat > /dev/null"] } } };
    await prepareRepo(dir, plan, { ...generic, tuning: { policy: { approval_timeout_s: 1 } } });
    const run = await bern(dir, ["run", "plan.yaml", "--json"]);
    const events = eventsOf(run);
    const start = events.find((e) => e.type === "policy.started");
    assert.match(String(start?.summary), /agents of generic run WITHOUT tool-call policy/);
    const denied = events.find((e) => e.type === "policy.denied");
    assert.match(String(denied?.reason), /approvalTimeout: no operator answered within 1 s/);
    const summary = summaryOf(run);
    assert.deepEqual((summary.policy as { unenforced_adapters: string[] }).unenforced_adapters, [
      "generic",
    ]);
    const spawned = await auditOf(dir, "agent.spawned");
    const notes = spawned.find((s) => s.details.adapter === "generic")?.details.notes as string[];
    assert.ok(
      notes.some((n) => n.startsWith("runs without tool-call policy: generic")),
      String(notes),
    );

    // policy.unenforced: refuse stops the run before anything starts.
    await Deno.writeTextFile(join(dir, "bernstein.yaml"), "policy:\n  unenforced: refuse\n");
    await git(dir, "add", "bernstein.yaml");
    await git(dir, "commit", "-q", "-m", "refuse");
    const refused = await bern(dir, ["run", "plan.yaml", "--fresh"]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /error\[policy\.unenforced\]: policy\.unenforced: agents of generic have no pre-tool hook/,
    );
  });
});
