// For the browser test: with #course-check in the address, the page
// writes into the DOM which code blocks and tables overflow their box
// (content cut off or hidden behind a scroll bar), its full height and
// where each section begins.
// Long tables, code and output, and the rest of each section after its
// first paragraph, fold on a narrow screen (site/transforms.py).
var FOLD_BELOW_PX = 700;
document.addEventListener("DOMContentLoaded", function () {
  if (window.innerWidth >= FOLD_BELOW_PX) return;
  document.querySelectorAll("details.fold, details.more").forEach(function (d) { d.open = false; });
});
window.addEventListener("load", function () {
  if (location.hash !== "#course-check") return;
  var cut = [];
  document.querySelectorAll(".md-content pre, .md-content table, .md-content img").forEach(function (el, i) {
    // cut off: wider than its box without a box that scrolls it, or past the page's edge
    var box = el.closest(".md-typeset__scrollwrap, p.chart") || el.parentElement;
    var scrolls = /auto|scroll/.test(getComputedStyle(box).overflowX) || /auto|scroll/.test(getComputedStyle(el).overflowX)
                  || (el.firstElementChild && /auto|scroll/.test(getComputedStyle(el.firstElementChild).overflowX));
    var overflows = el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > box.getBoundingClientRect().right + 1;
    if ((overflows && !scrolls) || box.getBoundingClientRect().right > document.documentElement.clientWidth + 1) {
      cut.push(el.tagName.toLowerCase() + " " + i + ": " + (el.textContent || el.getAttribute("src") || "").slice(0, 60));
    }
  });
  var charts = [];
  document.querySelectorAll(".md-content img").forEach(function (img) {
    if (/\.svg$/.test(img.getAttribute("src") || "")) {
      charts.push({src: img.getAttribute("src"), shown: img.getBoundingClientRect().width});
    }
  });
  // where each section starts, so a page too tall names its tallest sections
  var sections = [];
  document.querySelectorAll(".md-content h2, .md-content h3").forEach(function (h) {
    sections.push({title: h.textContent.replace(/\u00b6$/, "").trim(), top: h.getBoundingClientRect().top + window.scrollY});
  });
  var out = document.createElement("pre");
  out.id = "course-check";
  out.textContent = JSON.stringify({cut: cut, charts: charts, sections: sections,
                                    height: document.documentElement.scrollHeight,
                                    width: document.documentElement.scrollWidth});
  if (window.parent !== window) window.parent.postMessage(out.textContent, "*");  // the test's narrow frame
  document.body.appendChild(out);
});
