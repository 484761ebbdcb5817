// Progressive enhancement only: every table is readable without this script.
(function () {
  "use strict";
  function cellValue(td) {
    var v = td.getAttribute("data-v");
    return v !== null ? v : td.textContent.trim();
  }
  function csvEscape(s) {
    if (/^[=+@\t\r]/.test(s) || (/^-/.test(s) && isNaN(Number(s)))) { s = "'" + s; }
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function tableCsv(fig) {
    var rows = fig.querySelectorAll("table tr");
    var out = [];
    for (var i = 0; i < rows.length; i++) {
      var cells = rows[i].querySelectorAll("th, td");
      var line = [];
      for (var j = 0; j < cells.length; j++) { line.push(csvEscape(cellValue(cells[j]))); }
      out.push(line.join(","));
    }
    return out.join("\n") + "\n";
  }
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest ? ev.target.closest("a.csv") : null;
    if (!a || (a.getAttribute("href") || "").indexOf("data:") === 0) { return; }
    ev.preventDefault();
    var fig = document.getElementById(a.getAttribute("data-table"));
    if (!fig) { return; }
    var blob = new Blob([tableCsv(fig)], { type: "text/csv;charset=utf-8" });
    var url = URL.createObjectURL(blob);
    var tmp = document.createElement("a");
    tmp.href = url;
    tmp.download = a.getAttribute("download") || "table.csv";
    document.body.appendChild(tmp);
    tmp.click();
    tmp.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  });
  function unhide() {
    var links = document.querySelectorAll("a.csv[hidden], .js-only[hidden]");
    for (var i = 0; i < links.length; i++) { links[i].hidden = false; }
  }
  function openTarget() {
    if (!location.hash) { return; }
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    while (el) {
      if (el.tagName === "DETAILS") { el.open = true; }
      el = el.parentElement;
    }
  }
  function allQuestions() { return document.querySelectorAll("details.question"); }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button[data-action]") : null;
    if (!b) { return; }
    var open = b.getAttribute("data-action") === "open-all";
    var qs = allQuestions();
    for (var i = 0; i < qs.length; i++) { if (!qs[i].hidden) { qs[i].open = open; } }
  });
  document.addEventListener("input", function (ev) {
    var t = ev.target;
    if (!t.matches || !t.matches("input[data-action=filter]")) { return; }
    var needle = t.value.trim().toLowerCase();
    var qs = allQuestions();
    for (var i = 0; i < qs.length; i++) {
      qs[i].hidden = needle !== "" && qs[i].textContent.toLowerCase().indexOf(needle) < 0;
    }
  });
  var reopened = [];
  window.addEventListener("beforeprint", function () {
    var qs = allQuestions();
    for (var i = 0; i < qs.length; i++) { if (!qs[i].open) { qs[i].open = true; reopened.push(qs[i]); } }
  });
  window.addEventListener("afterprint", function () {
    for (var i = 0; i < reopened.length; i++) { reopened[i].open = false; }
    reopened = [];
  });
  window.addEventListener("hashchange", openTarget);
  unhide();
  openTarget();
  document.documentElement.setAttribute("data-report-ready", "1");
})();
