// Interactivity for the seedfall report: zoom, a detail panel for the bar
// or mark under the pointer, legend toggles and a copy button. The page
// reads fully without it; data-rendered on <body> says it ran.
(function () {
  "use strict";
  var runs = document.querySelectorAll("section.run");
  runs.forEach(function (run) {
    var plot = run.querySelector(".plot");
    var zoom = run.querySelector("select.zoom");
    var detail = run.querySelector(".detail");
    run.querySelector(".controls").hidden = false;
    zoom.addEventListener("change", function () {
      plot.style.width = 100 * Number(zoom.value) + "%";
    });
    run.querySelectorAll(".legend .key").forEach(function (key) {
      key.addEventListener("click", function () {
        key.classList.toggle("off", run.classList.toggle("hide-" + key.getAttribute("data-cat")));
      });
    });
    function show(el) {
      var title = el.querySelector("title");
      if (!title) {
        return;
      }
      detail.textContent = title.textContent;
      detail.hidden = false;
      run.querySelectorAll(".faults li.hit").forEach(function (li) {
        li.classList.remove("hit");
      });
      var n = el.getAttribute("data-fault");
      var li = n && run.querySelector('.faults li[data-n="' + n + '"]');
      if (li) {
        li.classList.add("hit");
      }
    }
    run.querySelectorAll(".lane .bar, .lane .mark").forEach(function (el) {
      el.addEventListener("mouseenter", function () { show(el); });
      el.addEventListener("click", function () { show(el); });
    });
    var copy = run.querySelector("button.copy");
    if (navigator.clipboard) {
      copy.hidden = false;
      copy.addEventListener("click", function () {
        navigator.clipboard.writeText(run.querySelector(".replay code").textContent).then(function () {
          copy.textContent = "copied";
        });
      });
    }
  });
  document.body.setAttribute("data-rendered", String(runs.length));
})();
