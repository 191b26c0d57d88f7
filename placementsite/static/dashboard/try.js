// The Try a request page's allocation candidates, loaded after the page: the why-not report
// and the candidates engine each read every provider, so the report comes at once and the
// candidates (an HTML fragment) follow.
(function () {
  "use strict";
  var pending = document.getElementById("candidates-pending");
  if (!pending) return;
  fetch(pending.getAttribute("data-candidates-url"), {
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
      p.id = "candidates-load-error";
      p.textContent = "The allocation candidates could not be loaded (" + error.message + "): try again.";
      pending.appendChild(p);
    });
})();
