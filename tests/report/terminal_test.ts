import assert from "node:assert/strict";
import {
  LinePrefixer,
  logPrefix,
  renderLiveView,
  shortDuration,
  terminalSafe,
} from "../../src/report/mod.ts";

const rows = [
  {
    task: "1.1-write-the-parser",
    adapter: "claude",
    model: "sonnet",
    state: "running",
    elapsedS: 65,
    last: "reading the grammar",
  },
  {
    task: "1.2-docs",
    adapter: "codex",
    model: "default",
    state: "checking",
    elapsedS: 3,
    last: "",
  },
];

Deno.test("live view: one line per agent and a progress bar, each within the width", () => {
  const lines = renderLiveView(rows, { done: 2, total: 8, merged: 1, refused: 1 }, {
    frame: 0,
    width: 80,
    color: false,
  });
  assert.equal(lines.length, 3);
  assert.match(
    lines[0],
    /^⠋ 1\.1-write-the-parser\s+claude\/sonnet\s+running\s+1m05s {2}reading the grammar$/,
  );
  assert.match(lines[1], /^⠋ 1\.2-docs\s+codex\s+checking\s+3s/);
  assert.match(lines[2], /^\[#{8}-{22}\] 2\/8 tasks · 1 merged · 1 refused$/);
  for (const line of lines) assert.ok([...line].length <= 79, `too wide: ${line}`);
});

Deno.test("live view: a long progress line is cut to the terminal, never wrapped", () => {
  const long = [{ ...rows[0], last: "x".repeat(500) }];
  for (const width of [40, 60, 120]) {
    const lines = renderLiveView(long, { done: 0, total: 1, merged: 0, refused: 0 }, {
      frame: 3,
      width,
      color: false,
    });
    for (const line of lines) assert.ok([...line].length <= width - 1, `${width}: ${line}`);
    // A cut line says so (at 60 columns the progress text has no room and is left out).
    if (width !== 60) assert.ok(lines[0].endsWith("…"), lines[0]);
  }
});

Deno.test("live view: the spinner turns with the frame; colour only when asked", () => {
  const a = renderLiveView(rows, { done: 0, total: 2, merged: 0, refused: 0 }, {
    frame: 0,
    width: 100,
    color: false,
  });
  const b = renderLiveView(rows, { done: 0, total: 2, merged: 0, refused: 0 }, {
    frame: 1,
    width: 100,
    color: false,
  });
  assert.notEqual(a[0][0], b[0][0]);
  assert.ok(!a.join("").includes("\x1b["));
  const c = renderLiveView(rows, { done: 0, total: 2, merged: 1, refused: 0 }, {
    frame: 0,
    width: 100,
    color: true,
  });
  assert.ok(c.join("").includes("\x1b[36m"));
});

Deno.test("terminalSafe: an agent's escape sequences and control bytes never reach the terminal", () => {
  assert.equal(terminalSafe("ok\x1b[2J\x1b[H done\x07\r\nnext"), "ok done next");
  assert.equal(terminalSafe("\x1b]0;title\x07plain"), "]0;title plain");
  assert.ok(![...terminalSafe("a\x00b\x1bc\x9bd")].some((c) => c.charCodeAt(0) < 0x20));
});

Deno.test("LinePrefixer: whole lines only, a partial line waits, flush ends it", () => {
  const p = new LinePrefixer("t1 ");
  assert.equal(p.feed("hel"), "");
  assert.equal(p.feed("lo\nwor"), "t1  │ hello\n");
  assert.equal(p.feed("ld\n\nlast"), "t1  │ world\nt1  │ \n");
  assert.equal(p.flush(), "t1  │ last\n");
  assert.equal(p.flush(), "");
  const clean = new LinePrefixer("t2", terminalSafe);
  assert.equal(clean.feed("a\x1b[31mred\n"), "t2 │ ared\n");
  assert.equal(logPrefix("t", 1), "t");
  assert.equal(logPrefix("t", 3), "t#3");
});

Deno.test("shortDuration: seconds, minutes, hours", () => {
  assert.deepEqual([0, 59, 60, 3599, 3600, 7322].map(shortDuration), [
    "0s",
    "59s",
    "1m00s",
    "59m59s",
    "1h00m",
    "2h02m",
  ]);
});
