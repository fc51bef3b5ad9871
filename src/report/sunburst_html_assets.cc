// The sunburst page's style, markup and script. Written for ptprof: plain SVG built with DOM calls,
// no libraries, nothing fetched.
#include "src/report/sunburst_html_assets.h"

namespace ptprof {

const char* const kSunburstCss = R"CSS(
body { font: 13px/1.35 "DejaVu Sans", system-ui, Helvetica, Arial, sans-serif; margin: 0; color: #222; background: #fff; }
header { padding: 10px 16px 2px; }
h1 { font-size: 17px; margin: 0 0 2px; font-weight: 600; }
.sub { color: #555; }
#bar { padding: 6px 16px 2px; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
#bar button { font: inherit; padding: 1px 8px; }
#crumbs { padding: 4px 16px; min-height: 18px; font-family: "DejaVu Sans Mono", monospace; font-size: 12px; color: #333; }
#crumbs span.seg { cursor: pointer; color: #1a55a8; }
#crumbs span.seg:hover { text-decoration: underline; }
#crumbs span.sep { color: #999; padding: 0 4px; }
#main { display: flex; gap: 18px; padding: 0 16px 16px; align-items: flex-start; }
#chart { flex: none; }
#chart path { stroke: #fff; stroke-width: 0.6; cursor: pointer; }
#chart path.hover { stroke: #000; stroke-width: 1.5; }
#chart text { pointer-events: none; font-size: 11px; fill: #111; }
#chart .centre text { font-size: 12px; }
#legend { min-width: 260px; max-width: 340px; font-size: 12px; }
#legend h2 { font-size: 13px; margin: 8px 0 4px; }
#legend .row { display: flex; align-items: center; gap: 6px; margin: 2px 0; }
#legend .sw { width: 14px; height: 14px; flex: none; border: 1px solid #999; }
#legend .note { color: #555; margin-top: 8px; }
#tip { position: fixed; display: none; background: rgba(255,255,255,0.97); border: 1px solid #888; padding: 6px 8px; box-shadow: 0 2px 6px rgba(0,0,0,0.25); max-width: 480px; font-size: 12px; pointer-events: none; z-index: 10; }
#tip .name { font-weight: 600; word-break: break-all; }
#tip .path { font-family: "DejaVu Sans Mono", monospace; font-size: 11px; color: #444; word-break: break-all; margin: 2px 0 4px; }
#tip table { border-collapse: collapse; }
#tip td { padding: 0 8px 0 0; }
#tip td.num { text-align: right; font-variant-numeric: tabular-nums; }
)CSS";

const char* const kSunburstBody = R"HTML(<header><h1 id="title"></h1><div class="sub" id="subtitle"></div><div class="sub" id="totals"></div></header>
<div id="bar">
  <span>angle:</span>
  <label><input type="radio" name="metric" value="insns"> instructions</label>
  <label><input type="radio" name="metric" value="ns"> time</label>
  <button id="reset" type="button">whole tree</button>
</div>
<div id="crumbs"></div>
<div id="main"><svg id="chart" role="img" aria-label="call-tree sunburst"></svg><div id="legend"></div></div>
<div id="tip"></div>
)HTML";

const char* const kSunburstScript = R"JS(
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("stacks-data").textContent);
  var isDiff = data.mode === "diff";
  var metric = data.weight === "ns" ? 1 : 0;   // 0: instructions, 1: time
  var MAX_RINGS = 14, MIN_ANGLE = 0.0015, CHAR_W = 6.4, TAU = 2 * Math.PI;
  var svg = document.getElementById("chart");
  var tip = document.getElementById("tip");
  var root = data.root, zoom = root, size = 700;

  function $(id) { return document.getElementById(id); }
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVGNS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function fmtInt(n) { return Math.round(n).toLocaleString("en-US"); }
  function fmtNs(ns) {
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (ns >= 1e3) return (ns / 1e3).toFixed(2) + " \u00b5s";
    return fmtInt(ns) + " ns";
  }
  function pct(x) { return (100 * x).toFixed(x >= 0.1 ? 1 : 2) + "%"; }
  function signedPct(x) { return (x >= 0 ? "+" : "\u2212") + (100 * Math.abs(x)).toFixed(2) + " points"; }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }
  function moduleOf(node) { return node.m === undefined ? "" : data.modules[node.m]; }
  function isKernel(node) { return moduleOf(node) === "kernel"; }
  function label(node) { return node === root ? "all" : (node.n || "[unknown]"); }

  // Tree links, and the numbers a node is drawn with for the current metric.
  (function link(node, parent, depth) {
    node.p = parent; node.d = depth; node.c = node.c || [];
    node.c.forEach(function (child) { link(child, node, depth + 1); });
  })(root, null, 0);
  var totalA = 0, totalB = 0;
  function side(node, which) { return node[which] ? node[which][metric] : 0; }
  function shareA(node) { return totalA ? side(node, "a") / totalA : 0; }
  function shareB(node) { return totalB ? side(node, "b") / totalB : 0; }
  function status(node) {
    if (!isDiff) return "";
    if (!node.a) return "onlyB";
    if (!node.b) return "onlyA";
    return Math.abs(shareB(node) - shareA(node)) >= data.threshold ? "changed" : "same";
  }
  // node.v: the slice size, never smaller than the children's sum (tree totals) or, in a diff,
  // the larger of the two shares.
  function measure(node) {
    var own = isDiff ? Math.max(shareA(node), shareB(node)) : (metric ? node.t : node.i);
    var sum = 0;
    node.c.forEach(function (child) { sum += measure(child); });
    node.v = Math.max(own, sum);
    return node.v;
  }
  function setMetric(m) {
    metric = m;
    if (isDiff) {
      totalA = metric ? data.a.total_ns : data.a.total_insns;
      totalB = metric ? data.b.total_ns : data.b.total_insns;
    }
    measure(root);
    document.querySelectorAll("input[name=metric]").forEach(function (input) {
      input.checked = (input.value === "ns") === (metric === 1);
    });
  }
  var maxDelta = 0;
  function findMaxDelta(node) {
    if (node !== root && node.a && node.b) maxDelta = Math.max(maxDelta, Math.abs(shareB(node) - shareA(node)));
    node.c.forEach(findMaxDelta);
  }

  function colour(node) {
    if (isDiff) {
      var s = status(node);
      if (s === "onlyB") return "url(#hatch-new)";
      if (s === "onlyA") return "#f4f4f4";
      if (s === "same") return "#d9d9d9";
      var d = shareB(node) - shareA(node);
      var k = maxDelta > 0 ? Math.sqrt(Math.abs(d) / maxDelta) : 0;
      var light = Math.round(88 - 45 * k);
      return d > 0 ? "hsl(8,75%," + light + "%)" : "hsl(212,70%," + light + "%)";
    }
    var h = hash(node.n || "");
    var m = moduleOf(node);
    var hue, sat = 55 + (h >>> 8) % 30, light = 58 + (h >>> 16) % 18;
    if (m === "kernel") hue = (h % 46);                 // reds, oranges, yellows
    else if (m) hue = 175 + (h % 100);                  // teals, blues, violets
    else hue = h % 360;
    return "hsl(" + hue + "," + sat + "%," + light + "%)";
  }

  function point(r, a) { return [r * Math.sin(a), -r * Math.cos(a)]; }
  function arcPath(a0, a1, r0, r1) {
    if (a1 - a0 >= TAU - 1e-9) {   // a full ring: two half circles each way
      return "M0," + (-r1) + "A" + r1 + "," + r1 + " 0 1,1 0," + r1 + "A" + r1 + "," + r1 + " 0 1,1 0," + (-r1) +
        "M0," + (-r0) + "A" + r0 + "," + r0 + " 0 1,0 0," + r0 + "A" + r0 + "," + r0 + " 0 1,0 0," + (-r0) + "Z";
    }
    var large = a1 - a0 > Math.PI ? 1 : 0;
    var p0 = point(r1, a0), p1 = point(r1, a1), p2 = point(r0, a1), p3 = point(r0, a0);
    return "M" + p0 + "A" + r1 + "," + r1 + " 0 " + large + ",1 " + p1 + "L" + p2 +
      "A" + r0 + "," + r0 + " 0 " + large + ",0 " + p3 + "Z";
  }
  function fit(text, chars) {
    if (text.length <= chars) return text;
    return chars >= 6 ? text.slice(0, chars - 1) + "\u2026" : "";
  }
  // A label inside the slice, along the ring or along the radius, whichever holds more of the name;
  // none when the slice is too small (it stays hoverable).
  // Dark fills (strong changes in a diff) get white labels.
  function labelColour(node) {
    if (!isDiff || status(node) !== "changed" || maxDelta <= 0) return "#111";
    return Math.sqrt(Math.abs(shareB(node) - shareA(node)) / maxDelta) > 0.6 ? "#fff" : "#111";
  }
  function addLabel(group, node, a0, a1, r0, r1) {
    var name = label(node), mid = (a0 + a1) / 2, rm = (r0 + r1) / 2;
    var along = (a1 - a0) * rm, thick = r1 - r0;
    var tangential = thick >= 13 ? Math.floor((Math.min(along, 2 * rm) - 8) / CHAR_W) : 0;
    var radial = along >= 13 ? Math.floor((thick - 8) / CHAR_W) : 0;
    var text = fit(name, Math.max(tangential, radial));
    if (!text) return;
    var deg = mid * 180 / Math.PI, rot;
    if (tangential >= radial) rot = (deg > 90 && deg < 270) ? deg + 180 : deg;
    else rot = deg < 180 ? deg - 90 : deg + 90;
    var p = point(rm, mid);
    var t = el("text", { transform: "translate(" + p[0].toFixed(1) + "," + p[1].toFixed(1) + ") rotate(" + rot.toFixed(1) + ")",
                         "text-anchor": "middle", "dominant-baseline": "central", style: "fill:" + labelColour(node) }, group);
    t.textContent = text;
  }

  function depthBelow(node, limit) {
    if (limit === 0) return 0;
    var d = 0;
    node.c.forEach(function (child) { if (child.v > 0) d = Math.max(d, 1 + depthBelow(child, limit - 1)); });
    return d;
  }

  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var half = size / 2, R = half - 6;
    svg.setAttribute("width", size); svg.setAttribute("height", size);
    svg.setAttribute("viewBox", (-half) + " " + (-half) + " " + size + " " + size);
    var defs = el("defs", {}, svg);
    var pattern = el("pattern", { id: "hatch-new", width: 6, height: 6, patternUnits: "userSpaceOnUse",
                                  patternTransform: "rotate(45)" }, defs);
    el("rect", { width: 6, height: 6, fill: "#bff0bf" }, pattern);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#2e9e3e", "stroke-width": 2.5 }, pattern);

    var rings = Math.max(1, depthBelow(zoom, MAX_RINGS));
    var r0 = Math.max(38, R * 0.15), ring = (R - r0) / rings;
    var arcs = el("g", {}, svg), labels = el("g", {}, svg);
    function layout(node, a0, a1, depth) {
      if (depth > 0) {
        var inner = r0 + (depth - 1) * ring, outer = inner + ring;
        var path = el("path", { d: arcPath(a0, a1, inner, outer), fill: colour(node) }, arcs);
        var s = status(node);
        if (s === "onlyB") { path.setAttribute("stroke", "#1f7a2e"); path.setAttribute("stroke-width", "1.2"); }
        if (s === "onlyA") { path.setAttribute("stroke", "#c0392b"); path.setAttribute("stroke-dasharray", "3,2");
                             path.setAttribute("stroke-width", "1"); }
        hookup(path, node);
        addLabel(labels, node, a0, a1, inner, outer);
      }
      if (depth >= rings || node.v <= 0) return;
      var a = a0, span = a1 - a0;
      node.c.forEach(function (child) {
        var w = span * child.v / node.v;
        if (w >= MIN_ANGLE) layout(child, a, a + w, depth + 1);
        a += w;
      });
    }
    layout(zoom, 0, TAU, 0);

    var centre = el("g", { "class": "centre" }, svg);
    var disc = el("circle", { r: r0 - 1, fill: zoom === root ? "#f7f7f7" : "#ececec", stroke: "#bbb",
                              cursor: zoom === root ? "default" : "pointer" }, centre);
    disc.addEventListener("click", function () { if (zoom.p) { zoom = zoom.p; update(); } });
    hookup(disc, zoom, true);
    var lines = [fit(label(zoom), Math.floor(2 * (r0 - 6) / 7)),
                 isDiff ? "" : (metric ? fmtNs(zoom.t) : fmtInt(zoom.i) + " insns"),
                 zoom === root ? "" : "click: up"];
    lines.filter(function (l) { return l; }).forEach(function (line, i, all) {
      var t = el("text", { x: 0, y: (i - (all.length - 1) / 2) * 15, "text-anchor": "middle",
                           "dominant-baseline": "central" }, centre);
      t.textContent = line;
    });
  }

  function pathOf(node) {
    var names = [];
    for (var n = node; n && n !== root; n = n.p) names.unshift(n.n || "[unknown]");
    return names;
  }
  function row(table, cells) {
    var tr = document.createElement("tr");
    cells.forEach(function (cell, i) {
      var td = document.createElement("td");
      td.textContent = cell;
      if (i > 0) td.className = "num";
      tr.appendChild(td);
    });
    table.appendChild(tr);
  }
  function fillTip(node) {
    tip.textContent = "";
    var name = document.createElement("div"); name.className = "name"; name.textContent = label(node);
    var path = document.createElement("div"); path.className = "path";
    path.textContent = pathOf(node).join(" \u2192 ") || "(the whole tree)";
    tip.appendChild(name); tip.appendChild(path);
    var table = document.createElement("table");
    if (!isDiff) {
      row(table, ["instructions", fmtInt(node.i), "self " + fmtInt(node.si)]);
      row(table, ["time", fmtNs(node.t), "self " + fmtNs(node.st)]);
      row(table, ["entries", fmtInt(node.e), ""]);
      row(table, ["share of all", pct(root.i ? node.i / root.i : 0), "time " + pct(root.t ? node.t / root.t : 0)]);
      if (node.p && node.p !== root)
        row(table, ["share of caller", pct(node.p.i ? node.i / node.p.i : 0), ""]);
      if (moduleOf(node)) row(table, ["code", moduleOf(node), ""]);
    } else {
      var s = status(node);
      row(table, ["", "A", "B"]);
      function cell(which, i, f) { return node[which] ? f(node[which][i]) : "\u2013"; }
      row(table, ["instructions", cell("a", 0, fmtInt), cell("b", 0, fmtInt)]);
      row(table, ["time", cell("a", 1, fmtNs), cell("b", 1, fmtNs)]);
      row(table, ["entries", cell("a", 2, fmtInt), cell("b", 2, fmtInt)]);
      row(table, ["share", node.a ? pct(shareA(node)) : "\u2013", node.b ? pct(shareB(node)) : "\u2013"]);
      row(table, ["change", { onlyA: "only in A", onlyB: "only in B", changed: "changed", same: "unchanged" }[s] || "",
                  node.a && node.b ? signedPct(shareB(node) - shareA(node)) : ""]);
    }
    tip.appendChild(table);
  }
  function hookup(shape, node, isCentre) {
    shape.addEventListener("mousemove", function (ev) {
      fillTip(node);
      tip.style.display = "block";
      var x = ev.clientX + 14, y = ev.clientY + 14;
      if (x + tip.offsetWidth > window.innerWidth - 4) x = ev.clientX - tip.offsetWidth - 14;
      if (y + tip.offsetHeight > window.innerHeight - 4) y = ev.clientY - tip.offsetHeight - 14;
      tip.style.left = Math.max(2, x) + "px"; tip.style.top = Math.max(2, y) + "px";
      if (!isCentre) shape.classList.add("hover");
      crumbs(node);
    });
    shape.addEventListener("mouseleave", function () {
      tip.style.display = "none";
      shape.classList.remove("hover");
      crumbs(null);
    });
    if (!isCentre) shape.addEventListener("click", function () {
      if (node.c.length) { zoom = node; update(); }
    });
  }

  function crumbs(hovered) {
    var box = $("crumbs");
    box.textContent = "";
    var chain = [];
    for (var n = zoom; n; n = n.p) chain.unshift(n);
    chain.forEach(function (node, i) {
      if (i) { var sep = document.createElement("span"); sep.className = "sep"; sep.textContent = "\u203a"; box.appendChild(sep); }
      var seg = document.createElement("span");
      seg.className = "seg";
      seg.textContent = node === root ? "whole tree" : label(node);
      seg.addEventListener("click", function () { zoom = node; update(); });
      box.appendChild(seg);
    });
    if (hovered && hovered !== zoom) {
      var rest = pathOf(hovered).slice(pathOf(zoom).length);
      var tail = document.createElement("span");
      tail.textContent = "  \u00bb " + rest.join(" \u203a ");
      box.appendChild(tail);
    }
  }

  function swatch(parent, fill, text, extra) {
    var rowEl = document.createElement("div"); rowEl.className = "row";
    var sw = document.createElementNS(SVGNS, "svg");
    sw.setAttribute("width", 16); sw.setAttribute("height", 16);
    var rect = el("rect", { x: 1, y: 1, width: 14, height: 14, fill: fill, stroke: (extra && extra.stroke) || "#999" }, sw);
    if (extra && extra.dash) rect.setAttribute("stroke-dasharray", "3,2");
    if (extra && extra.hatch) {
      for (var i = -14; i < 14; i += 5) el("line", { x1: 1 + i, y1: 15, x2: 15 + i, y2: 1, stroke: "#2e9e3e", "stroke-width": 2 }, sw);
      el("rect", { x: 1, y: 1, width: 14, height: 14, fill: "none", stroke: extra.stroke }, sw);
    }
    rowEl.appendChild(sw);
    var span = document.createElement("span"); span.textContent = text; rowEl.appendChild(span);
    parent.appendChild(rowEl);
  }
  function legend() {
    var box = $("legend");
    box.textContent = "";
    var h = document.createElement("h2"); box.appendChild(h);
    var metricName = metric ? "time" : "instructions";
    if (isDiff) {
      h.textContent = "A \u2192 B";
      var counts = { onlyA: 0, onlyB: 0, changed: 0, same: 0 };
      (function count(node) { if (node !== root) counts[status(node)]++; node.c.forEach(count); })(root);
      swatch(box, "#bff0bf", "only in B (" + counts.onlyB + " paths)", { hatch: true, stroke: "#1f7a2e" });
      swatch(box, "#f4f4f4", "only in A (" + counts.onlyA + " paths)", { stroke: "#c0392b", dash: true });
      swatch(box, "hsl(8,75%,50%)", "larger share in B (" + "\u2265 " + (100 * data.threshold).toFixed(1) + " points)");
      swatch(box, "hsl(212,70%,50%)", "smaller share in B");
      swatch(box, "#d9d9d9", "unchanged (" + counts.same + " paths)");
      var n1 = document.createElement("div"); n1.className = "note";
      n1.textContent = "Changed: " + counts.changed + " paths; the stronger the colour, the larger the change. " +
        "Angle: the larger of the path's two shares of " + metricName + ". A: " + data.a.input + ". B: " + data.b.input + ".";
      box.appendChild(n1);
    } else {
      h.textContent = "colours";
      var hasKernel = false, hasUser = false;
      (function scan(node) { var m = moduleOf(node); if (m === "kernel") hasKernel = true; else if (m) hasUser = true; node.c.forEach(scan); })(root);
      if (hasKernel) swatch(box, "hsl(20,70%,62%)", "kernel functions (warm hues)");
      if (hasUser) swatch(box, "hsl(215,65%,64%)", "user-space functions (cool hues)");
      if (!hasKernel && !hasUser) swatch(box, "hsl(120,55%,64%)", "one hue per function");
      var top = document.createElement("h2"); top.textContent = "largest below " + label(zoom); box.appendChild(top);
      zoom.c.slice().sort(function (x, y) { return y.v - x.v; }).slice(0, 10).forEach(function (child) {
        swatch(box, colour(child), label(child) + "  " + pct(zoom.v ? child.v / zoom.v : 0));
      });
    }
    var note = document.createElement("div"); note.className = "note";
    note.textContent = "Rings are call depths (the centre is the node shown whole), the angle of a slice is its share of " +
      metricName + ". Hover for numbers; click a slice to zoom into it, the centre to go up.";
    box.appendChild(note);
  }

  function fitSize() {
    var top = svg.getBoundingClientRect().top;
    var avail = Math.min(window.innerWidth - 380, window.innerHeight - top - 12);
    size = Math.max(360, Math.min(1000, Math.floor(avail)));
  }
  function update() { draw(); crumbs(null); legend(); }

  $("title").textContent = data.title;
  $("subtitle").textContent = data.subtitle || "";
  $("totals").textContent = isDiff
    ? "A: " + fmtInt(data.a.total_insns) + " instructions, " + fmtNs(data.a.total_ns) +
      "  \u00b7  B: " + fmtInt(data.b.total_insns) + " instructions, " + fmtNs(data.b.total_ns)
    : "total: " + fmtInt(data.total_insns) + " instructions, " + fmtNs(data.total_ns);
  document.querySelectorAll("input[name=metric]").forEach(function (input) {
    input.addEventListener("change", function () { setMetric(input.value === "ns" ? 1 : 0); maxDelta = 0; findMaxDelta(root); update(); });
  });
  $("reset").addEventListener("click", function () { zoom = root; update(); });
  window.addEventListener("resize", function () { fitSize(); draw(); });
  setMetric(metric);
  findMaxDelta(root);
  fitSize();
  update();
})();
)JS";

}  // namespace ptprof
