import assert from "node:assert/strict";
import { compileAllowList, ServerStartError } from "../../src/server/mod.ts";

Deno.test("allowed_ips: exact addresses, CIDR ranges, IPv6 and IPv4-mapped IPv6", () => {
  const list = compileAllowList(["127.0.0.1", "10.1.0.0/16", "::1", "fd00::/8"]);
  const cases: [string, boolean][] = [
    ["127.0.0.1", true],
    ["127.0.0.2", false],
    ["10.1.255.3", true],
    ["10.2.0.1", false],
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["[::1]", true],
    ["::2", false],
    ["fd12:3456::9", true],
    ["fe80::1", false],
    ["::ffff:127.0.0.1", true],
    ["::ffff:10.1.2.3", true],
    ["::ffff:8.8.8.8", false],
    ["not an ip", false],
    ["", false],
  ];
  for (const [address, allowed] of cases) assert.equal(list.allows(address), allowed, address);
  assert.equal(compileAllowList(["0.0.0.0/0"]).allows("203.0.113.9"), true);
  assert.equal(compileAllowList([]).allows("127.0.0.1"), false);
});

Deno.test("allowed_ips: a bad entry is refused naming its index", () => {
  for (
    const bad of [
      "256.0.0.1",
      "10.0.0.0/33",
      "10.0.0.0/x",
      "1.2.3",
      "::1::2",
      "::1/129",
      "01.2.3.4",
      "a/b/c",
    ]
  ) {
    assert.throws(
      () => compileAllowList(["127.0.0.1", bad]),
      (e: unknown) =>
        e instanceof ServerStartError && e.location === "network.allowed_ips[1]" &&
        e.message.includes(bad),
      bad,
    );
  }
});
