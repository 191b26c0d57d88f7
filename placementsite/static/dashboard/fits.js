// "Fits N more" per flavor, counted after the page: each count is a scheduling pass over the
// whole cloud, so the page comes at once and the counts follow, one flavor at a time (the
// server is not asked for them all at once), with the progress shown.
(function () {
  "use strict";
  var cells = Array.prototype.slice.call(document.querySelectorAll("[data-fits-url]"));
  var progress = document.getElementById("fits-progress");
  var done = document.getElementById("fits-done");
  var total = document.getElementById("fits-total");
  if (!cells.length) {
    if (progress) progress.hidden = true;
    return;
  }
  if (total) total.textContent = String(cells.length);
  var format = new Intl.NumberFormat();
  var finished = 0;

  function show(cell, text, muted) {
    cell.textContent = "";
    var span = document.createElement("span");
    if (muted) span.className = "muted";
    span.textContent = text;
    cell.appendChild(span);
  }

  function next(index) {
    if (index >= cells.length) {
      if (progress) progress.hidden = true;
      return;
    }
    var cell = cells[index];
    fetch(cell.getAttribute("data-fits-url"), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (body) {
        if (body.fits === null) {
          show(cell, "–", true);
        } else {
          show(
            cell,
            // Counted within the engine's budget only: a lower bound, said as one.
            (body.complete === false ? "at least " : "") +
              cell.getAttribute("data-prefix") + format.format(body.fits) + cell.getAttribute("data-suffix"),
            false
          );
          cell.setAttribute("data-fits", String(body.fits));
        }
      })
      .catch(function () {
        show(cell, "not counted", true);
      })
      .then(function () {
        finished += 1;
        if (done) done.textContent = String(finished);
        next(index + 1);
      });
  }
  next(0);
})();
