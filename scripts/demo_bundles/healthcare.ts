// The healthcare reference scenario (HIPAA + EU AI Act Articles 11 and 12): agents edit an
// emergency-department triage configuration and its technical documentation; a reviewer
// agent requests changes, so the review fails and routes a recovery step with a failure
// receipt; a second review approves. The pack passes offline, the receipt resolves on the
// run's spine, and the signed checkpoint covers the log. article12-mapping.md maps the
// regulation's paragraphs onto this pack.
import { exampleOperatorFingerprint } from "./_example_keys.ts";
import { expectExit, type Project } from "./_project.ts";
import { pack, runPlan, utcDay, verifyPack } from "./_steps.ts";
import type { Scenario } from "./_scenario.ts";

const NAME = "healthcare";
const ORG = "St. Example University Hospital";

const PLAN = `# Triage configuration for the emergency department, edited by agents and reviewed.
name: ed-triage-configuration
cli: scripted
max_agents: 3
stages:
  - name: configure
    steps:
      - title: Set the vital-sign thresholds
        role: backend
        files: [config/triage/thresholds.yaml]
        description: |
          @agent write config/triage/thresholds.yaml <<END
          # Vital-sign thresholds that raise a patient to ESI level 2.
          spo2_min_percent: 92
          resp_rate_max_per_min: 24
          heart_rate_max_bpm: 120
          lactate_icu_mmol_l: 4.0
          END
          @agent summary thresholds set
      - title: Route chest pain and stroke signs to immediate care
        role: backend
        files: [config/triage/routing.yaml]
        description: |
          @agent write config/triage/routing.yaml <<END
          # Presentations that bypass the queue.
          immediate:
            - chest_pain_with_st_elevation
            - fast_positive_stroke
          phi_fields_excluded_from_model_input: [patient_name, mrn, insurance_id]
          END
          @agent summary routing rules set; PHI fields excluded from model input
      - title: Write the technical documentation (Article 11, Annex IV)
        role: docs
        files: [docs/technical-documentation.md]
        description: |
          @agent write docs/technical-documentation.md <<END
          # ED triage assistant: technical documentation (Annex IV)
          1. General description: ranks arriving patients for nurse review; never decides alone.
          2. Elements and development: rule thresholds in config/triage/, edited by agents under review.
          3. Monitoring, functioning and control: every change is in the signed lineage log and the audit log.
          4. Performance metrics: under-triage rate against nurse ESI, reviewed monthly.
          5. Risk management (Art. 9): thresholds are high-risk paths; every change needs an approved review.
          6. Changes through the lifecycle: the lineage log (one signed entry per version of each file).
          7. Harmonised standards: none applied yet.
          8. EU declaration of conformity: kept by the quality team, not in this repository.
          9. Post-market monitoring plan: monthly review of the compliance pack and of under-triage cases.
          END
          @agent summary technical documentation drafted

  - name: review
    depends_on: [configure]
    steps:
      - title: Clinical safety review of the triage configuration
        role: reviewer
        files: [reviews/triage-review.md]
        description: |
          The review passes only when reviews/triage-review.md says APPROVED.
          @agent write reviews/triage-review.md <<END
          # Review: CHANGES REQUESTED
          spo2_min_percent has no clinical reference; cite the guideline it follows.
          END
          @agent summary changes requested: spo2_min_percent has no clinical reference
        completion_signals:
          - file_contains: { path: reviews/triage-review.md, contains: "APPROVED" }

  # A recovery step: it runs only because the review failed, with the review's receipt.
  - name: address-review
    depends_on:
      - stage: review
        condition: "status == 'failed'"
    steps:
      - title: Cite the guideline behind the SpO2 threshold
        role: backend
        files: [config/triage/thresholds.yaml]
        description: |
          @agent write config/triage/thresholds.yaml <<END
          # Vital-sign thresholds that raise a patient to ESI level 2.
          spo2_min_percent: 92  # reference: BTS oxygen guideline, target range 94-98 %
          resp_rate_max_per_min: 24
          heart_rate_max_bpm: 120
          lactate_icu_mmol_l: 4.0
          END
          @agent summary cited the guideline behind spo2_min_percent

  - name: re-review
    depends_on: [address-review]
    steps:
      - title: Clinical safety re-review
        role: reviewer
        files: [reviews/triage-review.md]
        description: |
          @agent write reviews/triage-review.md <<END
          # Review: APPROVED
          spo2_min_percent now cites its guideline; routing excludes PHI from model input.
          END
          @agent summary approved
        completion_signals:
          - file_contains: { path: reviews/triage-review.md, contains: "APPROVED" }
`;

const CONFIG = `# Healthcare example: the triage configuration is the high-risk path of the pack.
compliance:
  risk_paths: ["config/triage/**"]
  retention_days: 2190
tuning:
  orchestrator:
    tick_interval_s: 0.5
  spawn:
    spawn_backoff_base_s: 0
  tasks:
    default_max_retries: 0
`;

async function run(p: Project): Promise<void> {
  const since = utcDay();
  p.say("1. The run: three agents configure, a reviewer requests changes, a recovery step fixes");
  const r = await runPlan(p, "plans/triage.yaml");
  if (r.health !== "HEALTHY" || r.merged.length !== 5 || r.recovered.length !== 1) {
    throw new Error(
      `the triage run: ${r.health}, ${r.merged.length} merged, ${r.recovered.length} recovered`,
    );
  }
  const routed = r.events.find((e) => e.type === "task.routed");
  const receipt = String(routed?.receipt_hash ?? "");
  if (!receipt.startsWith("sha256:")) throw new Error("the run announced no receipt hash");

  p.say("2. The reviewer's rejection is a failure receipt on the run's spine");
  expectExit(
    await p.bernstein(["lineage", "verify", r.runId, "--receipt-hash", receipt]),
    0,
    "lineage verify --receipt-hash",
  );

  p.say("3. The pack of the day, checked offline by the auditor");
  await pack(p, "pack.zip", ORG, since, utcDay(), 0);
  await verifyPack(p, NAME, "pack.zip", 0);

  p.say("4. The run's signed checkpoint covers the lineage log");
  expectExit(
    await p.verify([
      "chain",
      "config/triage/thresholds.yaml",
      "--lineage-dir",
      "repo/.sdd/lineage",
      "--operator-fingerprint",
      exampleOperatorFingerprint(NAME),
    ], "stdout"),
    0,
    "bernstein-verify chain",
  );
}

/** The healthcare scenario. */
export const HEALTHCARE: Scenario = {
  name: NAME,
  folder: "healthcare",
  files: {
    "README.md": "# ed-triage\n\nTriage rules for the emergency department's assistant.\n",
    "plans/triage.yaml": PLAN,
  },
  config: CONFIG,
  packs: ["pack.zip"],
  run,
};
