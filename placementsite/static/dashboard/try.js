// The Try a request page's allocation candidates, loaded after the page: the why-not report
// and the candidates engine each read every provider, so the report comes at once and the
// candidates (an HTML fragment) follow.
(function () {
  "use strict";
  var pending = document.getElementById("candidates-pending");
  if (!pending) return;
  loadAfterPage(
    pending,
    pending.getAttribute("data-candidates-url"),
    "allocation candidates",
    "candidates-load-error"
  );
})();
