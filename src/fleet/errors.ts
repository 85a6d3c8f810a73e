// The fleet plane's error: one class, stable codes as a union, exit 2 for bad operator input.
import { BernsteinError, type BernsteinErrorOptions, ExitCode } from "../errors/mod.ts";

/** Every code a fleet command or claim-time resolution can fail with. */
export type FleetErrorCode =
  | "fleet.bad_name"
  | "fleet.bad_value"
  | "fleet.value_too_large"
  | "fleet.unknown_name"
  | "fleet.blob_tampered"
  | "fleet.blob_missing"
  | "fleet.index_tampered"
  | "fleet.chain_damaged"
  | "fleet.bad_reference"
  | "fleet.bad_setting"
  | "fleet.exists"
  | "fleet.unknown_context"
  | "fleet.context_tampered"
  | "fleet.bad_secret_ref"
  | "fleet.secret_unreadable"
  | "fleet.document_foreign"
  | "fleet.document_tampered"
  | "fleet.identity_missing"
  | "fleet.conn_not_granted"
  | "fleet.secret_too_short"
  | "fleet.record_invalid";

/** Codes that are the operator's input, not a failed operation: exit 2. */
const USAGE_CODES: ReadonlySet<FleetErrorCode> = new Set([
  "fleet.bad_name",
  "fleet.bad_value",
  "fleet.value_too_large",
  "fleet.unknown_name",
  "fleet.bad_reference",
  "fleet.bad_setting",
  "fleet.exists",
  "fleet.unknown_context",
  "fleet.bad_secret_ref",
]);

/** A fleet-plane failure with a stable code. */
export class FleetError extends BernsteinError {
  declare readonly code: FleetErrorCode;

  constructor(
    code: FleetErrorCode,
    message: string,
    options: Omit<BernsteinErrorOptions, "exitCode"> = {},
  ) {
    super(code, message, {
      ...options,
      exitCode: USAGE_CODES.has(code) ? ExitCode.usage : ExitCode.failed,
    });
  }
}
