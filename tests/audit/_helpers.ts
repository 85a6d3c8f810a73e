// Shared by the audit tests: a temp audit folder with a key, a seeded writer, segment access.
import { join } from "node:path";
import {
  type AuditKey,
  AuditLog,
  type AuditLogOptions,
  ensureAuditKey,
  listSegments,
} from "../../src/audit/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";

/** A temp folder holding `audit/` and a 0600 key at `key/audit.key`. */
export interface AuditFixture {
  root: string;
  dir: string;
  keyPath: string;
  key: AuditKey;
  clock: FakeClock;
}

/** Creates an audit fixture inside `root`. */
export async function auditFixture(root: string, seed = 1): Promise<AuditFixture> {
  const keyPath = join(root, "key", "audit.key");
  const key = await ensureAuditKey(keyPath, new SeededRandom(seed));
  return {
    root,
    dir: join(root, "audit"),
    keyPath,
    key,
    clock: new FakeClock(Date.UTC(2026, 0, 1, 10, 0, 0)),
  };
}

/** Appends `n` events (`probe` type, resource `r<i>`), one at a time, with the fake clock. */
export async function writeEvents(
  fx: AuditFixture,
  n: number,
  options: AuditLogOptions & { eventType?: string; from?: number } = {},
): Promise<void> {
  const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock, ...options });
  try {
    for (let i = 0; i < n; i++) {
      const index = (options.from ?? 0) + i;
      await log.append({
        actor: "tester",
        event_type: options.eventType ?? "probe",
        resource_type: "task",
        resource_id: `r${index}`,
        details: { index },
      });
      fx.clock.advance(1);
    }
  } finally {
    await log.close();
  }
}

/** The only segment's path (fails when there is not exactly one). */
export async function onlySegment(fx: AuditFixture): Promise<string> {
  const segments = await listSegments(fx.dir);
  if (segments.length !== 1) throw new Error(`expected one segment, found ${segments.length}`);
  return segments[0].path;
}

/** Lines of a segment without their `\n` (the last element is the text after the last `\n`). */
export async function segmentLines(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).split("\n");
}

/** Writes lines back joined with `\n` (pass a trailing "" to end with a newline). */
export async function writeLines(path: string, lines: string[]): Promise<void> {
  await Deno.writeTextFile(path, lines.join("\n"));
}
