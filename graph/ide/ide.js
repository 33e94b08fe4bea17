// A minimal GraphQL console. It loads nothing from elsewhere and stores nothing:
// the API key lives in the password field only, never in localStorage or cookies.
// Without a key it runs as the dashboard's session, when the browser has one (the
// session cookie is HttpOnly; the page holds only its CSRF token, in memory).
(function () {
  "use strict";
  var endpoint = window.location.pathname;
  var $ = function (id) { return document.getElementById(id); };
  var csrf = "";
  fetch("/dashboard/session", { credentials: "same-origin", headers: { "Accept": "application/json" } })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (s) {
      if (!s || s.operator) return;
      csrf = s.csrf;
      $("session").textContent = "Signed in to the dashboard as " + s.prefix + ": leave the key empty to use that session.";
    }, function () {});
  function run() {
    var vars;
    try {
      vars = JSON.parse($("variables").value || "{}");
    } catch (e) {
      $("result").textContent = "Variables are not valid JSON: " + e.message;
      return;
    }
    var headers = { "Content-Type": "application/json", "Accept": "application/json" };
    var key = $("key").value.trim();
    if (key) headers.Authorization = "Bearer " + key;
    else if (csrf) headers["X-Switchboard-CSRF"] = csrf;
    $("result").textContent = "…";
    fetch(endpoint, {
      method: "POST",
      headers: headers,
      credentials: key ? "omit" : "same-origin",
      body: JSON.stringify({ query: $("query").value, variables: vars })
    }).then(function (r) { return r.text(); }).then(function (text) {
      try {
        $("result").textContent = JSON.stringify(JSON.parse(text), null, 2);
      } catch (e) {
        $("result").textContent = text;
      }
    }, function (err) { $("result").textContent = String(err); });
  }
  $("run").addEventListener("click", run);
  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") run();
  });
})();
