// The build time: --build-time wins over SOURCE_DATE_EPOCH; without either, none is recorded.
import { strictEqual, throws } from "node:assert/strict";
import { CompliancePackError, resolveBuildTime } from "../../src/compliance/mod.ts";

Deno.test("--build-time is normalised to UTC seconds; zones are applied", () => {
  strictEqual(resolveBuildTime({ flag: "2026-04-01" }), "2026-04-01T00:00:00Z");
  strictEqual(resolveBuildTime({ flag: "2026-04-01T12:30" }), "2026-04-01T12:30:00Z");
  strictEqual(resolveBuildTime({ flag: "2026-04-01T12:30:15.123Z" }), "2026-04-01T12:30:15Z");
  strictEqual(resolveBuildTime({ flag: "2026-04-01T02:00:00+02:00" }), "2026-04-01T00:00:00Z");
  strictEqual(
    resolveBuildTime({ flag: "2026-04-01T00:00:00Z", sourceDateEpoch: "0" }),
    "2026-04-01T00:00:00Z",
  );
});

Deno.test("SOURCE_DATE_EPOCH is used when no flag is given; neither means no build time", () => {
  strictEqual(resolveBuildTime({ sourceDateEpoch: "1775001600" }), "2026-04-01T00:00:00Z");
  strictEqual(resolveBuildTime({}), null);
  strictEqual(resolveBuildTime({ sourceDateEpoch: "" }), null);
});

Deno.test("values that are not times are usage errors naming the source", () => {
  for (const flag of ["yesterday", "2026-02-30", "2026-04-01T25:00", "1775001600"]) {
    throws(
      () => resolveBuildTime({ flag }),
      (e: unknown) =>
        e instanceof CompliancePackError && e.code === "compliance.bad_build_time" &&
        e.exitCode === 2 && e.message.includes(JSON.stringify(flag)),
    );
  }
  throws(
    () => resolveBuildTime({ sourceDateEpoch: "-5" }),
    (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.bad_source_date_epoch",
  );
});
