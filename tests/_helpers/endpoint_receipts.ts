// Test set-up for runs whose merge-critical roles use endpoint profiles: a certification
// receipt per profile, signed with the install identity exactly as `bernstein doctor
// --endpoint` signs one (the certification itself is tested in tests/providers/ and
// tests/e2e/providers_test.ts; runs of real CLIs only need their profiles certified).
import { join } from "node:path";
import { ensureInstallIdentity } from "../../src/fleet/mod.ts";
import { systemRandom } from "../../src/io/mod.ts";
import { type Grade, receiptPath, signReceipt } from "../../src/providers/mod.ts";

/** One profile to certify. */
export interface ProfileToCertify {
  /** Base URL. */
  base_url: string;
  /** Model. */
  model?: string;
  /** Engine label. */
  engine?: string;
  /** API. */
  api?: string;
}

/** Writes a signed receipt of `grade` for each profile under `<root>/.sdd/endpoints/`. */
export async function certifyProfilesForTest(
  root: string,
  profiles: Readonly<Record<string, ProfileToCertify>>,
  grade: Grade = "expert",
): Promise<void> {
  const sdd = join(root, ".sdd");
  const key = await ensureInstallIdentity(sdd, systemRandom);
  await Deno.mkdir(join(sdd, "endpoints"), { recursive: true });
  for (const [name, p] of Object.entries(profiles)) {
    const receipt = signReceipt({
      schema: "bernstein.endpoint-receipt/1",
      name,
      endpoint: p.base_url,
      api: p.api ?? "openai-chat",
      engine: p.engine ?? null,
      model: p.model ?? "fake-model",
      grade,
      checks: [{ name: "completion", ok: true, detail: "test set-up receipt", ms: 0 }],
      latency_ms: { n: 0, p50: 0, p95: 0, max: 0 },
      context_tokens: { claimed: null, sent: 0, ok: true },
      certified_at: new Date().toISOString(),
      bernstein: "test",
    }, key);
    await Deno.writeTextFile(join(sdd, receiptPath(name)), JSON.stringify(receipt, null, 2));
  }
}
