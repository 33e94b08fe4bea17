// Switchboard's dashboard. It speaks only GraphQL (/graphql), as the signed-in
// session: the session cookie is HttpOnly, so this page never sees the API key
// after sign-in; it holds only the session's CSRF token, in memory, and sends it
// back on every request. Nothing is written to browser storage. Every value from
// the server reaches the page as text (el() never parses HTML).
(function () {
  "use strict";

  var session = null; // { csrf, prefix, operator, workspaceId, scopes, expiresAt }
  var timers = [];    // the current page's refresh timers
  var shown = 0;      // counts renders: an answer for a page no longer shown is dropped
  var notice = "";    // what the sign-in page says about why the session ended
  var PAGE = 50;      // rows per page of every list

  // ---- DOM ---------------------------------------------------------------

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === "class") node.className = v;
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), v);
      else if (k === "value") node.value = v;
      else if (v === true) node.setAttribute(k, "");
      else node.setAttribute(k, String(v));
    });
    append(node, Array.prototype.slice.call(arguments, 2));
    return node;
  }
  // append adds the children (nodes, text, arrays of them) to node; null,
  // undefined and false add nothing.
  function append(node) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === undefined || child === null || child === false) continue;
      if (Array.isArray(child)) { append.apply(null, [node].concat(child)); continue; }
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function link(href, text, attrs) {
    var a = el("a", Object.assign({ href: href }, attrs || {}), text);
    if (href.indexOf("/dashboard") === 0) a.addEventListener("click", function (e) {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault(); go(href);
    });
    return a;
  }
  function when(t) { return t ? new Date(t).toLocaleString() : ""; }
  // labels are the words a person reads for the API's enum values; human()
  // falls back to the value with its underscores as spaces, capitalised.
  var labels = {
    complete_sent: "Sent", complete_delivered: "Delivered", aborted: "Cancelled",
    "before-wa-send": "Sending", "bt-sent": "Sending", sent_pending_ack: "Sent, awaiting ack",
    CONNECTED: "Connected", DISCONNECTED: "Disconnected", LOGGED_OUT: "Logged out", OPENING: "Connecting",
    PAIRING: "Pairing", UNPAIRED: "Not paired", BANNED: "Banned", CONFLICT: "Taken over by another client"
  };
  function human(v) {
    if (v === undefined || v === null) return "";
    v = String(v);
    if (labels[v]) return labels[v];
    var s = v.replace(/[_-]+/g, " ").toLowerCase();
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
  // badge shows an enum value by its label; data-status keeps the value.
  function badge(text) {
    var cls = "badge";
    if (/^(read|played|delivered|received|confirmed|sent|CONNECTED|enabled|succeeded|complete|completed|running|complete_sent|complete_delivered)$/.test(text)) cls += " good";
    else if (/^(error|failed|expired|cancelled|BANNED|CONFLICT|LOGGED_OUT|disabled|aborted|dead|revoked)$/.test(text)) cls += " bad";
    else if (/^(pending|scheduled|sending|queued|paused|PAIRING|UNPAIRED|OPENING|DISCONNECTED|retrying|submitted|streaming|before-wa-send|bt-sent|sent_pending_ack)$/.test(text)) cls += " warn";
    return el("span", { class: cls, "data-status": text, title: text }, human(text));
  }
  function table(headers, rows, empty) {
    if (!rows.length) return el("div", { class: "empty" }, empty || "Nothing here yet.");
    return el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, headers.map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, rows)));
  }
  // pager says which rows of how many are shown, with buttons to the pages
  // before and after.
  function pager(total, skip, limit, goTo) {
    var to = Math.min(skip + limit, total);
    return el("div", { class: "pager", "data-total": total },
      el("span", { class: "muted" }, total ? (skip + 1) + "–" + to + " of " + total : "0 in all"),
      total > limit || skip > 0 ? [
        el("button", { class: "quiet", disabled: skip <= 0, onclick: function () { goTo(Math.max(0, skip - limit)); } }, "← Previous"),
        el("button", { class: "quiet", disabled: to >= total, onclick: function () { goTo(skip + limit); } }, "Next →")] : null);
  }
  function field(label, input) { return el("label", {}, label, input); }
  function errorBox(err) { return el("div", { class: "error", role: "alert" }, String(err && err.message || err)); }
  function secretBox(title, value) {
    return el("div", { class: "secret", "data-secret": "" }, el("strong", {}, title), el("p", { class: "muted" },
      "Copy it now: it is shown this once and never again."), el("input", { readonly: true, value: value, onfocus: function (e) { e.target.select(); } }));
  }

  // ---- GraphQL -----------------------------------------------------------

  function gql(query, variables) {
    return fetch("/graphql", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-Switchboard-CSRF": session ? session.csrf : "" },
      body: JSON.stringify({ query: query, variables: variables || {} })
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        if (r.status === 401) {
          if (session) notice = "Your session ended (signed out elsewhere, expired, or its key was revoked): sign in again.";
          session = null; render(); throw new Error("Signed out: the session ended.");
        }
        if (!r.ok && body.error) throw new Error(body.error.message || ("HTTP " + r.status));
        if (body.errors && body.errors.length) {
          var e = body.errors[0], d = e.extensions && e.extensions.details;
          throw new Error(e.message + (d && d.length ? " — " + d.map(function (x) { return x.path + ": " + x.message; }).join("; ") : ""));
        }
        if (!r.ok) throw new Error("HTTP " + r.status);
        return body.data;
      });
    });
  }
  function can(scope) {
    return session && session.scopes.some(function (s) { return s === scope || (s === "*" && scope !== "operator"); });
  }

  // ---- session -----------------------------------------------------------

  function loadSession() {
    return fetch("/dashboard/session", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) { session = s; }, function () { session = null; });
  }
  function signIn(e) {
    e.preventDefault();
    var input = document.getElementById("credential"), out = document.getElementById("signin-error");
    var credential = input.value;
    input.value = ""; // the key leaves the page with this request, and nowhere else
    clear(out);
    fetch("/dashboard/session", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ key: credential })
    }).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.error ? body.error.message : "HTTP " + r.status);
        session = body; notice = "";
        var here = location.pathname.replace(/\/+$/, "");
        go(here === "/dashboard" ? "/dashboard/overview" : location.pathname + location.search, true);
      });
    }).catch(function (err) { append(out, errorBox(err)); });
  }
  function signOut() {
    fetch("/dashboard/session", { method: "DELETE", credentials: "same-origin", headers: { "X-Switchboard-CSRF": session ? session.csrf : "" } })
      .then(function () { session = null; go("/dashboard", true); });
  }
  function signInPage() {
    return el("form", { class: "signin", onsubmit: signIn },
      el("h1", {}, "Switchboard"),
      el("p", { class: "muted" }, "Sign in with an API key (or the operator token). The key is exchanged for a session cookie the page cannot read; it is not stored in this browser."),
      notice ? el("div", { class: "notice", role: "status" }, notice) : null,
      el("input", { id: "credential", type: "password", autocomplete: "off", placeholder: "sb_live_…", required: true, "aria-label": "API key" }),
      el("button", { type: "submit" }, "Sign in"),
      el("div", { id: "signin-error" }));
  }

  // ---- routing -----------------------------------------------------------

  var pages = [
    { path: "/dashboard/overview", title: "Overview", nav: true, render: overviewPage },
    { path: "/dashboard/engines", title: "Engines", scope: "engines:read", nav: true, render: enginesPage },
    { path: "/dashboard/messages", title: "Messages", scope: "messages:read", nav: true, render: messagesPage },
    { path: "/dashboard/chats", title: "Chats", scope: "chats:read", nav: true, render: chatsPage },
    { re: /^\/dashboard\/chats\/([^/]+)$/, title: "Chat", render: chatPage },
    { path: "/dashboard/groups", title: "Groups", scope: "groups:read", nav: true, render: groupsPage },
    { path: "/dashboard/newsletters", title: "Newsletters", scope: "newsletters:read", nav: true, render: newslettersPage },
    { path: "/dashboard/contacts", title: "Contacts", scope: "contacts:read", nav: true, render: contactsPage },
    { path: "/dashboard/audiences", title: "Audiences", scope: "audiences:read", nav: true, render: audiencesPage },
    { path: "/dashboard/campaigns", title: "Campaigns", scope: "campaigns:read", nav: true, render: campaignsPage },
    { path: "/dashboard/boards", title: "Boards", scope: "boards:read", nav: true, render: boardsPage },
    { re: /^\/dashboard\/boards\/([^/]+)(?:\/items\/([^/]+))?$/, title: "Board", render: boardPage },
    { path: "/dashboard/music", title: "Music", scope: "music:read", nav: true, render: musicPage },
    { path: "/dashboard/webhooks", title: "Webhooks", scope: "webhooks:read", nav: true, render: webhooksPage },
    { re: /^\/dashboard\/webhooks\/([^/]+)$/, title: "Webhook", render: webhookPage },
    { path: "/dashboard/keys", title: "API keys", scope: "keys:read", nav: true, render: keysPage }
  ];

  function go(path, replace) {
    if (replace) history.replaceState(null, "", path); else history.pushState(null, "", path);
    render();
  }
  window.addEventListener("popstate", render);

  function every(ms, fn) { timers.push(setInterval(fn, ms)); }

  function render() {
    timers.forEach(clearInterval); timers = []; shown++;
    var root = clear(document.getElementById("app"));
    if (!session) { append(root, signInPage()); document.getElementById("credential").focus(); return; }
    var path = decodeURI(location.pathname).replace(/\/+$/, "");
    if (path === "/dashboard") path = session.operator ? "/dashboard/operator" : "/dashboard/overview";
    var main = el("main", {});
    append(root, el("div", { class: "shell" }, navigation(path), main));
    if (session.operator) { operatorPage(main); return; }
    for (var i = 0; i < pages.length; i++) {
      var p = pages[i], m = p.re ? path.match(p.re) : (path === p.path ? [path] : null);
      if (!m) continue;
      document.title = p.title + " · Switchboard";
      try { p.render(main, m.slice(1).map(function (x) { return x === undefined ? undefined : decodeURIComponent(x); })); } catch (err) { append(main, errorBox(err)); }
      return;
    }
    append(main, el("h1", {}, "Not found"), el("p", {}, "No page at " + path + "."));
  }

  // navigation is the sidebar; on a narrow screen it is a bar whose Menu
  // button opens the links (and Sign out).
  function navigation(path) {
    var links = el("div", { class: "links", id: "nav-links" });
    var nav = el("nav", {}, el("div", { class: "topbar" }, el("div", { class: "brand" }, "Switchboard"),
      el("button", { class: "quiet menu-toggle", "aria-controls": "nav-links", "aria-expanded": "false", onclick: function (e) {
        var open = nav.classList.toggle("open");
        e.target.setAttribute("aria-expanded", open ? "true" : "false");
      } }, "Menu")), links);
    if (!session.operator) pages.forEach(function (p) {
      if (!p.nav || (p.scope && !can(p.scope))) return;
      append(links, link(p.path, p.title, { class: path.indexOf(p.path) === 0 ? "active" : "" }));
    });
    append(links, el("div", { class: "sep" }));
    if (!session.operator) append(links, el("a", { href: "/graphql", target: "_blank" }, "GraphQL console"));
    if (session.operator || can("operator")) append(links, el("a", { href: "/monitoring/", target: "_blank" }, "Queue monitor"));
    append(links, el("a", { href: "/docs/", target: "_blank" }, "API reference"));
    append(links, el("div", { class: "who" }, "Signed in as ", el("span", { class: "mono" }, session.prefix), el("br"),
      el("button", { class: "quiet", onclick: signOut }, "Sign out")));
    return nav;
  }

  // load runs a query, then fill with its data in the page's body; errors show in
  // place. It returns a function that runs it again (for refreshes).
  function load(container, query, vars, fill) {
    var body = el("div", {});
    append(container, body);
    var page = shown;
    function run() {
      return Promise.resolve(typeof query === "function" ? query() : query).then(function (q) {
        return gql(q, typeof vars === "function" ? vars() : vars);
      }).then(function (data) {
        if (page !== shown) return; // signed out or moved on meanwhile
        clear(body); fill(body, data, run);
        body.setAttribute("data-loaded", "");
      }, function (err) {
        if (page !== shown) return;
        clear(body); append(body, errorBox(err)); body.setAttribute("data-loaded", "");
      });
    }
    run();
    return run;
  }
  // paged is load for a list: $limit and $skip join the variables, key names the
  // page in the answer, and a pager with the total follows the rows. Its reset
  // goes back to the first page (for a new search).
  function paged(container, query, vars, key, fill, limit) {
    limit = limit || PAGE;
    var skip = 0, run;
    run = load(container, query, function () {
      var v = Object.assign({}, typeof vars === "function" ? vars() : vars);
      v.limit = limit; v.skip = skip;
      return v;
    }, function (body, d, again) {
      var pg = d[key];
      if (pg.total > 0 && skip >= pg.total) { skip = Math.floor((pg.total - 1) / limit) * limit; again(); return; }
      fill(body, d, again);
      append(body, pager(pg.total, skip, limit, function (s) { skip = s; run(); }));
    });
    var outer = function () { return run(); };
    outer.reset = function () { skip = 0; return run(); };
    return outer;
  }
  // action runs a mutation from a button (after a confirmation for a danger),
  // then refreshes.
  function action(label, query, vars, after, cls) {
    return el("button", { class: cls || "quiet", onclick: function (e) {
      var b = e.target;
      if (cls === "danger" && !confirm(label + "?")) return;
      b.disabled = true;
      gql(query, vars).then(function (d) { if (after) after(d); }, function (err) { alert(err.message); }).then(function () { b.disabled = false; });
    } }, label);
  }
  function formValues(form) {
    var out = {};
    Array.prototype.forEach.call(form.elements, function (i) { if (i.name) out[i.name] = i.type === "checkbox" ? i.checked : i.value.trim(); });
    return out;
  }
  // submitForm wires a form to a mutation built from its values.
  function submitForm(form, build, done) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var errs = form.querySelector(".form-error") || form.appendChild(el("div", { class: "form-error" }));
      clear(errs);
      var q = build(formValues(form));
      gql(q[0], q[1]).then(function (d) { form.reset(); done(d); }, function (err) { append(errs, errorBox(err)); });
    });
    return form;
  }

  // ---- pages -------------------------------------------------------------

  function operatorPage(main) {
    append(main, el("h1", {}, "Operator"),
      el("p", {}, "Signed in with the operator token: the queue monitor is open read-write. Workspaces' pages need an API key."),
      el("p", {}, el("a", { href: "/monitoring/", target: "_blank" }, "Open the queue monitor"), " · ", el("a", { href: "/metrics", target: "_blank" }, "Metrics")));
  }

  // overviewPage is the page a person opens first: the engines and their state,
  // today's messages by status, running campaigns and failing webhooks.
  function overviewPage(main) {
    append(main, el("h1", {}, "Overview"));
    load(main, "{ account { id name timezone } ping { api message whatsappConnections { id type connected } } }", {}, function (body, d) {
      var n = d.ping.whatsappConnections.filter(function (c) { return c.connected; }).length;
      append(body, el("div", { class: "card" },
        el("p", {}, "Workspace ", el("strong", {}, d.account.name), " ", el("span", { class: "mono muted" }, d.account.id)),
        el("p", {}, n ? n + (n === 1 ? " engine connected." : " engines connected.") : "No engine connected: messages wait until one is."),
        el("p", { class: "muted" }, "Signed in with ", el("span", { class: "mono" }, session.prefix), " (scopes ", session.scopes.join(", "), ")")));
    });
    var grid = el("div", { class: "tiles" });
    append(main, grid);
    function tile(title, href) {
      var t = el("section", { class: "card tile" }, el("h2", {}, href ? link(href, title) : title));
      append(grid, t);
      return t;
    }
    if (can("engines:read")) {
      paged(tile("Engines", "/dashboard/engines"), function () {
        return engineExtraFields().then(function (extra) {
          return addFields("query($limit: Int, $skip: Int) { engineList(limit: $limit, skip: $skip) { total items { id name kind state connected default } } }", extra);
        });
      }, {}, "engineList", function (body, d) {
        append(body, table(["Engine", "State", ""], d.engineList.items.map(function (e) {
          return el("tr", { "data-engine": e.id },
            el("td", {}, el("strong", {}, e.name || e.id), e.default ? el("span", { class: "badge default" }, "default") : null, el("div", { class: "muted" }, human(e.kind))),
            el("td", {}, badge(e.state), e.lastError ? el("div", { class: "error" }, e.lastError) : null),
            el("td", {}, e.connected ? el("span", { class: "badge live" }, "live") : el("span", { class: "badge" }, "offline")));
        }), "No engine yet."));
      }, 10);
    }
    if (can("messages:read")) messagesToday(tile("Messages today", "/dashboard/messages"));
    if (can("campaigns:read")) {
      paged(tile("Running campaigns", "/dashboard/campaigns"),
        "query($status: String, $limit: Int, $skip: Int) { campaignList(status: $status, limit: $limit, skip: $skip) { total items { id name status progress { total sent delivered failed percent } } } }",
        { status: "running" }, "campaignList", function (body, d) {
          append(body, table(["Campaign", "Progress", "Failed"], d.campaignList.items.map(function (c) {
            return el("tr", { "data-campaign": c.id }, el("td", {}, c.name),
              el("td", {}, c.progress.percent.toFixed(0) + "% of " + c.progress.total), el("td", { class: "num" }, c.progress.failed));
          }), "No campaign is running."));
        }, 10);
    }
    if (can("webhooks:read")) {
      load(tile("Failing webhooks", "/dashboard/webhooks"), "{ webhookList(limit: 200) { total items { id url status consecutiveFailures } } }", {}, function (body, d) {
        var failing = d.webhookList.items.filter(function (w) { return w.consecutiveFailures > 0; });
        append(body, table(["Endpoint", "Failures"], failing.map(function (w) {
          return el("tr", { "data-webhook": w.id }, el("td", {}, link("/dashboard/webhooks/" + encodeURIComponent(w.id), w.url), " ", badge(w.status)),
            el("td", { class: "num" }, w.consecutiveFailures));
        }), "No webhook is failing (of " + d.webhookList.total + ")."));
      });
    }
    if (can("profile:read")) profileCard(main);
    if (can("status:read")) statusCard(main);
  }

  // statusCard lists the latest unexpired statuses, the account's and its
  // contacts' (docs/status.md), and posts a text status through the default
  // engine.
  function statusCard(main) {
    append(main, el("h2", {}, "Statuses"));
    var refresh = load(main, "{ statuses(limit: 20) { total items { id fromMe from senderName type text status createdAt } } }", {}, function (body, d) {
      if (!d.statuses.items.length) { append(body, el("p", { class: "muted" }, "No status in the last 24 hours.")); return; }
      append(body, table(["From", "Type", "Text", "Status", "At"], d.statuses.items.map(function (s) {
        return el("tr", { "data-status": s.id },
          el("td", {}, s.fromMe ? "you" : (s.senderName || s.from)), el("td", {}, s.type), el("td", {}, s.text),
          el("td", {}, s.status), el("td", { class: "muted" }, s.createdAt));
      })));
    });
    if (can("status:write")) append(main, submitForm(el("form", { class: "card" },
      field("Text status", el("input", { name: "text", maxlength: 700, required: true })),
      field("Background", el("input", { name: "backgroundColor", type: "color", value: "#1e88e5" })),
      el("button", { type: "submit" }, "Post to your contacts")),
    function (v) { return ["mutation($in: StatusInput!) { postStatus(input: $in) { id } }", { in: { type: "text", text: v.text, backgroundColor: v.backgroundColor || null } }]; },
    function () { refresh(); }));
  }

  // messagesToday counts the messages queued since midnight (this browser's) by
  // status, reading the queue newest first, 200 at a time, at most 1000.
  function messagesToday(box) {
    var body = el("div", {}), page = shown, since = new Date();
    since.setHours(0, 0, 0, 0);
    append(box, body);
    var counts = {}, seen = 0;
    function from(skip) {
      return gql("query($f: ScheduledMessageFilter, $skip: Int) { scheduledMessages(filter: $f, limit: 200, skip: $skip) { total items { status createdAt } } }", { f: { order: "desc" }, skip: skip }).then(function (d) {
        var items = d.scheduledMessages.items, older = false;
        items.forEach(function (m) {
          if (new Date(m.createdAt) >= since) { counts[m.status] = (counts[m.status] || 0) + 1; seen++; } else older = true;
        });
        if (!older && items.length === 200 && skip < 800) return from(skip + 200);
        return !older && items.length === 200; // true: there are more than counted
      });
    }
    from(0).then(function (more) {
      if (page !== shown) return;
      var keys = Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a]; });
      append(body, el("p", { class: "big" }, (more ? "over " : "") + seen, el("span", { class: "muted" }, seen === 1 ? " message" : " messages")),
        keys.length ? el("div", { class: "counts" }, keys.map(function (k) {
          return el("span", { class: "count", "data-count": k }, badge(k), " ", counts[k]);
        })) : el("div", { class: "empty" }, "No message queued today."));
      body.setAttribute("data-loaded", "");
    }, function (err) {
      if (page !== shown) return;
      append(body, errorBox(err)); body.setAttribute("data-loaded", "");
    });
  }

  // engineExtraFields is a promise of the optional Engine fields this server has
  // (lastError, lastErrorAt), read once from the schema.
  var engineExtra = null;
  function engineExtraFields() {
    if (engineExtra === null) engineExtra = gql("query($t: String!) { __type(name: $t) { fields { name } } }", { t: "Engine" }).then(function (d) {
      var names = ((d.__type && d.__type.fields) || []).map(function (f) { return f.name; });
      return ["lastError", "lastErrorAt"].filter(function (n) { return names.indexOf(n) >= 0; }).join(" ");
    }, function () { engineExtra = null; return ""; });
    return engineExtra;
  }
  // addFields puts more fields into the first item selection of a document.
  function addFields(doc, extra) { return extra ? doc.replace("items { ", "items { " + extra + " ") : doc; }

  // profileCard shows the account's own profile through the default engine
  // (docs/profile.md), and changes its push name and about text.
  function profileCard(main) {
    append(main, el("h2", {}, "Profile"));
    var refresh = load(main, "{ profile { engineId id pushName about pictureUrl } }", {}, function (body, d) {
      var p = d.profile;
      append(body, el("div", { class: "card", "data-profile": p.id },
        p.pictureUrl ? el("img", { src: p.pictureUrl, alt: "profile picture", width: 96, height: 96 }) : null,
        el("p", {}, el("strong", {}, p.pushName), " ", el("span", { class: "mono muted" }, p.id)),
        el("p", { class: "muted" }, p.about)));
    });
    if (can("profile:write")) append(main, submitForm(el("form", { class: "card" },
      field("Push name", el("input", { name: "pushName", maxlength: 25 })),
      field("About", el("input", { name: "about", maxlength: 139 })),
      el("button", { type: "submit" }, "Update profile")),
    function (v) { return ["mutation($in: ProfileInput!) { updateProfile(input: $in) { id } }", { in: { pushName: v.pushName || null, about: v.about || null } }]; },
    function () { refresh(); }));
  }

  var engineFields = "id name kind type state connected default stream hasSynced restriction tokenPrefix rejectCalls connectedAt createdAt";

  function enginesPage(main) {
    append(main, el("h1", {}, "Engines"));
    var out = el("div", {});
    if (can("engines:write")) append(main, submitForm(el("form", { class: "card" },
      field("Kind", el("select", { name: "kind" }, el("option", { value: "gateway" }, "gateway (WhatsApp, pair a phone)"),
        el("option", { value: "sandbox" }, "sandbox"), el("option", { value: "remote" }, "remote (browser extension)"))),
      field("Name", el("input", { name: "name", maxlength: 100 })),
      el("button", { type: "submit" }, "Create engine")),
    function (v) { return ["mutation($in: EngineInput!) { createEngine(input: $in) { token engine { id kind } } }", { in: { kind: v.kind, name: v.name || null } }]; },
    function (d) {
      clear(out);
      if (d.createEngine.token) append(out, secretBox("The remote engine's token", d.createEngine.token));
      refresh();
    }));
    append(main, out);
    var qr = el("div", {});
    var refresh = paged(main, function () {
      return engineExtraFields().then(function (extra) {
        return addFields("query($limit: Int, $skip: Int) { engineList(limit: $limit, skip: $skip) { total items { " + engineFields + " } } }", extra);
      });
    }, {}, "engineList", function (body, d) {
      append(body, table(["Engine", "Kind", "State", "Connected", "Since", ""], d.engineList.items.map(function (e) {
        return el("tr", { "data-engine": e.id },
          el("td", {}, el("strong", {}, e.name || e.id), e.default ? el("span", { class: "badge default" }, "default") : null,
            el("div", { class: "mono muted" }, e.id), e.restriction ? el("div", { class: "error" }, e.restriction) : null),
          el("td", {}, human(e.kind), e.tokenPrefix ? el("div", { class: "mono muted" }, e.tokenPrefix + "…") : null),
          el("td", {}, badge(e.state), e.stream ? el("div", { class: "muted" }, "stream " + e.stream) : null,
            e.lastError ? el("div", { class: "error", "data-last-error": "" }, e.lastError, e.lastErrorAt ? el("div", { class: "muted" }, when(e.lastErrorAt)) : null) : null),
          el("td", {}, e.connected ? el("span", { class: "badge live" }, "live") : el("span", { class: "badge" }, "no")),
          el("td", {}, when(e.connectedAt)),
          el("td", { class: "row-actions" }, can("engines:write") ? [
            e.kind === "gateway" && e.state !== "CONNECTED" ? el("button", { onclick: function () { showQR(qr, e.id); } }, "Pair (QR)") : null,
            e.default ? null : action("Make default", "mutation($id: String!) { setDefaultEngine(id: $id) { id } }", { id: e.id }, refresh),
            e.kind === "gateway" && ["CONFLICT", "DISCONNECTED", "OPENING"].indexOf(e.state) >= 0 ?
              action("Restart", "mutation($id: String!) { restartEngine(id: $id) { id } }", { id: e.id }, refresh) : null,
            action(e.rejectCalls ? "Allow calls" : "Reject calls", "mutation($id: String!, $in: EngineCallsInput!) { updateEngineCalls(id: $id, input: $in) { id } }",
              { id: e.id, in: { rejectCalls: !e.rejectCalls } }, refresh),
            action("Log out", "mutation($id: String!) { logoutEngine(id: $id) { id } }", { id: e.id }, refresh),
            action("Delete", "mutation($id: String!) { deleteEngine(id: $id) }", { id: e.id }, refresh, "danger")
          ] : null));
      }), "No engine yet: create one above. The sandbox engine appears once a workspace that uses it sends."));
    });
    append(main, qr);
    every(4000, refresh);
  }

  function showQR(box, id) {
    clear(box);
    append(box, el("h2", {}, "Pair engine " + id), el("p", { class: "muted" }, "On the phone: WhatsApp → Linked devices → Link a device, and scan. The code changes every few seconds."));
    // The image is put on the page only once the engine made one: a code that
    // cannot be made shows why, never a broken image.
    var pic = el("div", { class: "qr" }, el("span", { class: "muted" }, "Asking the engine for a code…"));
    var note = el("div", { "data-qr-note": "" });
    append(box, pic, note);
    function failed(err) {
      pic.hidden = true;
      clear(note); append(note, errorBox("No pairing code: " + (err && err.message || err)));
    }
    function fetchQR() {
      gql("mutation($id: String!) { enginePairingQRImage(id: $id) }", { id: id }).then(function (d) {
        if (!d.enginePairingQRImage) { failed("the engine gave none."); return; }
        var img = el("img", { alt: "pairing QR code", width: 256, height: 256 });
        img.addEventListener("error", function () { failed("the code the engine gave is not an image."); });
        img.src = d.enginePairingQRImage;
        clear(pic); append(pic, img); pic.hidden = false;
        clear(note); append(note, el("p", { class: "muted" }, "Updated " + new Date().toLocaleTimeString()));
      }, failed);
    }
    fetchQR();
    every(15000, fetchQR);
  }

  var messageFields = "id to type text status ack sendAt createdAt confirmedAt readAt failureReason waSerialized";

  function sendForm(fixedTo, after) {
    return submitForm(el("form", { class: "card", id: "send-form" },
      fixedTo ? null : field("To (phone or chat id)", el("input", { name: "to", required: true, placeholder: "+15551234567" })),
      field("Text", el("textarea", { name: "text", required: true, maxlength: 4096 })),
      field("Send at (optional)", el("input", { name: "sendAt", type: "datetime-local" })),
      el("button", { type: "submit" }, "Send")),
    function (v) {
      var input = { type: "text", text: v.text };
      if (v.sendAt) input.sendAt = new Date(v.sendAt).toISOString();
      return ["mutation($to: String!, $in: MessageInput!) { scheduleMessage(chatId: $to, input: $in) { message { id status } } }", { to: fixedTo || v.to, in: input }];
    }, after);
  }

  function messagesPage(main) {
    append(main, el("h1", {}, "Messages"));
    var refresh;
    if (can("messages:write")) append(main, sendForm(null, function () { refresh(); }));
    append(main, el("h2", {}, "Queue"), el("p", { class: "muted" }, "Statuses update live (every 2 s)."));
    refresh = paged(main, "query($limit: Int, $skip: Int) { scheduledMessages(limit: $limit, skip: $skip) { total items { " + messageFields + " } } }", {}, "scheduledMessages", function (body, d) {
      append(body, table(["Created", "To", "Text", "Status", "Send at", "Read"], d.scheduledMessages.items.map(function (m) {
        return el("tr", { "data-message": m.id },
          el("td", {}, when(m.createdAt)), el("td", { class: "mono" }, m.to),
          el("td", {}, m.text || m.type, m.failureReason ? el("div", { class: "error" }, m.failureReason) : null),
          el("td", {}, badge(m.status)), el("td", {}, when(m.sendAt)), el("td", {}, when(m.readAt)));
      }), "The queue is empty."));
    });
    every(2000, refresh);
  }

  function chatsPage(main) {
    append(main, el("h1", {}, "Chats"));
    var search = el("input", { type: "search", placeholder: "Search by name or number" });
    append(main, el("div", { class: "toolbar" }, search));
    var refresh = paged(main, "query($f: ChatFilter, $limit: Int, $skip: Int) { chatList(filter: $f, limit: $limit, skip: $skip) { total items { id jid kind name unreadCount lastMessageAt lastMessageText lastMessageFromMe archived } } }",
      function () {
        var f = { includeArchive: true, includeWithoutName: true };
        if (search.value.trim()) f.searchToken = search.value.trim();
        return { f: f };
      }, "chatList",
      function (body, d) {
        append(body, table(["Chat", "Kind", "Last message", "Unread", "When"], d.chatList.items.map(function (c) {
          return el("tr", { "data-chat": c.jid },
            el("td", {}, link("/dashboard/chats/" + encodeURIComponent(c.jid), c.name || c.jid), el("div", { class: "mono muted" }, c.jid)),
            el("td", {}, human(c.kind), c.archived ? " (archived)" : ""),
            el("td", {}, (c.lastMessageFromMe ? "You: " : "") + (c.lastMessageText || "")),
            el("td", { class: "num" }, c.unreadCount || ""), el("td", {}, when(c.lastMessageAt)));
        }), "No chats yet: they appear as messages come and go."));
      });
    search.addEventListener("input", function () { refresh.reset(); });
  }

  // chatPage shows a chat's newest messages, oldest at the top; "Load older"
  // reads the page before them. The newest page is read again every 3 s.
  function chatPage(main, args) {
    var jid = args[0], page = shown, byId = {}, total = 0, first = true;
    var q = "query($f: StoredMessageFilter, $limit: Int, $skip: Int) { storedMessages(filter: $f, limit: $limit, skip: $skip) { total items { id fromMe from senderName type text status createdAt mediaFilename pollQuestion } } }";
    var count = el("p", { class: "muted", "data-count": "" }), older = el("div", { class: "older" }), thread = el("div", { class: "thread" }), status = el("div", {});
    append(main, el("p", {}, link("/dashboard/chats", "← Chats")), el("h1", { class: "chat-title" }, jid), count, older, thread, status);
    function fetchFrom(skip) {
      return gql(q, { f: { chatId: jid, order: "desc" }, limit: PAGE, skip: skip }).then(function (d) {
        if (page !== shown) return;
        total = d.storedMessages.total;
        d.storedMessages.items.forEach(function (m) { byId[m.id] = m; });
        clear(status); draw();
      }, function (err) {
        if (page !== shown) return;
        clear(status); append(status, errorBox(err)); thread.setAttribute("data-loaded", "");
      });
    }
    function draw() {
      var list = Object.keys(byId).map(function (k) { return byId[k]; }).sort(function (a, b) {
        return new Date(a.createdAt) - new Date(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      });
      var atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
      clear(thread); clear(older);
      if (!list.length) append(thread, el("div", { class: "empty" }, "No messages stored for this chat."));
      append(thread, list.map(function (m) {
        return el("div", { class: "bubble" + (m.fromMe ? " me" : ""), "data-message": m.id },
          el("div", {}, m.text || m.pollQuestion || m.mediaFilename || "[" + m.type + "]"),
          el("div", { class: "meta" }, (m.fromMe ? "" : (m.senderName || m.from || "") + " · ") + when(m.createdAt) + (m.fromMe ? " · " + human(m.status) : "")));
      }));
      count.textContent = list.length ? (list.length < total ? "The newest " + list.length + " of " + total + " messages." : total + (total === 1 ? " message." : " messages.")) : "";
      if (list.length < total) append(older, el("button", { class: "quiet", "data-older": "", onclick: loadOlder }, "Load older messages"));
      thread.setAttribute("data-loaded", "");
      if ((first || atBottom) && thread.lastChild) thread.lastChild.scrollIntoView({ block: "nearest" });
      first = false;
    }
    function loadOlder(e) {
      e.target.disabled = true;
      var before = document.documentElement.scrollHeight;
      fetchFrom(Object.keys(byId).length).then(function () { // keep the messages in view where they were
        window.scrollBy(0, document.documentElement.scrollHeight - before);
      });
    }
    function refresh() { return fetchFrom(0); }
    refresh();
    if (can("messages:write")) append(main, el("h2", {}, "Reply"), sendForm(jid, function () { setTimeout(refresh, 500); }));
    if (can("chats:read") && !/@newsletter$/.test(jid)) append(main, disappearingCard(jid));
    if (can("groups:read") && /@g\.us$/.test(jid)) append(main, groupInviteCard(jid));
    every(3000, refresh);
  }

  // disappearingCard shows a chat's disappearing-messages timer, changeable with chats:write.
  function disappearingCard(jid) {
    var timers = [["0", "Off"], ["86400", "24 hours"], ["604800", "7 days"], ["7776000", "90 days"]];
    var pick = el("select", { name: "seconds", disabled: !can("chats:write") }, timers.map(function (t) { return el("option", { value: t[0] }, t[1]); }));
    var status = el("div", {});
    var card = el("div", { class: "card", "data-disappearing": "" }, el("h2", {}, "Disappearing messages"), field("Timer", pick), status);
    function show(p) { return p.then(function (t) { clear(status); pick.value = String(t.seconds); }, function (err) { clear(status); append(status, errorBox(err)); }); }
    show(gql("query($c: String!) { disappearingTimer(chatId: $c) { seconds } }", { c: jid }).then(function (d) { return d.disappearingTimer; }));
    pick.addEventListener("change", function () {
      show(gql("mutation($c: String!, $s: Int!) { setDisappearingTimer(chatId: $c, seconds: $s) { seconds } }", { c: jid, s: Number(pick.value) })
        .then(function (d) { return d.setDisappearingTimer; }));
    });
    return card;
  }

  // groupInviteCard shows a group's invite link, which admins can reset, and
  // for admins the requests to join (docs/groups.md, "Invites, join requests
  // and communities"); anyone else sees why there is no link.
  function groupInviteCard(jid) {
    var body = el("div", {}), requests = null;
    var card = el("div", { class: "card", "data-invite": "" }, el("h2", {}, "Invite link"), body);
    function show(p) {
      return p.then(function (inv) {
        clear(body);
        append(body, el("p", { class: "mono" }, el("a", { href: inv.link, target: "_blank", rel: "noopener" }, inv.link)));
        if (can("groups:write")) append(body, action("Reset link", "mutation($g: String!) { resetGroupInvite(id: $g) { link } }", { g: jid }, function () { show(read()); }, "danger"));
        if (!requests) requests = card.parentNode.insertBefore(groupRequestsCard(jid), card.nextSibling); // an admin: the requests too
      }, function (err) { append(clear(body), el("p", { class: "muted" }, "No invite link: " + err.message)); })
        .then(function () { card.setAttribute("data-loaded", ""); });
    }
    function read() { return gql("query($g: String!) { groupInvite(id: $g) { link } }", { g: jid }).then(function (d) { return d.groupInvite; }); }
    show(read());
    return card;
  }

  // groupRequestsCard lists the pending requests to join a group, each to
  // approve or reject (admins only).
  function groupRequestsCard(jid) {
    var card = el("div", { class: "card", "data-requests": "" }, el("h2", {}, "Requests to join"));
    var refresh = paged(card, "query($g: String!, $limit: Int, $skip: Int) { groupJoinRequests(id: $g, limit: $limit, skip: $skip) { total items { chatId requestedAt } } }", { g: jid }, "groupJoinRequests", function (body, d) {
      append(body, table(["Who", "Asked", ""], d.groupJoinRequests.items.map(function (r) {
        var answer = "mutation($g: String!, $p: [String!]!, $a: Boolean!) { answerGroupJoinRequests(id: $g, participants: $p, approve: $a) { results { done } } }";
        return el("tr", { "data-request": r.chatId }, el("td", { class: "mono" }, r.chatId), el("td", {}, when(r.requestedAt)),
          el("td", {}, can("groups:write") ? [action("Approve", answer, { g: jid, p: [r.chatId], a: true }, function () { refresh(); }),
            action("Reject", answer, { g: jid, p: [r.chatId], a: false }, function () { refresh(); })] : null));
      }), "No pending requests."));
    });
    return card;
  }

  // newslettersPage lists the newsletters the store knows, to follow, unfollow,
  // mute and unmute, and follows one by its invite (docs/newsletters.md).
  function newslettersPage(main) {
    append(main, el("h1", {}, "Newsletters"));
    var refresh;
    if (can("newsletters:write")) append(main, submitForm(el("form", { class: "card", "data-follow": "" },
      field("Follow a newsletter by its invite code or link", el("input", { name: "invite", required: true, size: 40, placeholder: "https://whatsapp.com/channel/…" })),
      el("button", { type: "submit" }, "Follow")),
    function (v) { return ["mutation($i: String) { followNewsletter(invite: $i) { jid } }", { i: v.invite }]; },
    function () { refresh(); }));
    refresh = paged(main, "query($limit: Int, $skip: Int) { newsletterList(limit: $limit, skip: $skip) { total items { jid name description subscribers following muted } } }", {}, "newsletterList", function (body, d) {
      append(body, table(["Newsletter", "Followers", "Following", ""], d.newsletterList.items.map(function (n) {
        var v = { n: n.jid };
        var acts = !can("newsletters:write") ? null : n.following ? [
          action(n.muted ? "Unmute" : "Mute", "mutation($n: String!, $m: Boolean!) { muteNewsletter(id: $n, muted: $m) { jid } }", { n: n.jid, m: !n.muted }, function () { refresh(); }),
          action("Unfollow", "mutation($n: String!) { unfollowNewsletter(id: $n) { jid } }", v, function () { refresh(); }, "danger")]
          : action("Follow", "mutation($n: String) { followNewsletter(id: $n) { jid } }", v, function () { refresh(); });
        return el("tr", { "data-newsletter": n.jid },
          el("td", {}, link("/dashboard/chats/" + encodeURIComponent(n.jid), n.name || n.jid), el("div", { class: "muted" }, n.description), el("div", { class: "mono muted" }, n.jid)),
          el("td", { class: "num" }, n.subscribers),
          el("td", {}, n.following ? (n.muted ? "yes, muted" : "yes") : "no"),
          el("td", {}, acts));
      }), "No newsletters."));
    });
  }

  function groupsPage(main) {
    append(main, el("h1", {}, "Groups"));
    var refresh;
    var result = el("div", {});
    if (can("groups:write")) append(main, submitForm(el("form", { class: "card" },
      field("Name", el("input", { name: "name", required: true, maxlength: 100 })),
      field("Participants (comma-separated numbers)", el("input", { name: "participants", required: true, size: 40 })),
      el("button", { type: "submit" }, "Create group")),
    function (v) {
      return ["mutation($n: String!, $p: [String!]!) { createGroup(name: $n, participants: $p) { group { id name } failedParticipants { participant message } } }",
        { n: v.name, p: v.participants.split(",").map(function (s) { return s.trim(); }).filter(Boolean) }];
    }, function (d) {
      clear(result);
      d.createGroup.failedParticipants.forEach(function (f) { append(result, errorBox(f.participant + ": " + f.message)); });
      refresh();
    }), result);
    var joined = el("div", {});
    if (can("groups:write")) append(main, submitForm(el("form", { class: "card", "data-join": "" },
      field("Join a group by its invite code or link", el("input", { name: "code", required: true, size: 40, placeholder: "https://chat.whatsapp.com/…" })),
      el("button", { type: "submit" }, "Join")),
    function (v) { return ["mutation($c: String!) { joinGroup(code: $c) { id name } }", { c: v.code }]; },
    function (d) {
      append(clear(joined), el("p", {}, "Joined ", link("/dashboard/chats/" + encodeURIComponent(d.joinGroup.id), d.joinGroup.name), "."));
      refresh();
    }), joined);
    refresh = paged(main, "query($limit: Int, $skip: Int) { groupList(limit: $limit, skip: $skip, includeArchive: true) { total items { id name description participantCount announce restrict lastMessageAt } } }", {}, "groupList", function (body, d) {
      append(body, table(["Group", "Participants", "Settings", "Last message"], d.groupList.items.map(function (g) {
        return el("tr", { "data-group": g.id },
          el("td", {}, link("/dashboard/chats/" + encodeURIComponent(g.id), g.name), el("div", { class: "muted" }, g.description), el("div", { class: "mono muted" }, g.id)),
          el("td", { class: "num" }, g.participantCount),
          el("td", {}, g.announce ? "admins send" : "all send", ", ", g.restrict ? "admins edit" : "all edit"),
          el("td", {}, when(g.lastMessageAt)));
      }), "No groups."));
    });
  }

  // contactsPage checks numbers (docs/contacts.md) and shows the block list.
  function contactsPage(main) {
    append(main, el("h1", {}, "Contacts"));
    var results = el("div", { "data-checked": "" });
    append(main, submitForm(el("form", { class: "card" },
      field("Check numbers (one E.164 number per line, at most 100)", el("textarea", { name: "phones", required: true })),
      el("button", { type: "submit" }, "Check")),
    function (v) {
      return ["query($p: [String!]!) { checkNumbers(phones: $p) { items { phone onWhatsApp chatId lid isBusiness businessName } } }",
        { p: v.phones.split(/\s*\n\s*/).filter(Boolean) }];
    }, function (d) {
      append(clear(results), table(["Number", "On WhatsApp", "Chat id", "LID", "Business"], d.checkNumbers.items.map(function (n) {
        return el("tr", {}, el("td", { class: "mono" }, n.phone), el("td", {}, n.onWhatsApp ? "yes" : "no"),
          el("td", { class: "mono" }, n.chatId || ""), el("td", { class: "mono" }, n.lid || ""), el("td", {}, n.isBusiness ? (n.businessName || "yes") : ""));
      }), "No numbers."));
    }));
    append(main, results, el("h2", {}, "Blocked"));
    var refresh;
    if (can("contacts:write")) append(main, submitForm(el("form", { class: "card" },
      field("Block a contact (E.164 number or chat id)", el("input", { name: "id", required: true })),
      el("button", { type: "submit", class: "danger" }, "Block")),
    function (v) { return ["mutation($id: String!) { blockContact(id: $id) { total } }", { id: v.id }]; }, function () { refresh(); }));
    refresh = load(main, "{ blockedContacts { total items } }", {}, function (body, d) {
      append(body, table(["Contact", ""], d.blockedContacts.items.map(function (id) {
        return el("tr", { "data-blocked": id }, el("td", { class: "mono" }, id),
          el("td", {}, can("contacts:write") ? action("Unblock", "mutation($id: String!) { unblockContact(id: $id) { total } }", { id: id }, function () { refresh(); }) : ""));
      }), "No blocked contacts."), el("p", { class: "muted" }, d.blockedContacts.total + " blocked"));
    });
  }

  function audiencesPage(main) {
    append(main, el("h1", {}, "Audiences"));
    var refresh;
    if (can("audiences:write")) append(main, submitForm(el("form", { class: "card" },
      field("Name", el("input", { name: "name", required: true, maxlength: 100 })),
      field("Contacts (one number per line)", el("textarea", { name: "contacts" })),
      el("button", { type: "submit" }, "Create audience")),
    function (v) {
      var contacts = v.contacts.split(/\s*\n\s*/).filter(Boolean).map(function (to) { return { to: to }; });
      return ["mutation($in: AudienceInput!) { createAudience(input: $in) { id } }", { in: { name: v.name, contacts: contacts } }];
    }, function () { refresh(); }));
    refresh = paged(main, "query($limit: Int, $skip: Int) { audienceList(limit: $limit, skip: $skip) { total items { id name contactCount createdAt } } }", {}, "audienceList", function (body, d) {
      append(body, table(["Audience", "Contacts", "Created"], d.audienceList.items.map(function (a) {
        return el("tr", { "data-audience": a.id }, el("td", {}, el("strong", {}, a.name), el("div", { class: "mono muted" }, a.id)),
          el("td", { class: "num" }, a.contactCount), el("td", {}, when(a.createdAt)));
      }), "No audiences."));
    });
  }

  function campaignsPage(main) {
    append(main, el("h1", {}, "Campaigns"));
    var refresh;
    if (can("campaigns:write") && can("audiences:read")) {
      var audiences = el("select", { name: "audienceId", required: true });
      var text = el("textarea", { name: "text", required: true, placeholder: "Hi {firstName}, your order is ready." });
      var preview = el("div", { class: "preview", "data-preview": "" });
      gql("{ audienceList(limit: 200) { items { id name contactCount } } }").then(function (d) {
        d.audienceList.items.forEach(function (a) { append(audiences, el("option", { value: a.id }, a.name + " (" + a.contactCount + ")")); });
        showPreview();
      });
      var timer = null;
      var showPreview = function () { clearTimeout(timer); timer = setTimeout(function () { campaignPreview(preview, audiences.value, text.value); }, 250); };
      audiences.addEventListener("change", showPreview);
      text.addEventListener("input", showPreview);
      append(main, submitForm(el("form", { class: "card", id: "campaign-form" },
        field("Name", el("input", { name: "name", required: true, maxlength: 100 })),
        field("Audience", audiences),
        field("Text", text),
        el("button", { type: "submit" }, "Start campaign"),
        el("p", { class: "muted hint" }, "Variables take single braces: {firstName} is each contact's firstName variable; built in are {phone}, {whatsappName} and {displayName}. Double braces ({{ }}) are sent as they are."),
        preview),
      function (v) { return ["mutation($in: CampaignInput!) { createCampaign(input: $in) { id } }", { in: { name: v.name, audienceId: v.audienceId, text: v.text } }]; },
      function () { clear(preview); refresh(); }));
    }
    refresh = paged(main, "query($limit: Int, $skip: Int) { campaignList(limit: $limit, skip: $skip) { total items { id name status pauseReason createdAt progress { total sent delivered read failed remaining percent } } } }", {}, "campaignList", function (body, d) {
      append(body, table(["Campaign", "Status", "Progress", "Sent", "Delivered", "Read", "Failed", ""], d.campaignList.items.map(function (c) {
        var p = c.progress;
        return el("tr", { "data-campaign": c.id },
          el("td", {}, el("strong", {}, c.name), el("div", { class: "muted" }, when(c.createdAt))),
          el("td", {}, badge(c.status), c.pauseReason ? el("div", { class: "muted" }, c.pauseReason) : null),
          el("td", {}, el("div", { class: "bar", title: p.percent.toFixed(1) + "%" }, el("span", { style: null })), el("div", { class: "muted" }, p.percent.toFixed(0) + "% of " + p.total)),
          el("td", { class: "num" }, p.sent), el("td", { class: "num" }, p.delivered), el("td", { class: "num" }, p.read), el("td", { class: "num" }, p.failed),
          el("td", { class: "row-actions" }, can("campaigns:write") ? [
            c.status === "running" || c.status === "pending" ? action("Pause", "mutation($id: ID!) { pauseCampaign(id: $id) { id } }", { id: c.id }, refresh) : null,
            c.status === "paused" ? action("Resume", "mutation($id: ID!) { resumeCampaign(id: $id) { id } }", { id: c.id }, refresh) : null,
            /^(running|pending|paused)$/.test(c.status) ? action("Cancel", "mutation($id: ID!) { cancelCampaign(id: $id) { id } }", { id: c.id }, refresh, "danger") : null
          ] : null));
      }), "No campaigns."));
      // widths are set as properties: the page's policy allows no inline styles
      Array.prototype.forEach.call(body.querySelectorAll(".bar > span"), function (s, i) {
        s.style.width = Math.min(100, d.campaignList.items[i].progress.percent) + "%";
      });
    });
    every(3000, refresh);
  }

  // sampleContacts caches an audience's first contact, the preview's sample.
  var sampleContacts = {};
  function sampleContact(audienceId) {
    if (!sampleContacts[audienceId]) sampleContacts[audienceId] = gql("query($id: ID!) { audience(id: $id) { contacts(first: 1) { edges { node { to variables { key value } } } } } }", { id: audienceId })
      .then(function (d) { var e = d.audience.contacts.edges; return e.length ? e[0].node : null; }, function (err) { delete sampleContacts[audienceId]; throw err; });
    return sampleContacts[audienceId];
  }

  // renderTemplate resolves a campaign text's {tokens} for contact c as the
  // server does (campaigns/template.go): single braces, case and whitespace
  // ignored, a variable before a built-in; {{ and }} stay; a token without a
  // value stays as written and is listed in missing.
  function renderTemplate(text, c, missing) {
    var vars = {};
    (c.variables || []).forEach(function (v) { vars[v.key.toLowerCase()] = v.value; });
    var phone = /@c\.us$/.test(c.to) ? "+" + c.to.slice(0, -5) : c.to;
    var builtins = { phone: phone, mobile: phone, whatsappname: "‹their WhatsApp name›" };
    var full = ((vars.firstname || "") + " " + (vars.lastname || "")).trim();
    builtins.displayname = full || "‹their WhatsApp name, else " + phone + "›";
    return text.replace(/\{\{|\}\}|\{([^{}\n]{1,64})\}/g, function (m, inner) {
      if (m === "{{" || m === "}}") return m;
      var key = inner.split(/\s+/).join("").toLowerCase();
      if (!key) return m;
      if (Object.prototype.hasOwnProperty.call(vars, key)) return vars[key];
      if (Object.prototype.hasOwnProperty.call(builtins, key)) return builtins[key];
      if (missing.indexOf(m) < 0) missing.push(m);
      return m;
    });
  }

  // campaignPreview shows the text as the audience's first contact receives it.
  function campaignPreview(box, audienceId, text) {
    if (!audienceId || !text.trim()) { clear(box); return; }
    var page = shown;
    sampleContact(audienceId).then(function (c) {
      if (page !== shown) return;
      clear(box);
      if (!c) { append(box, el("p", { class: "muted" }, "The audience has no contacts to preview with.")); return; }
      var missing = [];
      var out = renderTemplate(text, c, missing);
      append(box, el("div", { class: "muted" }, "Preview for ", el("span", { class: "mono" }, c.to)),
        el("div", { class: "bubble me", "data-rendered": "" }, out),
        missing.length ? el("p", { class: "notice" }, missing.join(", ") + (missing.length === 1 ? " is" : " are") + " not a variable of this contact: sent as written.") : null,
        /\{\{/.test(text) ? el("p", { class: "notice" }, "{{ and }} are not variables: they are sent as written. Use single braces, as in {firstName}.") : null);
    }, function (err) { if (page === shown) { clear(box); append(box, errorBox(err)); } });
  }

  function boardsPage(main) {
    append(main, el("h1", {}, "Boards"));
    paged(main, "query($limit: Int, $skip: Int) { boardList(limit: $limit, skip: $skip) { total items { id name domain description itemCount agentManaged updatedAt } } }", {}, "boardList", function (body, d) {
      append(body, table(["Board", "Domain", "Items", "Updated"], d.boardList.items.map(function (b) {
        return el("tr", { "data-board": b.id }, el("td", {}, link("/dashboard/boards/" + encodeURIComponent(b.id), b.name), el("div", { class: "muted" }, b.description)),
          el("td", {}, b.domain), el("td", { class: "num" }, b.itemCount), el("td", {}, when(b.updatedAt)));
      }), "No boards: an agent opens one through the API."));
    });
  }

  function optionBadge(o) {
    if (!o) return null;
    var b = el("span", { class: "badge" }, o.label);
    b.style.background = o.bgcolor; // a property, not an inline style attribute
    return b;
  }

  function boardPage(main, args) {
    var id = args[0], itemID = args[1];
    append(main, el("p", {}, link("/dashboard/boards", "← Boards")));
    paged(main, "query($id: ID!, $limit: Int, $skip: Int) { board(id: $id) { id name description domain itemCount webUrl columns { id title type } } boardItems(boardId: $id, limit: $limit, skip: $skip) { total items { id text status { label bgcolor } priority { label bgcolor } dueDate confidence lastSeenAt source { chatName excerpt } webUrl } } }",
      { id: id }, "boardItems", function (body, d) {
        append(body, el("h1", {}, d.board.name), el("p", { class: "muted" }, d.board.description, " · ", d.board.domain, " · ", d.board.itemCount + " item(s)"));
        var found = false;
        append(body, table(["Item", "Status", "Priority", "Due", "Source", "Last seen"], d.boardItems.items.map(function (it) {
          var mine = it.id === itemID; found = found || mine;
          return el("tr", { "data-item": it.id, class: mine ? "highlight" : "", id: "item-" + it.id },
            el("td", {}, it.text), el("td", {}, optionBadge(it.status)), el("td", {}, optionBadge(it.priority)), el("td", {}, it.dueDate || ""),
            el("td", {}, it.source ? [it.source.chatName || "", el("div", { class: "muted" }, it.source.excerpt || "")] : ""), el("td", {}, when(it.lastSeenAt)));
        }), "The board is empty."));
        if (itemID && !found) append(body, el("p", { class: "notice" }, "Item " + itemID + " is not on this page of the board's live items (newest first)."));
        if (itemID && found) document.getElementById("item-" + itemID).scrollIntoView({ block: "center" });
      }, 200);
  }

  function musicPage(main) {
    append(main, el("h1", {}, "Music"));
    var refresh;
    if (can("music:write")) append(main, submitForm(el("form", { class: "card" },
      field("Title", el("input", { name: "title", maxlength: 200 })),
      field("Style", el("input", { name: "style", required: true, maxlength: 1000, placeholder: "pop ballad, acoustic guitar" })),
      field("Lyrics", el("textarea", { name: "lyrics", maxlength: 5000, placeholder: "[Verse]\n…" })),
      el("label", {}, "Instrumental", el("input", { type: "checkbox", name: "instrumental" })),
      el("button", { type: "submit" }, "Generate song")),
    function (v) {
      return ["mutation($in: SongInput!) { generateSong(input: $in) { jobId } }",
        { in: { title: v.title || null, style: v.style, lyrics: v.lyrics || null, instrumental: v.instrumental } }];
    }, function () { refresh(); }));
    refresh = paged(main, "query($limit: Int, $skip: Int) { musicClipList(limit: $limit, skip: $skip) { total items { id title status audioUrl imageUrl durationSec errorMessage } } }", {}, "musicClipList", function (body, d) {
      append(body, table(["", "Clip", "Status", "Length", "Play"], d.musicClipList.items.map(function (c) {
        return el("tr", { "data-clip": c.id },
          el("td", {}, c.imageUrl ? el("img", { class: "cover", src: c.imageUrl, alt: "" }) : null),
          el("td", {}, c.title || "Untitled", el("div", { class: "mono muted" }, c.id)),
          el("td", {}, badge(c.status), c.errorMessage ? el("div", { class: "error" }, c.errorMessage) : null),
          el("td", {}, c.durationSec ? Math.round(c.durationSec) + " s" : ""),
          el("td", {}, c.audioUrl ? el("audio", { controls: true, preload: "none", src: c.audioUrl }) : null));
      }), "No songs yet."));
    });
    every(5000, function () { // while nothing plays: a refresh would stop the player
      if (!Array.prototype.some.call(document.querySelectorAll("audio"), function (a) { return !a.paused; })) refresh();
    });
  }

  function webhooksPage(main) {
    append(main, el("h1", {}, "Webhooks"));
    var out = el("div", {}), refresh;
    if (can("webhooks:write")) {
      var events = el("div", { class: "scopes" });
      gql("{ webhookEventTypes }").then(function (d) {
        d.webhookEventTypes.forEach(function (t) {
          append(events, el("label", {}, el("input", { type: "checkbox", name: "event:" + t, checked: /^message\./.test(t) }), t));
        });
      });
      append(main, submitForm(el("form", { class: "card" },
        field("Endpoint URL (https)", el("input", { name: "url", type: "url", required: true, size: 50 })),
        field("Description", el("input", { name: "description", maxlength: 120 })),
        field("Events", events),
        el("button", { type: "submit" }, "Add webhook")),
      function (v) {
        var ev = Object.keys(v).filter(function (k) { return k.indexOf("event:") === 0 && v[k]; }).map(function (k) { return k.slice(6); });
        return ["mutation($in: WebhookInput!) { createWebhook(input: $in) { secret webhook { id } } }", { in: { url: v.url, description: v.description, events: ev } }];
      }, function (d) { clear(out); append(out, secretBox("The webhook's signing secret", d.createWebhook.secret)); refresh(); }));
    }
    append(main, out);
    refresh = paged(main, "query($limit: Int, $skip: Int) { webhookList(limit: $limit, skip: $skip) { total items { id url description events status consecutiveFailures createdAt } } }", {}, "webhookList", function (body, d) {
      append(body, table(["Endpoint", "Events", "Status", "Failures", ""], d.webhookList.items.map(function (w) {
        return el("tr", { "data-webhook": w.id },
          el("td", {}, link("/dashboard/webhooks/" + encodeURIComponent(w.id), w.url), el("div", { class: "muted" }, w.description)),
          el("td", { class: "mono" }, w.events.join(", ")), el("td", {}, badge(w.status)), el("td", { class: "num" }, w.consecutiveFailures),
          el("td", { class: "row-actions" }, can("webhooks:write") ? [
            action(w.status === "enabled" ? "Disable" : "Enable", "mutation($id: ID!, $s: String!) { updateWebhook(id: $id, input: { status: $s }) { id } }",
              { id: w.id, s: w.status === "enabled" ? "disabled" : "enabled" }, refresh),
            action("Delete", "mutation($id: ID!) { deleteWebhook(id: $id) { deleted } }", { id: w.id }, refresh, "danger")
          ] : null));
      }), "No webhooks."));
    });
  }

  function webhookPage(main, args) {
    var id = args[0];
    append(main, el("p", {}, link("/dashboard/webhooks", "← Webhooks")));
    var refresh = paged(main, "query($id: ID!, $limit: Int, $skip: Int) { webhook(id: $id) { id url status events } webhookDeliveries(webhookId: $id, limit: $limit, skip: $skip) { total items { id eventType eventID status attempts lastAttemptAt nextAttemptAt lastError createdAt } } }",
      { id: id }, "webhookDeliveries", function (body, d) {
        append(body, el("h1", {}, d.webhook.url), el("p", {}, badge(d.webhook.status), " ", el("span", { class: "mono muted" }, d.webhook.events.join(", "))));
        append(body, el("h2", {}, "Deliveries (" + d.webhookDeliveries.total + ")"));
        append(body, table(["Created", "Event", "Status", "Attempts", "Last error", ""], d.webhookDeliveries.items.map(function (x) {
          return el("tr", { "data-delivery": x.id },
            el("td", {}, when(x.createdAt)), el("td", {}, human(x.eventType.replace(/\./g, " ")), el("div", { class: "mono muted" }, x.eventType), el("div", { class: "mono muted" }, x.eventID)),
            el("td", {}, badge(x.status), x.nextAttemptAt ? el("div", { class: "muted" }, "next " + when(x.nextAttemptAt)) : null),
            el("td", { class: "num" }, x.attempts), el("td", {}, x.lastError || ""),
            el("td", {}, can("webhooks:write") ? action("Redeliver", "mutation($w: ID!, $d: ID!) { redeliverWebhookDelivery(webhookId: $w, deliveryId: $d) { id } }", { w: id, d: x.id }, refresh) : null));
        }), "No deliveries yet."));
      });
    every(4000, refresh);
  }

  function keysPage(main) {
    append(main, el("h1", {}, "API keys"));
    var out = el("div", {}), refresh;
    if (can("keys:write")) {
      var scopes = el("div", { class: "scopes" });
      gql("{ grantableScopes }").then(function (d) {
        d.grantableScopes.forEach(function (s) { append(scopes, el("label", {}, el("input", { type: "checkbox", name: "scope:" + s }), s)); });
      });
      append(main, submitForm(el("form", { class: "card", id: "key-form" },
        field("Name", el("input", { name: "name", maxlength: 100, required: true })),
        field("Scopes", scopes),
        el("button", { type: "submit" }, "Create key")),
      function (v) {
        var chosen = Object.keys(v).filter(function (k) { return k.indexOf("scope:") === 0 && v[k]; }).map(function (k) { return k.slice(6); });
        return ["mutation($in: APIKeyInput!) { createApiKey(input: $in) { key apiKey { id prefix } } }", { in: { name: v.name, scopes: chosen } }];
      }, function (d) { clear(out); append(out, secretBox("The new API key", d.createApiKey.key)); refresh(); }));
    }
    append(main, out);
    var prefix = el("input", { type: "search", placeholder: "Filter by prefix (sb_live_…)", size: 30 });
    append(main, el("div", { class: "toolbar" }, prefix));
    refresh = paged(main, "query($p: String, $limit: Int, $skip: Int) { apiKeyList(prefix: $p, limit: $limit, skip: $skip) { total items { id name prefix scopes createdAt revokedAt } } }",
      function () { return { p: prefix.value.trim() || null }; }, "apiKeyList", function (body, d) {
        append(body, table(["Name", "Prefix", "Scopes", "Created", "Status", ""], d.apiKeyList.items.map(function (k) {
          return el("tr", { "data-key": k.id },
            el("td", {}, k.name, el("div", { class: "mono muted" }, k.id)), el("td", { class: "mono" }, k.prefix + "…"),
            el("td", { class: "mono" }, k.scopes.join(", ")), el("td", {}, when(k.createdAt)),
            el("td", {}, k.revokedAt ? badge("revoked") : el("span", { class: "badge good" }, "active")),
            el("td", {}, !k.revokedAt && can("keys:write") ? (k.prefix === session.prefix.replace(/(…|\.\.\.)$/, "") ? revokeOwn(k) :
              action("Revoke", "mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }", { id: k.id }, refresh, "danger")) : null));
        }), "No keys match."));
      });
    prefix.addEventListener("input", function () { refresh.reset(); });
  }

  // revokeOwn is the Revoke button of the key the session stands for: it warns
  // that revoking it signs this page out, and then says so.
  function revokeOwn(k) {
    return el("button", { class: "danger", "data-own-key": "", onclick: function (e) {
      if (!confirm("This is the key you are signed in with (" + k.prefix + "…). Revoking it signs you out of the dashboard at once, and every client using it stops working. Revoke it?")) return;
      e.target.disabled = true;
      gql("mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }", { id: k.id }).then(function () {
        notice = "You revoked the key you were signed in with (" + k.prefix + "…), so you are signed out. Sign in with another key.";
        session = null; go("/dashboard", true);
      }, function (err) { if (session) { alert(err.message); e.target.disabled = false; } });
    } }, "Revoke (your key)");
  }

  loadSession().then(render);
})();
