import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  checkFleetName,
  FleetError,
  MAX_VALUE_BYTES,
  parseValueText,
  renderValue,
  substituteVariables,
  valueBytes,
  valueHashOf,
  variableReferences,
} from "../../src/fleet/mod.ts";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return `${error.code}/${error.exitCode}`;
    throw error;
  }
  throw new Error("no error");
}

Deno.test("a value is JSON or a bare word; anything else is fleet.bad_value (exit 2)", () => {
  strictEqual(parseValueText("5"), 5);
  strictEqual(parseValueText("fast"), "fast");
  strictEqual(parseValueText("true"), true);
  strictEqual(parseValueText('"two words"'), "two words");
  deepStrictEqual(parseValueText('{"b":1,"a":[null]}'), { b: 1, a: [null] });
  strictEqual(code(() => parseValueText('{"a":')), "fleet.bad_value/2");
  strictEqual(code(() => parseValueText("two words")), "fleet.bad_value/2");
  strictEqual(code(() => parseValueText("1.2.3")), "fleet.bad_value/2");
  strictEqual(code(() => parseValueText("")), "fleet.bad_value/2");
});

Deno.test("values over 1 MiB are refused with fleet.value_too_large, at the limit they are kept", () => {
  const atLimit = `"${"a".repeat(MAX_VALUE_BYTES - 2)}"`;
  strictEqual(valueBytes(parseValueText(atLimit)).length, MAX_VALUE_BYTES);
  strictEqual(
    code(() => parseValueText(`"${"a".repeat(MAX_VALUE_BYTES - 1)}"`)),
    "fleet.value_too_large/2",
  );
  strictEqual(
    code(() => parseValueText(`"${"a".repeat(10 * 1024 * 1024)}"`)),
    "fleet.value_too_large/2",
  );
});

Deno.test("the value hash is over canonical bytes: key order and spacing do not change it", () => {
  const a = valueBytes(parseValueText('{"b": 1, "a": 2}'));
  const b = valueBytes(parseValueText('{"a":2,"b":1}'));
  strictEqual(new TextDecoder().decode(a), '{"a":2,"b":1}');
  strictEqual(valueHashOf(a), valueHashOf(b));
  strictEqual(valueHashOf(a).length, 71);
});

Deno.test("names follow [a-z0-9][a-z0-9._-]*; others are fleet.bad_name (exit 2)", () => {
  strictEqual(checkFleetName("a.b_c-1", "variable"), "a.b_c-1");
  for (const bad of ["", "A", "-a", ".a", "a/b", "a b", "../x", "é", "a".repeat(129)]) {
    strictEqual(code(() => checkFleetName(bad, "variable")), "fleet.bad_name/2", bad);
  }
});

Deno.test("references are found in order once; malformed ones are fleet.bad_reference", () => {
  deepStrictEqual(
    variableReferences("x ${var:a} ${var:b.c} ${var:a} $var:d ${env:e}", "step 1"),
    ["a", "b.c"],
  );
  strictEqual(code(() => variableReferences("${var:Bad}", "step 1")), "fleet.bad_reference/2");
  strictEqual(
    substituteVariables("n=${var:a}, m=${var:b}", new Map([["a", "5"], ["b", '{"x":1}']])),
    'n=5, m={"x":1}',
  );
  strictEqual(renderValue("text", valueBytes("text")), "text");
  strictEqual(renderValue([1, "a"], valueBytes([1, "a"])), '[1,"a"]');
});
