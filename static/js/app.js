// Small progressive enhancements; every page also works without JavaScript.
(function () {
  "use strict";

  // New-experiment form: show only the chosen input source and the chosen algorithms' parameters.
  const form = document.getElementById("experiment-form");
  if (form) {
    const sources = form.querySelectorAll("input[name=source]");
    const showSource = function () {
      const chosen = form.querySelector("input[name=source]:checked");
      form.querySelectorAll("fieldset.source").forEach(function (fs) {
        const active = !chosen || fs.dataset.source === chosen.value;
        fs.hidden = !active;
        fs.disabled = !active; // an unused file is not uploaded
      });
    };
    sources.forEach(function (r) { r.addEventListener("change", showSource); });
    showSource();

    form.querySelectorAll(".algorithm").forEach(function (box) {
      const checkbox = box.querySelector("input[name=algorithms]");
      const params = box.querySelector(".params");
      if (!checkbox || !params) return;
      const toggle = function () {
        params.hidden = !checkbox.checked;
        box.classList.toggle("selected", checkbox.checked);
      };
      checkbox.addEventListener("change", toggle);
      toggle();
    });
  }

  // Experiment page: poll the status endpoint until every run has finished, then reload.
  const runs = document.getElementById("runs");
  if (runs && runs.dataset.finished === "false") {
    const poll = function () {
      fetch(runs.dataset.statusUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (status) {
          status.runs.forEach(function (run) {
            const row = runs.querySelector('[data-run="' + run.id + '"]');
            if (!row) return;
            const badge = row.querySelector("[data-status]");
            badge.textContent = run.status;
            badge.className = "badge " + run.status;
            if (run.error) {
              const cell = row.querySelector("[data-error]");
              cell.innerHTML = "";
              const span = document.createElement("span");
              span.className = "error";
              span.textContent = run.error;
              cell.appendChild(span);
            }
          });
          if (status.finished) window.location.reload();
          else window.setTimeout(poll, 1000);
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, 500);
  }

  // Charts: each figure's JSON sits in a <script type="application/json"> beside its div.
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    const figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    if (!window.Plotly) {
      div.textContent = "plotly.js is missing: run `python manage.py vendor_plotly`.";
      div.className += " error";
      return;
    }
    window.Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
