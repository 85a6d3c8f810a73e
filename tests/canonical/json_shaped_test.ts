import { equal } from "node:assert/strict";
import { canonicalize, jsonFloat, jsonValueOf } from "../../src/canonical/mod.ts";

interface Row {
  name: string;
  size?: number;
  tags: readonly string[];
  nested: { at: number | null; big: bigint }[];
}

Deno.test("a typed record (an interface: no index signature) serialises without a cast", () => {
  const row: Row = { name: "a", tags: ["x"], nested: [{ at: null, big: 2n ** 64n }] };
  equal(
    canonicalize(row, "canon"),
    '{"name":"a","nested":[{"at":null,"big":18446744073709551616}],"tags":["x"]}',
  );
  equal(canonicalize({ f: jsonFloat(1) }, "canon"), '{"f":1.0}');
  equal(jsonValueOf(row), row);
});

Deno.test("what JSON cannot hold is a type error", () => {
  const checks = [
    // @ts-expect-error: a function
    () => canonicalize({ f: () => 1 }, "canon"),
    // @ts-expect-error: a Map
    () => canonicalize({ m: new Map<string, string>() }, "canon"),
    // @ts-expect-error: a Date (methods)
    () => canonicalize({ d: new Date(0) }, "canon"),
    // @ts-expect-error: an unchecked value
    () => canonicalize({ u: JSON.parse("1") as unknown }, "canon"),
    // @ts-expect-error: undefined inside an array
    () => jsonValueOf([1, undefined]),
  ];
  equal(checks.length, 5);
});
