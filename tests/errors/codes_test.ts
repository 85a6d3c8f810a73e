import { equal } from "node:assert/strict";
import { AdapterError } from "../../src/adapters/mod.ts";
import { CasError } from "../../src/cas/mod.ts";
import {
  BernsteinError,
  ERROR_CODES,
  ERROR_FAMILIES,
  isErrorCode,
  KeyMissingError,
  UsageError,
} from "../../src/errors/mod.ts";
import { SecretFileError } from "../../src/io/mod.ts";

Deno.test("a family's error class takes only its own family's codes (a typo is a type error)", () => {
  equal(new CasError("cas.invalid_key", "x").code, "cas.invalid_key");
  equal(new AdapterError("adapter.unknown", "x").code, "adapter.unknown");
  // @ts-expect-error: not the cas family
  new CasError("cass.invalid_key", "x");
  // @ts-expect-error: not the adapter family
  new AdapterError("adaptor.unknown", "x");
  // @ts-expect-error: not one of the secret-file codes
  new SecretFileError("secret.symlnk", "p", "x");
});

Deno.test("BernsteinError, UsageError and KeyMissingError take only listed codes (a misspelt name is a type error)", () => {
  equal(new BernsteinError("config.unknown_key", "x").code, "config.unknown_key");
  equal(new UsageError("cli.unknown_command", "x").exitCode, 2);
  equal(new KeyMissingError("audit.key_missing", "x").exitCode, 3);
  equal(new CasError("cas.not_found", "x").code, "cas.not_found");
  // @ts-expect-error: a misspelt name inside a known family
  new BernsteinError("config.unknwon_key", "x");
  // @ts-expect-error: not a code at all
  new UsageError("unknown command", "x");
  // @ts-expect-error: a misspelt name inside the audit family
  new KeyMissingError("audit.key_mising", "x");
  // @ts-expect-error: a code of the table, but of another family than the class's
  new CasError("config.unknown_key", "x");
});

Deno.test("isErrorCode accepts the listed codes only", () => {
  equal(isErrorCode("config.unknown_key"), true);
  equal(isErrorCode("internal"), true);
  equal(isErrorCode("confg.unknown_key"), false);
  equal(isErrorCode("config.unknwon_key"), false);
  equal(isErrorCode("config"), false);
  equal(isErrorCode(""), false);
  equal(Object.keys(ERROR_FAMILIES).length > 30, true);
  equal(Object.keys(ERROR_CODES).sort().join(), Object.keys(ERROR_FAMILIES).sort().join());
});
