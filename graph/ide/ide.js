// A minimal GraphQL console. It loads nothing from elsewhere and stores nothing:
// the API key lives in the password field only, never in localStorage or cookies.
(function () {
  "use strict";
  var endpoint = window.location.pathname;
  var $ = function (id) { return document.getElementById(id); };
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
    $("result").textContent = "…";
    fetch(endpoint, {
      method: "POST",
      headers: headers,
      credentials: "omit",
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
