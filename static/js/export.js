// Figure export in the browser: every chart drawn by app.js gets SVG, PNG and PDF buttons. The
// exported figure is the chart as shown (its zoom, its colours) redrawn by plotly.js off screen in a
// paper style: white background, black axis lines, 14 px text, a fixed 960 px width (the height of
// the chart on the page, at least 480 px), no buttons. SVG and PNG come from Plotly.toImage; the PDF
// is one page holding the PNG at 3x, 2x when tall (lossless: the pixels deflated with CompressionStream), sized
// so that it prints at the figure's size in points (docs/architecture.md, "Figure export").
(function () {
  "use strict";

  const WIDTH = 960;
  const MIN_HEIGHT = 480;
  const PDF_PIXELS = 8e6; // the PDF's image at 3x up to this many pixels, else at 2x (time, size)
  const FONT = { family: "Helvetica, Arial, sans-serif", size: 14, color: "#000000" };

  // The layout of a drawn chart in the paper style (a copy: the page's chart is untouched).
  const paperLayout = function (div) {
    const layout = JSON.parse(JSON.stringify(div.layout || {}));
    layout.paper_bgcolor = "#ffffff";
    layout.plot_bgcolor = "#ffffff";
    layout.font = Object.assign({}, layout.font || {}, FONT);
    if (layout.title) {
      if (typeof layout.title === "string") layout.title = { text: layout.title };
      layout.title.font = Object.assign({}, layout.title.font || {}, { size: 16, color: "#000000" });
      Object.assign(layout.title, { x: 0.5, xanchor: "center", xref: "paper" }); // never clipped at the edge
    }
    Object.keys(layout).forEach(function (key) {
      if (!/^[xy]axis\d*$/.test(key)) return;
      Object.assign(layout[key], { showline: true, linecolor: "#000000", linewidth: 1, ticks: "outside",
        tickcolor: "#000000", gridcolor: "#e5e5e5", automargin: true });
    });
    delete layout.updatemenus; // the linear/log buttons
    delete layout.sliders;
    layout.width = WIDTH;
    layout.height = Math.max(MIN_HEIGHT, Math.round(layout.height || div.clientHeight || MIN_HEIGHT));
    layout.autosize = false;
    return layout;
  };

  const image = function (div, format, scale) {
    const layout = paperLayout(div);
    return window.Plotly.toImage({ data: div.data, layout: layout, config: { displayModeBar: false } },
      { format: format, width: WIDTH, height: layout.height, scale: scale });
  };

  const bytesOf = function (base64) {
    const text = window.atob(base64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  };

  const deflate = function (bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate")); // zlib: PDF's FlateDecode
    return new Response(stream).arrayBuffer().then(function (b) { return new Uint8Array(b); });
  };

  // A one-page PDF 1.4 showing an RGB image of w x h pixels at width x height points.
  const pdfOf = function (pixels, w, h, width, height) {
    const encoder = new TextEncoder();
    const parts = [];
    const offsets = [];
    let length = 0;
    const add = function (chunk) {
      const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
      parts.push(bytes);
      length += bytes.length;
    };
    const object = function (n, body, stream) {
      offsets[n] = length;
      add(n + " 0 obj\n" + body);
      if (stream) { add("\nstream\n"); add(stream); add("\nendstream"); }
      add("\nendobj\n");
    };
    const content = "q " + width + " 0 0 " + height + " 0 0 cm /Im0 Do Q";
    add("%PDF-1.4\n");
    add(new Uint8Array([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a])); // the comment that marks a binary file
    object(1, "<< /Type /Catalog /Pages 2 0 R >>");
    object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    object(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 " + width + " " + height + "] " +
      "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>");
    object(4, "<< /Type /XObject /Subtype /Image /Width " + w + " /Height " + h + " /ColorSpace /DeviceRGB " +
      "/BitsPerComponent 8 /Filter /FlateDecode /Length " + pixels.length + " >>", pixels);
    object(5, "<< /Length " + content.length + " >>", encoder.encode(content));
    const xref = length;
    let table = "xref\n0 6\n0000000000 65535 f \n";
    for (let n = 1; n <= 5; n++) table += String(offsets[n]).padStart(10, "0") + " 00000 n \n";
    add(table + "trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n" + xref + "\n%%EOF\n");
    return new Blob(parts, { type: "application/pdf" });
  };

  const pdf = function (div) {
    const height = paperLayout(div).height;
    const scale = WIDTH * height * 9 <= PDF_PIXELS ? 3 : 2; // a tall Gantt at 2x: 192 dpi
    return image(div, "png", scale).then(function (url) {
      return new Promise(function (resolve, reject) {
        const img = new Image();
        img.onload = function () { resolve(img); };
        img.onerror = reject;
        img.src = url;
      });
    }).then(function (img) {
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0);
      const rgba = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      const rgb = new Uint8Array((rgba.length / 4) * 3);
      for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
        rgb[j] = rgba[i]; rgb[j + 1] = rgba[i + 1]; rgb[j + 2] = rgba[i + 2];
      }
      return deflate(rgb).then(function (packed) {
        // CSS pixels to points (96 px = 72 pt = 1 inch): the page prints at the figure's size.
        return pdfOf(packed, canvas.width, canvas.height, WIDTH * 0.75, height * 0.75);
      });
    });
  };

  const blobOf = function (div, format) {
    if (format === "pdf") return pdf(div);
    return image(div, format, format === "png" ? 2 : 1).then(function (url) {
      const comma = url.indexOf(",");
      if (format === "svg") {
        return new Blob([decodeURIComponent(url.slice(comma + 1))], { type: "image/svg+xml" });
      }
      return new Blob([bytesOf(url.slice(comma + 1))], { type: "image/png" });
    });
  };

  const fileName = function (div, format) {
    const title = div.layout && div.layout.title ? (div.layout.title.text || div.layout.title) : "";
    const slug = String(title).toLowerCase().replace(/<[^>]*>/g, "").replace(/&[a-z]+;/g, "")
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60);
    return (div.dataset.exportName || slug || div.id || "figure") + "." + format;
  };

  const save = function (blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    window.setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  };

  // Buttons under a drawn chart; each export's time (ms) is kept on the chart (bench/dashboard_*.py).
  window.mlschedExport = function (div) {
    if (!window.Plotly || !window.Plotly.toImage || div.dataset.exportable) return;
    div.dataset.exportable = "true";
    const bar = document.createElement("p");
    bar.className = "chart-export meta";
    bar.appendChild(document.createTextNode("Export for a paper: "));
    ["svg", "png", "pdf"].forEach(function (format) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      button.dataset.export = format;
      button.textContent = format.toUpperCase();
      button.addEventListener("click", function () {
        const t0 = performance.now();
        button.disabled = true;
        blobOf(div, format).then(function (blob) {
          save(blob, fileName(div, format));
          div.dataset["exported" + format.charAt(0).toUpperCase() + format.slice(1)] = String(Math.round(performance.now() - t0));
        }).catch(function (err) {
          bar.appendChild(document.createTextNode(" (" + format.toUpperCase() + " export failed: " + err + ")"));
        }).finally(function () { button.disabled = false; });
      });
      bar.appendChild(document.createTextNode(" "));
      bar.appendChild(button);
    });
    div.insertAdjacentElement("afterend", bar);
  };
})();
