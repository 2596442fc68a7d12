// Small progressive enhancements; every page also works without JavaScript.
(function () {
  "use strict";

  // Forms with radio-chosen sections: show only the chosen input source and experiment mode.
  const form = document.getElementById("experiment-form");
  const radioSections = function (name, selector, key) {
    if (!form) return;
    const show = function () {
      const chosen = form.querySelector("input[name=" + name + "]:checked");
      form.querySelectorAll(selector).forEach(function (fs) {
        const active = !chosen || fs.dataset[key] === chosen.value;
        fs.hidden = !active;
        fs.disabled = !active; // an unused file is not uploaded
      });
    };
    form.querySelectorAll("input[name=" + name + "]").forEach(function (r) { r.addEventListener("change", show); });
    show();
  };
  // Pre-flight: grey out the algorithms the chosen preset or library pair cannot run, with the
  // reason (known from a stored trace check or a small instance of the preset; uploads: at submit).
  const preflightData = document.getElementById("preflight-data");
  if (form && preflightData) {
    const pre = JSON.parse(preflightData.textContent);
    const value = function (name) { const el = form.querySelector("[name=" + name + "]"); return el ? el.value : ""; };
    const apply = function () {
      const source = form.querySelector("input[name=source]:checked");
      let reasons = {};
      if (source && source.value === "preset") reasons = pre.presets[value("preset")] || {};
      if (source && source.value === "library") reasons = pre.library[value("trace_dataset") + ":" + value("cluster_dataset")] || {};
      // "Run as the model of" (webapp/adapted.py): the cards the adapted model enables, with or without a history fraction.
      const adaptBox = document.getElementById("adapt-model");
      if (adaptBox) adaptBox.hidden = Boolean(source && source.value === "preset");
      const model = value("model");
      if (model && pre.models && pre.models[model] && !(source && source.value === "preset")) {
        reasons = pre.models[model][value("history_fraction").trim() ? "history" : "none"];
      }
      let any = false;
      form.querySelectorAll(".algorithm").forEach(function (box) {
        const why = reasons[box.dataset.algorithm];
        const checkbox = box.querySelector("input[name=algorithms]");
        const note = box.querySelector("[data-unsupported-reason]");
        box.classList.toggle("unsupported", Boolean(why));
        if (checkbox) {
          if (why && checkbox.checked) { checkbox.checked = false; checkbox.dispatchEvent(new Event("change")); }
          checkbox.disabled = Boolean(why);
        }
        if (note) { note.hidden = !why; note.textContent = why || ""; }
        any = any || Boolean(why);
      });
      document.getElementById("preflight-note").hidden = !any;
      const pair = value("trace_dataset") + ":" + value("cluster_dataset");
      const load = source && source.value === "library" ? (pre.loads || {})[pair] : null;
      const loadNote = document.getElementById("preflight-load");
      loadNote.hidden = !load;
      loadNote.className = load && load.warning ? "warning" : "meta";
      loadNote.textContent = load ? "Offered load " + load.load.toFixed(3) + " (GPU-time asked / GPU-time offered over the trace's span). " + load.warning : "";
    };
    form.querySelectorAll("input[name=source], [name=preset], [name=trace_dataset], [name=cluster_dataset], [name=model], [name=history_fraction]").forEach(function (el) {
      el.addEventListener("change", apply);
      el.addEventListener("input", apply);
    });
    apply();
  }

  // Before submit: an uploaded or library trace without a history leaves the fitted predictors of
  // the chosen learners (A-SRPT and its baselines) nothing to learn from: every prediction is 0.
  // The same rule as the experiment page's note afterwards (webapp.services.history_notes).
  const learnersData = document.getElementById("history-learners");
  if (form && learnersData) {
    const learning = JSON.parse(learnersData.textContent);
    const warning = document.getElementById("history-warning");
    const field = function (name) { return form.querySelector("[name='" + name + "']"); };
    const fitted = function (predictor) { return learning.fitted.indexOf(predictor) >= 0; };
    const warn = function () {
      const source = form.querySelector("input[name=source]:checked");
      const historyFile = field("history_file");
      const historyDataset = field("history_dataset");
      let given = true; // a preset gives its own history
      if (source && source.value === "upload") given = Boolean(historyFile && historyFile.files && historyFile.files.length);
      if (source && source.value === "library") given = Boolean(historyDataset && historyDataset.value);
      const fraction = field("history_fraction");
      if (field("model") && field("model").value && fraction && fraction.value.trim()) given = true;
      const alone = [];
      const add = function (name) { if (alone.indexOf(name) < 0) alone.push(name); };
      Object.keys(learning.learners).forEach(function (name) {
        const box = form.querySelector("input[name=algorithms][value='" + name + "']");
        const predictor = field(learning.learners[name].field);
        if (box && box.checked && fitted(predictor ? predictor.value : learning.learners[name].default)) add(name);
      });
      const extra = field("extra_runs");
      (extra ? extra.value : "").split("\n").forEach(function (line) {
        const words = line.trim().split(/\s+/);
        if (!Object.prototype.hasOwnProperty.call(learning.learners, words[0])) return;
        const learner = learning.learners[words[0]];
        const named = words.slice(1).filter(function (w) { return w.indexOf("predictor=") === 0; });
        if (fitted(named.length ? named[0].slice("predictor=".length) : learner.default)) add(words[0]);
      });
      const show = !given && alone.length > 0;
      warning.hidden = !show;
      warning.textContent = show
        ? alone.join(", ") + ": no history of past jobs is given with this trace, so asrpt refuses to run (unless " +
          "no_history=zero) and the fitted predictor of its baselines will predict 0 iterations for every job. Add a history " +
          (source.value === "upload" ? "file" : "trace from the library") + " above (past jobs of the same cluster), " +
          "or a history fraction with a model."
        : "";
    };
    form.addEventListener("change", warn);
    form.addEventListener("input", warn);
    warn();
  }

  if (form) {
    radioSections("source", "fieldset.source", "source");
    radioSections("mode", "fieldset.mode", "mode");
    radioSections("repeat", "fieldset.repeat", "repeat");
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

  // Dataset page: poll a trace's background check, move its bar, reload when it has ended.
  const check = document.getElementById("trace-check");
  if (check) {
    const pollCheck = function () {
      fetch(check.dataset.statusUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (status) {
          if (status.status === "done" || status.status === "failed") {
            window.location.reload();
            return;
          }
          check.querySelector("[data-progress]").value = status.progress;
          check.querySelector("[data-phase]").textContent = status.phase || "waiting for a worker";
          window.setTimeout(pollCheck, 1000);
        })
        .catch(function () { window.setTimeout(pollCheck, 3000); });
    };
    window.setTimeout(pollCheck, 500);
  }

  // Experiment page: poll the status endpoint until every run has finished, then reload. A run that
  // finishes before the others loses its Cancel button and shows its result links at once.
  const runs = document.getElementById("runs");
  const FINISHED = ["done", "failed", "cancelled"];
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
            const bar = row.querySelector("[data-progress]");
            if (bar) bar.value = run.progress;
            const left = row.querySelector("[data-left]");
            if (left) left.textContent = run.time_left || ""; // estimated as the CLI's bar does (webapp/timeleft.py)
            const place = row.querySelector("[data-queue]");
            if (place) place.textContent = run.queue_position ? "#" + run.queue_position + " in the queue" : "";
            const cancel = row.querySelector("form[data-cancel]");
            if (cancel && FINISHED.indexOf(run.status) >= 0) cancel.remove();
            const links = row.querySelector("[data-links]");
            if (links) links.hidden = run.status !== "done";
            const cell = row.querySelector("[data-error]");
            if (run.error && cell.textContent.indexOf(run.error) < 0) {
              cell.textContent = "";
              const span = document.createElement("span");
              span.className = "error";
              span.textContent = run.error; // text, never HTML
              cell.appendChild(span);
            }
          });
          const note = document.getElementById("broker-note");
          if (note) note.hidden = !status.waiting_for_broker;
          // The tab was drawn before any run was done: say that some are now, and offer them.
          const empty = document.getElementById("no-results");
          const done = status.runs.filter(function (r) { return r.status === "done"; }).length;
          if (empty && done > 0 && !status.finished) {
            empty.textContent = done + " of " + status.runs.length + " runs done: ";
            const again = document.createElement("a");
            again.href = window.location.href;
            again.textContent = "show their results";
            empty.appendChild(again);
            empty.appendChild(document.createTextNode(" (the page reloads by itself when every run is done)."));
          }
          if (status.finished) window.location.reload();
          else window.setTimeout(poll, 1000);
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, 500);
  }

  // Share links open on the view shown: each link box follows this page's query string (tab, run,
  // filters, Gantt window, price decision), both on load and whenever a chart rewrites the address
  // with history.replaceState (zoom, slider). Without JavaScript the box holds the bare link.
  // The share forms post the view too, so that the page they come back to (with the new link)
  // is the same view.
  const shareBoxes = document.querySelectorAll("input.share-url");
  const shareViews = document.querySelectorAll("input.share-view");
  if (shareBoxes.length || shareViews.length) {
    shareBoxes.forEach(function (box) { box.dataset.base = box.value.split("?")[0]; });
    const follow = function () {
      shareBoxes.forEach(function (box) { box.value = box.dataset.base + window.location.search; });
      shareViews.forEach(function (input) { input.value = window.location.search.replace(/^\?/, ""); });
    };
    const replaceState = window.history.replaceState.bind(window.history);
    window.history.replaceState = function (state, title, url) {
      replaceState(state, title, url);
      follow();
    };
    follow();
  }

  // Forms that destroy something ask first.
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (ev) { if (!window.confirm(f.dataset.confirm)) ev.preventDefault(); });
  });

  // Sortable tables: click a header; cells carry data-sort (numbers sort as numbers, blanks last).
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th[data-sort-col]").forEach(function (th) {
      th.addEventListener("click", function () {
        const col = Number(th.dataset.sortCol);
        const asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th[data-sort-col]").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.prototype.slice.call(body.rows);
        const key = function (row) { return row.cells[col].dataset.sort || ""; };
        rows.sort(function (a, b) {
          const x = key(a), y = key(b);
          if (x === "" || y === "") return (x === "") - (y === "");
          const nx = Number(x), ny = Number(y);
          const c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Charts: each figure's JSON sits in a <script type="application/json"> beside its div. The charts
  // in the window are drawn at once, the others one at a time after the page has been painted
  // (a chart of 5,000 markers takes a few hundred ms to draw): the page is usable meanwhile.
  if (window.performance && performance.mark) performance.mark("charts-start"); // after plotly.js ran
  const config = { responsive: true, displaylogo: false, toImageButtonOptions: { format: "png", scale: 2 } };
  const chartDivs = Array.prototype.slice.call(document.querySelectorAll("[data-figure]"));
  const inView = function (div) { return div.getBoundingClientRect().top < window.innerHeight; };
  const later = chartDivs.filter(function (div) { return !inView(div); });
  const drawChart = function (div) {
    const figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    if (!window.Plotly) {
      div.textContent = "plotly.js is missing: run `python manage.py vendor_plotly`.";
      div.className += " error";
      return;
    }
    window.Plotly.newPlot(div, figure.data, figure.layout, config).then(function () {
      div.dataset.ready = "true"; // time-to-interactive marker (bench/dashboard_gantt.py)
      if (window.mlschedExport) window.mlschedExport(div); // SVG/PNG/PDF buttons (export.js)
    });
    if (div.classList.contains("gantt")) {
      // Keep the zoomed window in the address, so that reloading or sharing shows the same view.
      div.on("plotly_relayout", function (ev) {
        const url = new URL(window.location.href);
        if (ev["xaxis.range[0]"] !== undefined) {
          url.searchParams.set("t0", Math.max(0, Math.floor(ev["xaxis.range[0]"])));
          url.searchParams.set("t1", Math.ceil(ev["xaxis.range[1]"]));
        } else if (ev["xaxis.autorange"]) {
          url.searchParams.delete("t0");
          url.searchParams.delete("t1");
        } else return;
        window.history.replaceState(null, "", url);
      });
    }
  };
  chartDivs.filter(inView).forEach(drawChart);
  const drawNext = function () {
    if (!later.length) return;
    drawChart(later.shift());
    window.setTimeout(function () { window.requestAnimationFrame(drawNext); }, 0);
  };
  window.requestAnimationFrame(function () { window.setTimeout(drawNext, 0); }); // after the first paint

  // Prices: the server x slot matrix at the decision chosen with the slider, rebuilt from the
  // recorded changes (schema mlsched.prices/3: each decision lists [resource, server, slot, n, value],
  // the n slots from slot set to value, and a rebase resets the slots from the decision's on; in
  // mlsched.prices/2 a rebase resets every slot; mlsched.prices/1, older still, lists single entries
  // [resource, server, slot, value]; scheduling/prices.py).
  const priceData = document.getElementById("prices-data");
  if (priceData && window.Plotly) {
    const prices = JSON.parse(priceData.textContent);
    const slider = document.getElementById("price-decision");
    const resourceSel = document.getElementById("price-resource");
    const label = document.getElementById("price-decision-label");
    const target = document.getElementById("price-matrix");
    const logBox = document.getElementById("price-log");
    // Each server's price before any decision: initial, or its pool's in initial_by_pool (OASiS).
    const single = prices.schema === "mlsched.prices/1";
    const valueAt = single ? 3 : 4;
    const byPool = prices.initial_by_pool || {};
    const start = prices.servers.map(function (_, h) {
      const pool = prices.pools ? prices.pools[h] : null;
      return Number(pool !== null && pool in byPool ? byPool[pool] : prices.initial || 0);
    });
    // One colour scale per resource for every decision (0 to the highest price it ever reaches),
    // so that moving the slider shows prices rise; 1 when they all stay 0.
    const top = prices.resources.map(function (_, r) {
      let high = start.reduce(function (a, b) { return Math.max(a, b); }, 0);
      prices.decisions.forEach(function (d) {
        Object.values(d.rebase || {}).forEach(function (v) { high = Math.max(high, Number(v)); });
        d.changes.forEach(function (c) { if (c[0] === r && c[valueAt] > high) high = c[valueAt]; });
      });
      return high > 0 ? high : 1;
    });
    // Plotly reads text as an HTML subset: server ids from an uploaded cluster spec are escaped
    // (as webapp/charts/safe.py does for the server-built figures).
    const plotlyText = function (v) {
      return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    };
    const serverNames = prices.servers.map(plotlyText);
    const priceName = plotlyText(prices.label || "price");
    const draw = function () {
      const k = Number(slider.value), r = Number(resourceSel.value);
      const z = start.map(function (p0) { return new Array(prices.slots).fill(p0); });
      for (let i = 0; i <= k && i < prices.decisions.length; i++) {
        // A rebase (oasis bounds=arrived: L, U moved) resets its pools' servers before the changes:
        // from the decision's slot on (past slots keep their prices), or every slot before /3.
        const rebase = prices.decisions[i].rebase;
        if (rebase && prices.pools) {
          const from = prices.schema === "mlsched.prices/3"
            ? Math.min(Math.max(prices.decisions[i].t - prices.slot0, 0), prices.slots) : 0;
          prices.pools.forEach(function (pool, h) { if (pool in rebase) z[h].fill(Number(rebase[pool]), from); });
        }
        prices.decisions[i].changes.forEach(function (c) {
          if (c[0] !== r) return;
          if (single) z[c[1]][c[2]] = c[3];
          else z[c[1]].fill(c[4], c[2], c[2] + c[3]);
        });
      }
      const d = prices.decisions[k] || {};
      label.textContent = "#" + k + " at slot " + d.t + ": job " + d.job + (d.admitted ? " admitted" : " " + (prices.declined || "rejected"));
      const x = []; for (let s = 0; s < prices.slots; s++) x.push(prices.slot0 + s);
      // YlOrRd reversed: price 0 pale, the highest dark red. On the log scale (prices that grow
      // exponentially with use, as Zhou's do, look binary on a linear one) colours follow log10 of
      // the price from a thousandth of the highest; 0 stays pale.
      const log = logBox && logBox.checked;
      const floor = top[r] / 1000;
      const shown = log ? z.map(function (row) { return row.map(function (p) { return Math.log10(Math.max(p, floor)); }); }) : z;
      window.Plotly.react(target, [{ type: "heatmap", z: shown, customdata: z, x: x, y: serverNames, colorscale: "YlOrRd",
        reversescale: true, zmin: log ? Math.log10(floor) : 0, zmax: log ? Math.log10(top[r]) : top[r],
        colorbar: { title: { text: log ? "log10 " + priceName : priceName } },
        hovertemplate: "%{y}, slot %{x}: %{customdata}<extra></extra>" }],
        { height: Math.min(900, 160 + 18 * prices.servers.length), margin: { l: 20, r: 20, t: 20, b: 40 },
          xaxis: { title: { text: "slot" } }, yaxis: { title: { text: "server" }, autorange: "reversed", automargin: true } }, config).then(function () {
        target.dataset.decision = String(k);
        if (window.mlschedExport) window.mlschedExport(target);
      });
      const url = new URL(window.location.href);
      url.searchParams.set("decision", k);
      url.searchParams.set("resource", prices.resources[r]);
      if (log) url.searchParams.set("log", "1"); else url.searchParams.delete("log");
      window.history.replaceState(null, "", url);
    };
    slider.addEventListener("input", draw);
    resourceSel.addEventListener("change", draw);
    if (logBox) logBox.addEventListener("change", draw);
    draw();
  }
})();
