// Errors of lineage entries, artefact keys, agent cards and conflicting writes.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** A lineage entry that breaks a rule of FORMATS.md §4 (field set, types, values). */
export class LineageEntryError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("lineage.entry_invalid", message, options);
  }
}

/** An artefact key that is neither a safe repo-relative path nor a canonical artefact URI. */
export class ArtefactKeyError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("lineage.artefact_invalid", message, options);
  }
}

/** An agent card that cannot be used (bad JSON, missing field, not an Ed25519 key). */
export class AgentCardError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("lineage.card_invalid", message, options);
  }
}

/** A fork that the chosen merge policy cannot resolve without a human. */
export class LineageConflictError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("lineage.conflict", message, options);
  }
}
