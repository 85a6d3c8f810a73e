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
  OPERATOR_KEY_FILE,
  OperatorKeyError,
  projectOperatorPublicKey,
  readOperatorSigningKey,
} from "./operator_signing_key.ts";
export {
  buildProjectPack,
  type ProjectPackOptions,
  type ProjectPackResult,
  verifyWrittenPack,
} from "./pack_builder.ts";
