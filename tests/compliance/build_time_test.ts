// The build time: --build-time wins over SOURCE_DATE_EPOCH, which wins over the clock.
import { strictEqual, throws } from "node:assert/strict";
import { CompliancePackError, resolveBuildTime } from "../../src/compliance/mod.ts";

Deno.test("--build-time is normalised to UTC seconds; zones are applied", () => {
  strictEqual(resolveBuildTime({ flag: "2026-04-01", nowMs: 0 }), "2026-04-01T00:00:00Z");
  strictEqual(resolveBuildTime({ flag: "2026-04-01T12:30", nowMs: 0 }), "2026-04-01T12:30:00Z");
  strictEqual(
    resolveBuildTime({ flag: "2026-04-01T12:30:15.123Z", nowMs: 0 }),
    "2026-04-01T12:30:15Z",
  );
  strictEqual(
    resolveBuildTime({ flag: "2026-04-01T02:00:00+02:00", nowMs: 0 }),
    "2026-04-01T00:00:00Z",
  );
  strictEqual(
    resolveBuildTime({ flag: "2026-04-01T00:00:00Z", sourceDateEpoch: "0", nowMs: 0 }),
    "2026-04-01T00:00:00Z",
  );
});

Deno.test("SOURCE_DATE_EPOCH is used when no flag is given; neither means the clock's time", () => {
  const now = Date.UTC(2026, 5, 2, 3, 4, 5, 678);
  strictEqual(
    resolveBuildTime({ sourceDateEpoch: "1775001600", nowMs: now }),
    "2026-04-01T00:00:00Z",
  );
  strictEqual(resolveBuildTime({ nowMs: now }), "2026-06-02T03:04:05Z");
  strictEqual(resolveBuildTime({ sourceDateEpoch: "", nowMs: now }), "2026-06-02T03:04:05Z");
});

Deno.test("values that are not times are usage errors naming the source", () => {
  for (const flag of ["yesterday", "2026-02-30", "2026-04-01T25:00", "1775001600"]) {
    throws(
      () => resolveBuildTime({ flag, nowMs: 0 }),
      (e: unknown) =>
        e instanceof CompliancePackError && e.code === "compliance.bad_build_time" &&
        e.exitCode === 2 && e.message.includes(JSON.stringify(flag)),
    );
  }
  throws(
    () => resolveBuildTime({ sourceDateEpoch: "-5", nowMs: 0 }),
    (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.bad_source_date_epoch",
  );
});
