// The live dashboard's script: keeps the server-rendered page current from the run's
// Server-Sent Events (the server sends at most one update a second) and ticks the "… ago"
// times locally. Without it the page is a complete snapshot.
"use strict";
(function () {
  const body = document.body;
  const conn = document.getElementById("conn");
  const eventsPath = body.getAttribute("data-events");

  /** @param {string} text @param {string} cls */
  function status(text, cls) {
    if (conn === null) return;
    conn.textContent = text;
    conn.className = cls;
  }

  /** @param {number} ms */
  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + " ms";
    const s = ms / 1000;
    if (s < 60) return (s < 10 ? s.toFixed(1) : String(Math.round(s))) + " s";
    const total = Math.round(s);
    const minutes = Math.floor(total / 60);
    if (minutes < 60) return minutes + " min " + String(total % 60).padStart(2, "0") + " s";
    return Math.floor(minutes / 60) + " h " + String(minutes % 60).padStart(2, "0") + " min";
  }

  function tick() {
    const now = Date.now();
    document.querySelectorAll("[data-since]").forEach(function (el) {
      const at = Date.parse(el.getAttribute("data-since") || "");
      if (!Number.isNaN(at)) el.textContent = duration(Math.max(0, now - at));
    });
  }

  /** Which log tails the reader opened or closed, so an update keeps them as they are. */
  function openLogs() {
    /** @type {Map<string, boolean>} */
    const state = new Map();
    document.querySelectorAll("details.log").forEach(function (el) {
      const session = el.getAttribute("data-session");
      if (session !== null) state.set(session, /** @type {HTMLDetailsElement} */ (el).open);
    });
    return state;
  }

  /** @param {Record<string, string>} sections */
  function apply(sections) {
    const logs = openLogs();
    const focused = document.activeElement && document.activeElement.id;
    Object.keys(sections).forEach(function (id) {
      const el = document.getElementById(id);
      // The server escapes every value it renders; the page's CSP runs no inline script.
      if (el !== null) el.innerHTML = sections[id];
    });
    document.querySelectorAll("details.log").forEach(function (el) {
      const session = el.getAttribute("data-session");
      const was = session === null ? undefined : logs.get(session);
      if (was !== undefined) /** @type {HTMLDetailsElement} */ (el).open = was;
    });
    scrollLogs();
    if (focused) {
      const again = document.getElementById(focused);
      if (again !== null) again.focus();
    }
    tick();
  }

  /** Log tails show their newest lines. */
  function scrollLogs() {
    document.querySelectorAll("details.log pre").forEach(function (pre) {
      pre.scrollTop = pre.scrollHeight;
    });
  }

  scrollLogs();
  setInterval(tick, 1000);
  if (body.getAttribute("data-live") !== "1" || eventsPath === null || !("EventSource" in window)) {
    return;
  }
  const source = new EventSource(eventsPath);
  source.addEventListener("open", function () {
    status("live", "live");
  });
  source.addEventListener("sections", function (event) {
    const data = JSON.parse(/** @type {MessageEvent} */ (event).data);
    apply(data.sections);
    status("live · updated " + new Date(data.generated_at).toLocaleTimeString(), "live");
  });
  source.addEventListener("ended", function () {
    source.close();
    status("the run has ended; this is its last state", "");
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED) status("disconnected; reload to retry", "lost");
    else status("reconnecting…", "lost");
  });
})();
