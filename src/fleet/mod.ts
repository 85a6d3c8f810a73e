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
export { type FleetChain, readFleetChain } from "./chain.ts";
export { FleetError, type FleetErrorCode } from "./errors.ts";
export {
  CONN_CREATE,
  CONN_REFUSE,
  CONN_RESOLVE,
  CONN_ROTATE,
  CONTEXT_ACTIVATE,
  CONTEXT_CREATE,
  FLEET_EVENT_TYPES,
  RUN_CONFIG,
  VAR_READ,
  VAR_SET,
  VAR_UNSET,
} from "./events.ts";
export { checkFleetName, FLEET_NAME_PATTERN, type FleetKind, isFleetName } from "./names.ts";
export { FLEET_DIR, type FleetPaths, fleetPaths } from "./paths.ts";
export {
  checkPlanVariables,
  mentionsVariables,
  PIN_STEP_PREFIX,
  type PinnedTexts,
  type PinOptions,
  pinsOf,
  pinTaskVariables,
  type ReplayedRead,
  replayRunPins,
  type TaskTexts,
  type VariablePin,
} from "./pins.ts";
export {
  type ConnectionHistory,
  type Divergence,
  explainDivergence,
  type FleetChainEvent,
  type FleetProjection,
  type FleetViolation,
  headWrite,
  projectFleet,
  type VariableHistory,
  type VariableRead,
  type VariableWrite,
} from "./projection.ts";
export { substituteVariables, variableReferences } from "./references.ts";
export { MAX_VALUE_BYTES, parseValueText, renderValue, valueBytes, valueHashOf } from "./value.ts";
export {
  INDEX_SCHEMA,
  type ResolvedVariable,
  type StoreWarning,
  VariableStore,
  type VariableStoreOptions,
  type VariableSummary,
} from "./variables.ts";
export { type FleetVerifyReport, verifyFleet } from "./verify.ts";
export { type ContextInput, contextSettings, ContextStore, type ContextView } from "./contexts.ts";
export {
  type ConfigDifference,
  diffRunConfigs,
  readRunConfig,
  recordRunConfig,
  RUN_CONFIG_SCHEMA,
  type RunConfigDiff,
  type RunConfigRecord,
  runConfigRecord,
} from "./run_config.ts";
export {
  CONNECTION_SCHEMA,
  connectionDefaults,
  type ConnectionDocument,
  ConnectionStore,
  type ConnectionView,
  documentHash,
  type MintedSecret,
  parseSecretRef,
  type SecretRef,
  secretRefText,
} from "./connections.ts";
export {
  ensureInstallIdentity,
  INSTALL_KEY_FILE,
  INSTALL_PUBLIC_KEY_FILE,
  type InstallIdentity,
  readInstallIdentity,
} from "./identity.ts";
export {
  checkPlanConnections,
  CONN_STEP_PREFIX,
  type ConnectionGrantee,
  connectionRequestsOf,
  RunConnections,
  type RunConnectionsOptions,
} from "./run_connections.ts";
