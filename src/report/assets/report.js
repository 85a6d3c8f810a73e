// The run report's only script: a timeline bar (click, Enter or Space) shows its row in the
// attempts table. The report reads fine without it.
"use strict";
(function () {
  /** @param {Element} bar */
  function show(bar) {
    const session = bar.getAttribute("data-session");
    if (session === null) return;
    const cell = document.getElementById("attempt-" + session);
    const row = cell === null ? null : cell.closest("tr");
    if (row === null) return;
    row.scrollIntoView({ block: "center" });
    row.classList.add("flash");
    setTimeout(function () {
      row.classList.remove("flash");
    }, 1600);
  }
  document.querySelectorAll("g.attempt").forEach(function (bar) {
    bar.addEventListener("click", function () {
      show(bar);
    });
    bar.addEventListener("keydown", function (event) {
      const key = /** @type {KeyboardEvent} */ (event).key;
      if (key === "Enter" || key === " ") {
        event.preventDefault();
        show(bar);
      }
    });
  });
})();
