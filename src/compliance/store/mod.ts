/**
 * The compliance pack's file-system side: the operator signing key under `.sdd/keys/` and the
 * project pack builder that reads `.sdd/` (lineage log, sidecars, cards, audit log).
 *
 * @example
 * ```ts ignore
 * const key = await ensureOperatorSigningKey(project.sdd, systemRandom);
 * const out = await openAtomicFile(output);
 * const r = await buildProjectPack({ sdd: project.sdd, org, since, until, builtAt, builder,
 *   compliance: config.compliance, signer: key.signer, env, sink: out });
 * await out.commit();
 * ```
 *
 * @module
 */
export {
  checkpointSignerOf,
  ensureOperatorSigningKey,
  type LoadedOperatorKey,
  OPERATOR_KEY_FILE,
  OPERATOR_PUBLIC_KEY_FILE,
  OperatorKeyError,
  type ProjectOperatorPublicKey,
  projectOperatorPublicKey,
  publishOperatorPublicKey,
  readOperatorSigningKey,
} from "./operator_key.ts";
export {
  buildProjectPack,
  type ComplianceSettings,
  type ProjectPackOptions,
  type ProjectPackResult,
  verifyWrittenPack,
} from "./project_pack.ts";
