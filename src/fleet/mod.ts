/**
 * The fleet configuration plane (docs/FLEET.md, FORMATS.md §12): named variables whose every
 * write is an audit-chain event, content-addressed values, claim-time pins on the run spine,
 * and history, divergence and replay resolved from the chain alone — offline, no server.
 *
 * @example
 * ```ts ignore
 * const vars = new VariableStore({ sdd: ".sdd", auditKey });
 * await vars.set("threshold", 5);
 * (await vars.get("threshold")).value; // 5
 * ```
 *
 * @module
 */
export { readFleetChain } from "./chain.ts";
export { FleetError } from "./errors.ts";
export { FLEET_EVENT_TYPES } from "./events.ts";
export { checkFleetName } from "./names.ts";

export {
  checkPlanVariables,
  mentionsVariables,
  pinsOf,
  pinTaskVariables,
  replayRunPins,
} from "./pins.ts";
export { explainDivergence, type FleetChainEvent, headWrite, projectFleet } from "./projection.ts";
export { substituteVariables, variableReferences } from "./references.ts";
export { MAX_VALUE_BYTES, parseValueText, renderValue, valueBytes, valueHashOf } from "./value.ts";
export { VariableStore } from "./variables.ts";
export { verifyFleet } from "./verify.ts";
export { contextSettings, ContextStore } from "./contexts.ts";
export { diffRunConfigs, readRunConfig, recordRunConfig, runConfigRecord } from "./run_config.ts";
export {
  connectionDefaults,
  ConnectionStore,
  type ConnectionView,
  parseSecretRef,
} from "./connections.ts";
export { ensureInstallIdentity, INSTALL_KEY_FILE, readInstallIdentity } from "./identity.ts";
export { checkPlanConnections, connectionRequestsOf, RunConnections } from "./run_connections.ts";
