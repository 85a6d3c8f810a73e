import { equal } from "node:assert/strict";
import { AdapterError } from "../../src/adapters/mod.ts";
import { CasError } from "../../src/cas/mod.ts";
import { ERROR_FAMILIES, isErrorCode } from "../../src/errors/mod.ts";
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

Deno.test("isErrorCode accepts the known families only", () => {
  equal(isErrorCode("config.unknown_key"), true);
  equal(isErrorCode("internal"), true);
  equal(isErrorCode("confg.unknown_key"), false);
  equal(isErrorCode(""), false);
  equal(Object.keys(ERROR_FAMILIES).length > 30, true);
});
