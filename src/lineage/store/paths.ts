// Paths of the lineage store under `.sdd/lineage/`: the log, signatures, cards, checkpoints.

import { join } from "node:path";
import { LOG_FILE } from "../mod.ts";
import { sddFolder } from "../../io/mod.ts";

/** Where the lineage pieces of one `.sdd/` folder live. */
export interface LineagePaths {
  /** The `.sdd/` folder. */
  sdd: string;
  /** `.sdd/lineage/`. */
  lineageDir: string;
  /** `.sdd/lineage/log.jsonl` (also the lock file, as the Python writer locks it). */
  logPath: string;
  /** `.sdd/lineage/projection-state.json`: how much of the log the projections reflect. */
  statePath: string;
  /** `.sdd/agents/`: public agent cards. */
  cardsDir: string;
  /** `.sdd/keys/agents/`: private agent keys (0600). */
  keysDir: string;
}

/** The lineage paths under a `.sdd/` folder. */
export function lineagePaths(sdd: string): LineagePaths {
  const lineageDir = sddFolder(sdd, "lineage");
  return {
    sdd,
    lineageDir,
    logPath: join(lineageDir, LOG_FILE),
    statePath: join(lineageDir, "projection-state.json"),
    cardsDir: sddFolder(sdd, "agents"),
    keysDir: join(sddFolder(sdd, "keys"), "agents"),
  };
}
