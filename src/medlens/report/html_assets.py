"""Inline stylesheet and script of the HTML report (no CDN: the file works offline).

The script never assigns data to ``innerHTML``: every question, option and model output is put
into the page with ``textContent``, so untrusted model output stays text.
"""

from __future__ import annotations

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1200px; padding: 0 24px 48px; color: #1d232b; }
h1 { font-size: 24px; margin: 24px 0 8px; }
h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid #d7dce2; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e9ed; text-align: right;
         vertical-align: top; }
th { background: #f3f5f7; cursor: default; white-space: nowrap; }
table.sortable th { cursor: pointer; }
table.sortable th::after { content: " \\2195"; color: #9aa4af; }
td.text, th.text { text-align: left; }
.small { color: #8a6d00; }
.note { color: #56606b; }
.answer-key { background: #fff6d6; border: 1px solid #e8d48a; padding: 10px 14px; }
.plots img { max-width: 100%; border: 1px solid #e6e9ed; margin: 4px 8px 8px 0; }
#browser-controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center;
                    margin: 8px 0; }
#browser-controls label { font-size: 13px; color: #56606b; }
#item-table td { text-align: left; max-width: 360px; white-space: pre-wrap;
                 word-break: break-word; }
#item-table th { text-align: left; }
#item-table td:first-child { white-space: nowrap; }
#item-table tr.hit td.score { color: #1a7f37; }
#item-table tr.miss td.score { color: #c0392b; }
code { background: #f3f5f7; padding: 1px 4px; }
"""

SCRIPT = """
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) { return ""; }
    var raw = cell.getAttribute("data-v");
    return raw === null ? cell.textContent : raw;
  }
  function sortTable(table, index, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = th.getAttribute("data-order") !== "asc";
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var nx = parseFloat(x), ny = parseFloat(y);
      var result = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
      return ascending ? result : -result;
    });
    th.setAttribute("data-order", ascending ? "asc" : "desc");
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.addEventListener("click", function () { sortTable(table, index, th); });
    });
  });

  var source = document.getElementById("items-data");
  if (!source) { return; }
  var data = JSON.parse(source.textContent);
  var limit = 300;
  var controls = document.getElementById("browser-controls");
  var tbody = document.querySelector("#item-table tbody");
  var counter = document.getElementById("browser-count");
  var filters = {};

  function addSelect(name, values) {
    var label = document.createElement("label");
    label.textContent = name + " ";
    var select = document.createElement("select");
    select.setAttribute("data-filter", name);
    var any = document.createElement("option");
    any.value = ""; any.textContent = "(all)";
    select.appendChild(any);
    values.forEach(function (value) {
      var option = document.createElement("option");
      option.value = value; option.textContent = value;
      select.appendChild(option);
    });
    select.addEventListener("change", function () { filters[name] = select.value; render(); });
    label.appendChild(select);
    controls.appendChild(label);
  }
  data.axes.forEach(function (axis) {
    var seen = {};
    data.items.forEach(function (item) { if (item.axes[axis]) { seen[item.axes[axis]] = true; } });
    addSelect(axis, Object.keys(seen).sort());
  });
  addSelect("outcome", data.outcomes);
  var search = document.createElement("input");
  search.type = "search"; search.placeholder = "search question or output";
  search.addEventListener("input", render);
  controls.appendChild(search);

  function matches(item) {
    for (var name in filters) {
      var wanted = filters[name];
      if (!wanted) { continue; }
      var value = name === "outcome" ? item.outcome : item.axes[name];
      if (value !== wanted) { return false; }
    }
    var text = search.value.toLowerCase();
    if (text) {
      var hay = (item.question + " " + (item.output || "")).toLowerCase();
      if (hay.indexOf(text) < 0) { return false; }
    }
    return true;
  }
  function textCell(row, text, className) {
    var cell = document.createElement("td");
    cell.textContent = text === null || text === undefined ? "" : String(text);
    if (className) { cell.className = className; }
    row.appendChild(cell);
  }
  function render() {
    while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
    var shown = 0, total = 0;
    data.items.forEach(function (item) {
      if (!matches(item)) { return; }
      total += 1;
      if (shown >= limit) { return; }
      shown += 1;
      var row = document.createElement("tr");
      row.className = item.score === 1 ? "hit" : (item.score === 0 ? "miss" : "");
      var idCell = document.createElement("td"), link = document.createElement("a");
      link.href = data.viewer + "/item/" + encodeURIComponent(item.id);
      link.textContent = item.id;
      idCell.appendChild(link);
      row.appendChild(idCell);
      textCell(row, item.question);
      textCell(row, item.options);
      textCell(row, item.gold);
      textCell(row, item.output);
      textCell(row, item.extraction);
      textCell(row, item.score === null ? "–" : item.score, "score");
      tbody.appendChild(row);
    });
    counter.textContent = "showing " + shown + " of " + total + " matching items (" +
      data.items.length + " in the run)";
  }
  render();
  document.getElementById("item-browser").setAttribute("data-rendered", "1");
})();
"""
