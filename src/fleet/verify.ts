// The fleet pillar of `bernstein audit verify`: over the chain's fleet records, the semantic
// checks of the projection (ordinal contiguity, value-hash lineage, reads naming real writes),
// every stored value re-hashed against the hash its write recorded, and the name index
// compared with the chain. Reads only.
import type { AuditKey } from "../audit/mod.ts";
import { FleetError } from "./errors.ts";
import type { FleetViolation } from "./projection.ts";
import { VariableStore } from "./variables.ts";

/** What the fleet pillar found. */
export interface FleetVerifyReport {
  /** True when nothing is wrong. */
  ok: boolean;
  /** Fleet records read from the chain. */
  records: number;
  /** Variables seen. */
  variables: number;
  /** Stored values re-hashed. */
  blobs_checked: number;
  /** Every problem, with its chain position (or file). */
  violations: FleetViolation[];
}

/** Checks the fleet plane of a project against its audit chain. */
export async function verifyFleet(sdd: string, auditKey: AuditKey): Promise<FleetVerifyReport> {
  const store = new VariableStore({ sdd, auditKey });
  const { chain, projection } = await store.project();
  const violations: FleetViolation[] = [...projection.violations];
  const checked = new Set<string>();
  for (const h of projection.variables.values()) {
    for (const w of h.writes) {
      if (w.new_value_hash === "" || checked.has(w.new_value_hash)) continue;
      checked.add(w.new_value_hash);
      try {
        await store.resolve(w.new_value_hash);
      } catch (error) {
        if (!(error instanceof FleetError)) throw error;
        violations.push({
          where: w.where,
          code: error.code,
          message: `variable '${h.name}' write ${w.ordinal}: ${error.message}` +
            (error.location ? ` (${error.location})` : ""),
        });
      }
    }
  }
  const index = await store.indexProblem(projection);
  if (index !== undefined) {
    violations.push({ where: store.paths.indexPath, code: "fleet.index_tampered", message: index });
  }
  return {
    ok: violations.length === 0,
    records: chain.events.length,
    variables: projection.variables.size,
    blobs_checked: checked.size,
    violations,
  };
}
