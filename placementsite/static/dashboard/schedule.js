// The Schedule page's funnel, loaded after the page: explain is a scheduling pass over every
// host, so the form comes at once and the funnel (with its Create form) follows.
(function () {
  "use strict";
  var pending = document.getElementById("funnel-pending");
  if (!pending) return;
  fetch(pending.getAttribute("data-funnel-url"), {
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
      p.textContent = "The funnel could not be loaded (" + error.message + "): try again.";
      pending.appendChild(p);
    });
})();
