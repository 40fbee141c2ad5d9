/* vqaudit sample browser. Data files call vqauditIndex(...) / vqauditPage(n, ...) with JSON literals; every
   string from the data is put into the page with textContent (never innerHTML), so nothing in a reply, a
   question or a file name can become markup or script. */
"use strict";
(function () {
  var INDEX = null, PAGES = {}, WAITING = {}, SHOWN = 25, page = 0, matches = [];
  var FAIL = 1, DECISION = 2, ANSWER = 4, INVALID = 8, ERROR = 16;
  var KIND = { decision: DECISION, answer: ANSWER, invalid: INVALID, error: ERROR };

  window.vqauditIndex = function (data) { INDEX = data; };
  window.vqauditPage = function (n, rows) {
    PAGES[n] = rows;
    (WAITING[n] || []).forEach(function (f) { f(); });
    delete WAITING[n];
  };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function kv(parent, key, value) {
    var p = el("div", "kv"); p.appendChild(el("b", null, key + ": ")); p.appendChild(document.createTextNode(
      value === null || value === undefined ? "null" : String(value))); parent.appendChild(p); return p;
  }
  function loadPage(n) {
    return new Promise(function (resolve, reject) {
      if (PAGES[n]) { resolve(); return; }
      var first = !WAITING[n];
      (WAITING[n] = WAITING[n] || []).push(resolve);
      if (!first) { return; }
      var s = document.createElement("script");
      s.src = "samples/page-" + String(n).padStart(5, "0") + ".js";
      s.onerror = function () { reject(new Error("cannot load " + s.src)); };
      document.head.appendChild(s);
    });
  }
  function value(id) { return document.getElementById(id).value; }

  function filter() {
    var run = value("f-run"), source = value("f-source"), state = value("f-state"), outcome = value("f-outcome");
    var kind = value("f-kind"), query = value("search").trim().toLowerCase();
    var words = query ? query.split(/\s+/) : [];
    matches = [];
    INDEX.rows.forEach(function (row, i) {
      if (run !== "" && String(row[0]) !== run) { return; }
      if (source && row[3] !== source) { return; }
      for (var w = 0; w < words.length; w++) { if (row[4].indexOf(words[w]) < 0) { return; } }
      var views = row[5].filter(function (v) { return !state || v[0] === state; });
      if (!views.length) { return; }
      var ok = views.some(function (v) {
        if (outcome === "fail" && !(v[1] & FAIL)) { return false; }
        if (outcome === "pass" && (v[1] & FAIL)) { return false; }
        if (kind && !(v[1] & KIND[kind])) { return false; }
        return true;
      });
      if (ok) { matches.push(i); }
    });
    page = 0;
    document.getElementById("count").textContent = matches.length + " of " + INDEX.rows.length + " rows match";
    render();
  }

  function drawMask(fig, img, rects) {
    function place() {
      var w = img.naturalWidth, h = img.naturalHeight;
      if (!w || !h) { return; }
      rects.forEach(function (r) {
        var box = el("div", "maskbox");
        box.style.left = (100 * r[0] / w) + "%"; box.style.top = (100 * r[1] / h) + "%";
        box.style.width = (100 * (r[2] - r[0]) / w) + "%"; box.style.height = (100 * (r[3] - r[1]) / h) + "%";
        fig.appendChild(box);
      });
    }
    if (img.complete && img.naturalWidth) { place(); } else { img.addEventListener("load", place); }
  }

  function certificate(card, img, fig, cert) {
    var box = el("div", "cert");
    if (cert.kind === "determined") {
      box.appendChild(el("b", null, "proof: masked, yet the visible cells determine the answer"));
      kv(box, "answer", (cert.answers || [])[0]);
      if (cert.rect) { kv(box, "mask " + (cert.mask || ""), "[" + cert.rect.join(", ") + "] px (x0, y0, x1, y1)"); }
      if (cert.certifier) { kv(box, "certifier", cert.certifier); }
      if (cert.rect && img) { drawMask(fig, img, [cert.rect]); }
    } else if (cert.kind === "chart") {
      box.appendChild(el("b", null, "certificate (two witness worlds)"));
      if (cert.problem) { box.appendChild(el("div", "flag", cert.problem)); card.appendChild(box); return; }
      kv(box, "answers (world A / world B)", (cert.answers || []).join(" / "));
      if (cert.cells && cert.cells.length) {
        var t = el("table"), h = el("tr");
        ["series", "category", "world A", "world B"].forEach(function (x) { h.appendChild(el("th", null, x)); });
        t.appendChild(h);
        cert.cells.forEach(function (c) {
          var tr = el("tr"); c.forEach(function (x) { tr.appendChild(el("td", null, x === null ? "?" : x)); });
          t.appendChild(tr);
        });
        box.appendChild(t);
      }
      if (cert.rect) { kv(box, "mask " + (cert.mask || ""), "[" + cert.rect.join(", ") + "] px (x0, y0, x1, y1)"); }
      if (cert.certifier) { kv(box, "certifier", cert.certifier); }
      if (cert.rejected && cert.rejected.length) { kv(box, "rejected masks", cert.rejected.join("; ")); }
      if (cert.rect && img) { drawMask(fig, img, [cert.rect]); }
    } else {
      box.appendChild(el("b", null, cert.kind === "photo" ? "mask boxes" : "edit"));
      box.appendChild(el("div", null, cert.note));
      if (cert.rects && img) { drawMask(fig, img, cert.rects); }
    }
    card.appendChild(box);
  }

  function viewCard(v) {
    var card = el("div", "view " + (v.passed ? "pass" : "fail"));
    card.dataset.state = v.state; card.dataset.viewId = v.id;
    var head = el("div"); head.appendChild(el("span", "vstate", v.state + " "));
    head.appendChild(el("span", "badge" + (v.passed ? "" : " fail"), v.passed ? "pass" : "fail"));
    card.appendChild(head);
    var fig = el("div", "thumb"), img = null;
    if (v.image && v.image.indexOf(":") < 0) {
      var a = el("a"); a.href = v.image; a.target = "_blank"; a.rel = "noopener";
      img = el("img"); img.loading = "lazy"; img.alt = v.id; img.src = v.image;
      a.appendChild(img); fig.appendChild(a);
    } else { fig.appendChild(el("div", "small", "(image not linked)")); }
    card.appendChild(fig);
    kv(card, "obligation", v.obligation + (v.gold && v.gold.length ? " (gold: " + v.gold.join(" | ") + ")" : ""));
    if (v.hint) { kv(card, "hint", v.hint); }  /* textContent: a hint is shown as text, never markup */
    if (v.options && v.options.length) {
      v.options.forEach(function (o, i) { kv(card, String.fromCharCode(65 + i), o); });
    }
    if (v.scored) {
      if (v.reasoning !== null && v.reasoning !== undefined) {  /* collapsed: the split reasoning, as text */
        var det = el("details", "reasoning");
        det.appendChild(el("summary", null, "reasoning (" + Number(v.reasoning_chars).toLocaleString("en") +
          " characters, " + v.reasoning_from + (v.finished ? "" : "; never finished") + ")"));
        det.appendChild(el("pre", "raw", v.reasoning));
        card.appendChild(det);
      }
      card.appendChild(el("b", null, "raw reply"));
      card.appendChild(el("pre", "raw", v.raw === null ? (v.error ? "(no reply) " + v.error : "(no reply)") : v.raw));
      kv(card, "decision", v.decision); kv(card, "answer", v.answer);
      if (v.reason !== null && v.reason !== undefined) { kv(card, "reason", v.reason); }
    }
    card.appendChild(el("div", "rule", v.rule));
    if (v.cert) { certificate(card, img, fig, v.cert); }
    return card;
  }

  function groupRow(row, state) {
    var views = row.views.filter(function (v) { return !state || v.state === state; });
    var failed = views.some(function (v) { return !v.passed; });
    var div = el("div", "group " + (failed ? "fail" : "pass"));
    div.dataset.group = row.group;
    var head = el("div", "ghead");
    head.appendChild(el("span", "gid", row.group));
    head.appendChild(el("span", "small", INDEX.runs[row.run].label + " · " + row.source));
    head.appendChild(el("span", "gq", row.question));
    div.appendChild(head);
    var strip = el("div", "views");
    views.forEach(function (v) { strip.appendChild(viewCard(v)); });
    div.appendChild(strip);
    return div;
  }

  function render() {
    var pages = Math.max(1, Math.ceil(matches.length / SHOWN));
    page = Math.min(page, pages - 1);
    document.getElementById("pageinfo").textContent = "page " + (page + 1) + " of " + pages;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
    var shown = matches.slice(page * SHOWN, (page + 1) * SHOWN), wanted = {};
    shown.forEach(function (i) { wanted[INDEX.rows[i][1]] = true; });
    var token = {}; render.token = token; document.body.dataset.ready = "0";
    Promise.all(Object.keys(wanted).map(function (n) { return loadPage(Number(n)); })).then(function () {
      if (render.token !== token) { return; }
      var box = document.getElementById("rows"), state = value("f-state");
      box.replaceChildren();
      if (!shown.length) { box.appendChild(el("p", "empty", "no rows match")); }
      shown.forEach(function (i) {
        var r = INDEX.rows[i], rows = PAGES[r[1]], pos = i % INDEX.page_groups;
        box.appendChild(groupRow(rows[pos], state));
      });
      document.body.dataset.ready = "1";
    }, function (err) {
      var box = document.getElementById("rows"); box.replaceChildren(); box.appendChild(el("p", "flag", err.message));
    });
  }

  function fill(id, values, labels) {
    var s = document.getElementById(id);
    values.forEach(function (v, i) { var o = el("option", null, labels ? labels[i] : v); o.value = v; s.appendChild(o); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!INDEX) { document.getElementById("loading").textContent = "samples/index.js did not load"; return; }
    fill("f-run", INDEX.runs.map(function (_, i) { return String(i); }),
         INDEX.runs.map(function (r) { return r.label + " (" + r.model + ")"; }));
    fill("f-source", INDEX.sources); fill("f-state", INDEX.states);
    ["f-run", "f-source", "f-state", "f-outcome", "f-kind"].forEach(function (id) {
      document.getElementById(id).addEventListener("change", filter);
    });
    var timer = null;
    document.getElementById("search").addEventListener("input", function () {
      clearTimeout(timer); timer = setTimeout(filter, 150);
    });
    document.getElementById("prev").addEventListener("click", function () { page -= 1; render(); window.scrollTo(0, 0); });
    document.getElementById("next").addEventListener("click", function () { page += 1; render(); window.scrollTo(0, 0); });
    filter();
  });
})();
