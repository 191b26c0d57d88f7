// A part of a page loaded after it: a pending element (role="status") names the URL of an
// HTML fragment, which replaces it when it comes; a failure is said in its place. Used by
// pages whose part is a scheduling pass or a read of every provider (schedule.js, try.js).
function loadAfterPage(pending, url, what, errorId) {
  "use strict";
  fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "text/html" },
  })
    .then(function (response) {
      return response.text().then(function (html) {
        if (!response.ok && response.status !== 400) throw new Error("HTTP " + response.status);
        return html;
      });
    })
    .then(function (html) {
      // Server-rendered by this site (Django escapes every value); it holds no script.
      pending.insertAdjacentHTML("afterend", html);
      pending.remove();
    })
    .catch(function (error) {
      pending.textContent = "";
      var p = document.createElement("p");
      p.className = "error";
      if (errorId) p.id = errorId;
      p.textContent = "The " + what + " could not be loaded (" + error.message + "): try again.";
      pending.appendChild(p);
    });
}
