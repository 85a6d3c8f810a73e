// Where the fleet plane lives under `.sdd/` (FORMATS.md §12). The one owner of these paths.
import { join } from "node:path";
import { ACTIVE_CONTEXT_FILE, CONTEXTS_DIR } from "../config/mod.ts";

/** The fleet plane's folder, relative to `.sdd/`. */
export const FLEET_DIR = "fleet";

/** The fleet paths of one `.sdd/` folder. */
export interface FleetPaths {
  /** `.sdd/fleet/`. */
  dir: string;
  /** `.sdd/fleet/variables/`. */
  variablesDir: string;
  /** `.sdd/fleet/variables/blobs/`: content-addressed values (a CAS store). */
  blobsDir: string;
  /** `.sdd/fleet/variables/index.json`: name → head, a projection of the chain. */
  indexPath: string;
  /** `.sdd/fleet/variables/.write.lock`: serialises writers (ordinals stay contiguous). */
  writeLock: string;
  /** `.sdd/fleet/connections/`. */
  connectionsDir: string;
  /** `.sdd/fleet/contexts/`. */
  contextsDir: string;
  /** `.sdd/fleet/contexts/active.json`. */
  activeContext: string;
  /** `.sdd/fleet/.lock`: serialises connection and context writers. */
  lock: string;
}

/** The fleet paths under a `.sdd/` folder. */
export function fleetPaths(sdd: string): FleetPaths {
  const dir = join(sdd, FLEET_DIR);
  const variablesDir = join(dir, "variables");
  // Contexts are a configuration layer: their paths belong to the config loader.
  const contextsDir = join(sdd, CONTEXTS_DIR);
  return {
    dir,
    variablesDir,
    blobsDir: join(variablesDir, "blobs"),
    indexPath: join(variablesDir, "index.json"),
    writeLock: join(variablesDir, ".write.lock"),
    connectionsDir: join(dir, "connections"),
    contextsDir,
    activeContext: join(sdd, ACTIVE_CONTEXT_FILE),
    lock: join(dir, ".lock"),
  };
}
