// The Schedule page's funnel, loaded after the page: explain is a scheduling pass over every
// host, so the form comes at once and the funnel (with its Create form) follows.
(function () {
  "use strict";
  var pending = document.getElementById("funnel-pending");
  if (!pending) return;
  loadAfterPage(pending, pending.getAttribute("data-funnel-url"), "funnel");
})();
