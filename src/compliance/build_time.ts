// The only wall-clock value a pack holds: its build time — the one the operator passes
// (`--build-time`, else `SOURCE_DATE_EPOCH` for reproducible builds), else the clock —
// normalised to `YYYY-MM-DDTHH:MM:SSZ`.
import { CompliancePackError } from "./errors.ts";

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function format(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function parseIso(text: string): number | undefined {
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  if (new Date(local).getUTCDate() !== d) return undefined; // 2026-02-30 and the like
  const zone = m[7];
  if (zone === undefined || zone === "Z") return local;
  const sign = zone[0] === "+" ? 1 : -1;
  const offset = (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  return local - sign * offset;
}

/**
 * `built_at` of a pack: `--build-time` (ISO 8601 date or date-time; no zone means UTC) when
 * given, else `SOURCE_DATE_EPOCH` (integer seconds), else `nowMs` (the build's wall clock).
 * Throws {@linkcode CompliancePackError} (exit 2) on a value that is not a time.
 */
export function resolveBuildTime(
  options: { flag?: string; sourceDateEpoch?: string; nowMs: number },
): string {
  if (options.flag !== undefined) {
    const ms = parseIso(options.flag.trim());
    if (ms === undefined) {
      throw new CompliancePackError(
        "compliance.bad_build_time",
        `--build-time ${JSON.stringify(options.flag)} is not an ISO 8601 date or date-time`,
        { exitCode: 2, hint: "e.g. --build-time 2026-04-01T00:00:00Z" },
      );
    }
    return format(ms);
  }
  const epoch = options.sourceDateEpoch;
  if (epoch !== undefined && epoch !== "") {
    if (!/^\d{1,12}$/.test(epoch)) {
      throw new CompliancePackError(
        "compliance.bad_source_date_epoch",
        `SOURCE_DATE_EPOCH ${JSON.stringify(epoch)} is not a whole number of seconds`,
        { exitCode: 2 },
      );
    }
    return format(Number(epoch) * 1000);
  }
  return format(options.nowMs);
}
