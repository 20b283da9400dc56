// The momenta explorer: one array drawn from `momenta serve`'s JSON API.
//
// A view is a half-open index range [lo, hi). Each view costs one request:
// /overview with one bin per pixel column of the plot (min, max, mean, first,
// last), or /values when the view holds no more elements than columns (the
// deepest zoom: the elements themselves). A request still in flight when the
// view moves on is aborted. Wide bins are drawn as the min/max envelope and the
// mean; bins of a few elements as M4 lines (Jugel et al., VLDB 2014: each
// column's min-max stroke joined last-to-first, exact at one pixel per bin).
// The readout gives the view's count, mean, std, min and max (/stats) and the
// sum's interval shrinking while it is read (/progressive). Live mode polls
// /log and redraws when the array changed.
//
// The x axis is the element index, or the time when the server was given the
// array's rate and start (element i at start + i / rate: timeaxis.js).
//
// window.explorerState exposes what is drawn and asked, for tests and the
// curious: `view`, `drawn` (the bins or values drawn, with their pixel
// columns), `requests` (the latest API requests: kind, url, range, bins, aborted, status), `readout`,
// `progressive` (the interval lines as they came), `errors`, `axis` (the x axis
// drawn: kind "index" or "time", and its ticks: label, x pixel, value).
"use strict";

(() => {
  const STATS = ["min", "max", "mean", "first", "last"];
  const M4_MAX_ELEMENTS_PER_BIN = 64;  // narrower bins are drawn as M4 lines
  const MARGIN = { left: 64, right: 8, top: 8, bottom: 28 };
  const LIVE_POLL_MS = 1000;
  const READOUT_DELAY_MS = 120;
  const MAX_REQUESTS_KEPT = 2000;  // explorerState.requests keeps the latest (live mode runs for hours)

  const $ = (id) => document.getElementById(id);
  const canvas = $("plot");
  const ctx = canvas.getContext("2d");
  const token = new URLSearchParams(location.search).get("token");

  const state = {
    arrays: [],
    array: null,        // {name, length, dtype, ...} from /api/arrays
    view: null,         // {lo, hi}
    drawn: null,        // what the canvas shows: {kind, range, bins|values, yRange, plot}
    requests: [],       // {kind, url, range, bins, aborted}
    readout: null,      // the /stats answer of the view
    progressive: [],    // the /progressive lines of the view
    live: false,
    logSince: null,     // the next /log poll's since (ms)
    updatesSeen: 0,
    errors: [],
    pending: 0,         // requests in flight (tests wait for 0)
    axis: null,         // the x axis drawn: {kind: "index"|"time", ticks: [{label, x, value}]}
  };
  window.explorerState = state;

  // ---- numbers -----------------------------------------------------------------

  // A JSON answer's number: numbers as they are; "NaN", "Infinity", "-Infinity" as those.
  function num(v) {
    if (typeof v === "number") return v;
    if (v === "Infinity") return Infinity;
    if (v === "-Infinity") return -Infinity;
    return NaN;
  }

  function formatValue(v) {
    if (!Number.isFinite(v)) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(4);
    return Number(v.toPrecision(6)).toString();
  }

  function formatIndex(i) {
    return Math.round(i).toLocaleString("en-US");
  }

  // Whether the array has a time axis (the server's --rate and --start).
  function timed(a) { return a && Number.isFinite(a.rate) && a.rate > 0 && Number.isFinite(a.start); }

  // The time of (fractional) element i of a timed array, in seconds since the epoch.
  function timeOf(a, i) { return a.start + i / a.rate; }

  // About `count` x ticks over the view [lo, hi): {at (element), value, label}.
  function xTicks(lo, hi, count) {
    const a = state.array;
    if (!timed(a)) return ticks(lo, hi, count, true).map((t) => ({ at: t, value: t, label: formatIndex(t) }));
    const T = window.momentaTime;
    const times = T.ticks(timeOf(a, lo), timeOf(a, hi), count);
    return times.map((t) => ({ at: (t - a.start) * a.rate, value: t, label: T.format(t, times.step) }));
  }

  // The view's span as the readout shows it: indices, and times when the array has them.
  function spanText(v) {
    const a = state.array;
    let text = "[" + formatIndex(v.lo) + ", " + formatIndex(v.hi) + ") of " + formatIndex(a.length);
    if (timed(a)) {
      const T = window.momentaTime;
      text += " \u00b7 " + T.instant(timeOf(a, v.lo)) + " \u2013 " + T.instant(timeOf(a, v.hi));
    }
    return text;
  }

  // About `count` round steps covering [a, b].
  function ticks(a, b, count, integer) {
    const span = b - a;
    if (!(span > 0) || !Number.isFinite(span)) return [a];
    let step = Math.pow(10, Math.floor(Math.log10(span / count)));
    for (const m of [1, 2, 5, 10]) {
      if (span / (step * m) <= count) { step *= m; break; }
    }
    if (integer) step = Math.max(1, Math.round(step));
    const out = [];
    for (let k = Math.ceil(a / step); k * step <= b + step * 1e-9; k++) out.push(k * step);
    out.step = step;
    return out;
  }

  // A value tick: as many decimals as its step needs (0.1 + 0.2 prints 0.3, zero 0).
  function formatTick(t, step) {
    const decimals = Math.max(0, -Math.floor(Math.log10(step)));
    if (Math.abs(t) >= 1e7 || decimals > 6) return formatValue(t);
    return (Math.abs(t) < step * 1e-6 ? 0 : t).toFixed(decimals);
  }

  // ---- requests ----------------------------------------------------------------

  let resizeTimer = null;  // a redraw after the window's size settles
  const inFlight = {};  // kind -> AbortController of its request in flight

  function apiUrl(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of params || []) q.append(k, v);
    const s = q.toString();
    return "/api/arrays" + path + (s ? "?" + s : "");
  }

  // Fetches `url` as `kind`, aborting that kind's request in flight. Resolves to
  // the Response, or null when aborted.
  async function request(kind, url, extra) {
    if (inFlight[kind]) inFlight[kind].abort();
    const controller = new AbortController();
    inFlight[kind] = controller;
    const record = Object.assign({ kind, url, aborted: false, status: null }, extra || {});
    state.requests.push(record);
    if (state.requests.length > MAX_REQUESTS_KEPT) state.requests.splice(0, state.requests.length - MAX_REQUESTS_KEPT);
    state.pending++;
    controller.signal.addEventListener("abort", () => { record.aborted = true; });
    try {
      const headers = token ? { Authorization: "Bearer " + token } : {};
      const response = await fetch(url, { signal: controller.signal, headers });
      record.status = response.status;
      if (!response.ok) {
        let message = response.status + " " + response.statusText;
        try { message = (await response.json()).error || message; } catch (e) { /* not JSON */ }
        throw new Error(message);
      }
      return response;
    } catch (e) {
      if (e.name === "AbortError") return null;
      throw e;
    } finally {
      state.pending--;
      if (inFlight[kind] === controller) delete inFlight[kind];
    }
  }

  async function requestJson(kind, url, extra) {
    const response = await request(kind, url, extra);
    if (!response) return null;
    state.pending++;
    try { return await response.json(); } catch (e) { if (e.name === "AbortError") return null; throw e; }
    finally { state.pending--; }
  }

  function showStatus(text, error) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("error", !!error);
    if (error) state.errors.push(text);
  }

  function fail(e) {
    if (e && e.name === "AbortError") return;
    showStatus(String(e.message || e), true);
  }

  // ---- the plot's geometry -------------------------------------------------------

  // The plot area in CSS pixels; the canvas backing store sized to the device.
  function layout() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.floor(canvas.clientWidth));
    const h = Math.max(1, Math.floor(canvas.clientHeight));
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { width: w, height: h, x0: MARGIN.left, y0: MARGIN.top,
             w: Math.max(1, w - MARGIN.left - MARGIN.right), h: Math.max(1, h - MARGIN.top - MARGIN.bottom) };
  }

  // One bin per pixel column of the plot area.
  function columns() { return layout().w; }

  // ---- views ---------------------------------------------------------------------

  // The view [lo, hi) kept inside the array and at least one element wide.
  function clampView(lo, hi) {
    const n = state.array.length;
    let span = Math.max(1, Math.min(n, Math.round(hi - lo)));
    lo = Math.round(lo);
    lo = Math.max(0, Math.min(lo, n - span));
    return { lo, hi: lo + span };
  }

  function setView(lo, hi) {
    const v = clampView(lo, hi);
    if (state.view && v.lo === state.view.lo && v.hi === state.view.hi) return;
    state.view = v;
    $("span").textContent = spanText(v);
    loadView();
    scheduleReadout();
  }

  function pan(fraction) {
    const v = state.view;
    const shift = Math.round((v.hi - v.lo) * fraction) || Math.sign(fraction);
    setView(v.lo + shift, v.hi + shift);
  }

  // Zooms by `factor` (< 1 in) about the index `at` (default: the view's center).
  function zoom(factor, at) {
    const v = state.view;
    const span = v.hi - v.lo;
    const center = at === undefined ? (v.lo + v.hi) / 2 : at;
    let newSpan = Math.max(1, Math.round(span * factor));
    if (newSpan === span) newSpan = factor < 1 ? Math.max(1, span - 1) : span + 1;  // always a step
    const lo = Math.round(center - (center - v.lo) * (newSpan / span));
    setView(lo, lo + newSpan);
  }

  // The index under CSS x (inside the plot area or clamped to it).
  function indexAt(x) {
    const g = layout();
    const v = state.view;
    const f = Math.max(0, Math.min(1, (x - g.x0) / g.w));
    return v.lo + f * (v.hi - v.lo);
  }

  // ---- loading -------------------------------------------------------------------

  async function loadView() {
    const { lo, hi } = state.view;
    const name = encodeURIComponent(state.array.name);
    const cols = columns();
    try {
      if (hi - lo <= cols) {
        const url = apiUrl("/" + name + "/values", [["range", lo + ":" + hi]]);
        const answer = await requestJson("view", url, { range: [lo, hi], bins: null });
        if (!answer) return;
        const values = answer.values.map(num);
        state.drawn = { kind: "values", range: [lo, hi], values };
      } else {
        const params = [["range", lo + ":" + hi], ["bins", String(cols)]];
        for (const s of STATS) params.push(["stat", s]);
        const url = apiUrl("/" + name + "/overview", params);
        const answer = await requestJson("view", url, { range: [lo, hi], bins: cols });
        if (!answer) return;
        const bins = answer.bins.map((b) => {
          const out = { range: b.range };
          for (const s of STATS) out[s] = num(b.stats[s]);
          return out;
        });
        state.drawn = { kind: (hi - lo) / cols <= M4_MAX_ELEMENTS_PER_BIN ? "m4" : "envelope", range: [lo, hi], bins };
      }
      showStatus(state.array.name + ": " + state.array.dtype + ", " + formatIndex(state.array.length) + " elements");
      draw();
    } catch (e) { fail(e); }
  }

  // ---- drawing -------------------------------------------------------------------

  function yRangeOf(drawn) {
    let lo = Infinity, hi = -Infinity;
    const see = (v) => { if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } };
    if (drawn.kind === "values") drawn.values.forEach(see);
    else for (const b of drawn.bins) { see(b.min); see(b.max); }
    if (lo === Infinity) return [0, 1];
    if (lo === hi) return [lo - 1, hi + 1];
    const pad = (hi - lo) * 0.04;
    return [lo - pad, hi + pad];
  }

  function draw() {
    const g = layout();
    const d = state.drawn;
    ctx.clearRect(0, 0, g.width, g.height);
    if (!d) return;
    const [ymin, ymax] = yRangeOf(d);
    const y = (v) => g.y0 + g.h - ((v - ymin) / (ymax - ymin)) * g.h;
    const [lo, hi] = d.range;
    const x = (i) => g.x0 + ((i - lo) / (hi - lo)) * g.w;
    d.yRange = [ymin, ymax];
    d.plot = { x0: g.x0, y0: g.y0, w: g.w, h: g.h };
    drawAxes(g, lo, hi, ymin, ymax, x, y);
    ctx.save();
    ctx.beginPath();
    ctx.rect(g.x0, g.y0, g.w, g.h);
    ctx.clip();
    if (d.kind === "values") drawValues(d, x, y);
    else if (d.kind === "m4") drawM4(d, g, y);
    else drawEnvelope(d, g, y);
    ctx.restore();
  }

  function drawAxes(g, lo, hi, ymin, ymax, x, y) {
    ctx.strokeStyle = "#dde1e8";
    ctx.fillStyle = "#5b6474";
    ctx.lineWidth = 1;
    ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const yTicks = ticks(ymin, ymax, Math.max(2, Math.floor(g.h / 40)), false);
    for (const t of yTicks) {
      const py = Math.round(y(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(g.x0, py); ctx.lineTo(g.x0 + g.w, py); ctx.stroke();
      ctx.fillText(formatTick(t, yTicks.step), g.x0 - 4, py);
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const drawnTicks = [];
    for (const t of xTicks(lo, hi, Math.max(2, Math.floor(g.w / 110)))) {
      const px = Math.round(x(t.at)) + 0.5;
      drawnTicks.push({ label: t.label, x: x(t.at), value: t.value });
      ctx.beginPath(); ctx.moveTo(px, g.y0); ctx.lineTo(px, g.y0 + g.h); ctx.stroke();
      const label = t.label;
      const half = ctx.measureText(label).width / 2;  // kept inside the canvas
      ctx.fillText(label, Math.min(Math.max(px, half + 2), g.width - half - 2), g.y0 + g.h + 6);
    }
    state.axis = { kind: timed(state.array) ? "time" : "index", ticks: drawnTicks };
    ctx.strokeStyle = "#8a93a3";
    ctx.strokeRect(g.x0 + 0.5, g.y0 + 0.5, g.w - 1, g.h - 1);
  }

  // Bin k fills pixel column k of the plot area.
  function binColumn(d, g, k) { return g.x0 + k + 0.5; }

  function drawEnvelope(d, g, y) {
    ctx.fillStyle = "rgba(40, 97, 201, 0.28)";
    ctx.strokeStyle = "rgba(40, 97, 201, 0.45)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    d.bins.forEach((b, k) => {
      b.x = binColumn(d, g, k);
      if (!Number.isFinite(b.min) || !Number.isFinite(b.max)) return;
      b.yMin = y(b.min);
      b.yMax = y(b.max);
      ctx.moveTo(b.x, b.yMin + 0.5);
      ctx.lineTo(b.x, b.yMax - 0.5);
    });
    ctx.stroke();
    ctx.strokeStyle = "#2861c9";
    ctx.lineWidth = 1.5;
    strokeSeries(d.bins.map((b) => [b.x, b.mean]), y);
  }

  function drawM4(d, g, y) {
    ctx.strokeStyle = "#2861c9";
    ctx.lineWidth = 1;
    ctx.beginPath();
    let prev = null;  // the previous bin's last element's point
    d.bins.forEach((b, k) => {
      b.x = binColumn(d, g, k);
      if (![b.min, b.max, b.first, b.last].every(Number.isFinite)) { prev = null; return; }
      b.yMin = y(b.min);
      b.yMax = y(b.max);
      if (prev) { ctx.moveTo(prev[0], prev[1]); ctx.lineTo(b.x, y(b.first)); }
      ctx.moveTo(b.x, b.yMin + 0.5);
      ctx.lineTo(b.x, b.yMax - 0.5);
      prev = [b.x, y(b.last)];
    });
    ctx.stroke();
  }

  function drawValues(d, x, y) {
    const [lo] = d.range;
    ctx.strokeStyle = "#2861c9";
    ctx.fillStyle = "#2861c9";
    ctx.lineWidth = 1.5;
    const points = d.values.map((v, k) => [x(lo + k + 0.5), v]);
    strokeSeries(points, y);
    if (points.length <= 200) {
      for (const [px, v] of points) {
        if (!Number.isFinite(v)) continue;
        ctx.beginPath(); ctx.arc(px, y(v), 2.5, 0, 2 * Math.PI); ctx.fill();
      }
    }
  }

  // A polyline through [px, value] points, broken where a value is not finite.
  function strokeSeries(points, y) {
    ctx.beginPath();
    let open = false;
    for (const [px, v] of points) {
      if (!Number.isFinite(v)) { open = false; continue; }
      if (open) ctx.lineTo(px, y(v)); else ctx.moveTo(px, y(v));
      open = true;
    }
    ctx.stroke();
  }

  // ---- the readout ---------------------------------------------------------------

  let readoutTimer = null;
  function scheduleReadout() {
    clearTimeout(readoutTimer);
    readoutTimer = setTimeout(() => { readoutTimer = null; loadReadout(); }, READOUT_DELAY_MS);
  }
  // Nothing in flight or waiting to be asked: what is shown answers the view.
  state.idle = () => state.pending === 0 && readoutTimer === null && resizeTimer === null;

  async function loadReadout() {
    const { lo, hi } = state.view;
    const name = encodeURIComponent(state.array.name);
    const params = [["range", lo + ":" + hi]];
    for (const s of ["count", "mean", "std", "min", "max"]) params.push(["stat", s]);
    loadProgressive(lo, hi);
    try {
      const answer = await requestJson("stats", apiUrl("/" + name + "/stats", params), { range: [lo, hi] });
      if (!answer) return;
      state.readout = { range: [lo, hi], stats: answer.stats };
      $("r-count").textContent = formatIndex(num(answer.stats.count));
      for (const s of ["mean", "std", "min", "max"]) $("r-" + s).textContent = formatValue(num(answer.stats[s]));
    } catch (e) { fail(e); }
  }

  // The sum's progressive lines, each drawn as it comes: the interval shrinks to the answer.
  async function loadProgressive(lo, hi) {
    const name = encodeURIComponent(state.array.name);
    const url = apiUrl("/" + name + "/progressive", [["range", lo + ":" + hi], ["stat", "sum"]]);
    state.progressive = [];
    try {
      const response = await request("progressive", url, { range: [lo, hi] });
      if (!response) return;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let text = "";
      state.pending++;
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          let nl;
          while ((nl = text.indexOf("\n")) >= 0) {
            const line = text.slice(0, nl).trim();
            text = text.slice(nl + 1);
            if (line) showProgressive(JSON.parse(line));
          }
        }
      } finally { state.pending--; }
    } catch (e) { fail(e); }
  }

  function showProgressive(line) {
    if (line.error) { fail(new Error(line.error)); return; }
    state.progressive.push(line);
    const first = state.progressive[0];
    const [l0, u0] = [num(first.lower), num(first.upper)];
    const [l, u, e] = [num(line.lower), num(line.upper), num(line.estimate)];
    $("p-text").textContent = line.exact ? formatValue(e) + " (exact)"
                                         : formatValue(e) + " in [" + formatValue(l) + ", " + formatValue(u) + "]";
    const width = u0 - l0;
    const at = (v) => (width > 0 && Number.isFinite(v) ? ((v - l0) / width) * 100 : 50);
    const interval = $("p-interval");
    interval.style.left = at(l) + "%";
    interval.style.width = Math.max(0.5, at(u) - at(l)) + "%";
    $("p-estimate").style.left = at(e) + "%";
  }

  // ---- live mode -----------------------------------------------------------------

  let liveTimer = null;
  function setLive(on) {
    state.live = on;
    $("live").setAttribute("aria-pressed", String(on));
    clearTimeout(liveTimer);
    if (on) {
      state.logSince = state.logSince === null ? Date.now() : state.logSince;
      pollLog();
    }
  }

  async function pollLog() {
    if (!state.live) return;
    const name = encodeURIComponent(state.array.name);
    const url = apiUrl("/" + name + "/log", [["since", String(state.logSince)]]);
    try {
      const response = await request("log", url, {});
      if (response) {
        const lines = (await response.text()).split("\n").filter((s) => s.trim());
        let changed = false;
        for (const line of lines) {
          const r = JSON.parse(line);
          if (r.error) throw new Error(r.error);
          state.logSince = Math.max(state.logSince, r.time + 1);
          state.updatesSeen++;
          changed = true;
        }
        if (changed) { loadView(); scheduleReadout(); }
      }
    } catch (e) { fail(e); }
    if (state.live) liveTimer = setTimeout(pollLog, LIVE_POLL_MS);
  }

  // ---- input ---------------------------------------------------------------------

  let drag = null;  // {x, view, box}

  function boxMode() { return $("box").getAttribute("aria-pressed") === "true"; }

  function showBox(x0, x1) {
    const rect = $("box-rect");
    rect.hidden = false;
    rect.style.left = Math.min(x0, x1) + "px";
    rect.style.width = Math.abs(x1 - x0) + "px";
  }

  canvas.addEventListener("pointerdown", (ev) => {
    if (!state.view) return;
    canvas.setPointerCapture(ev.pointerId);
    canvas.focus();
    drag = { x: ev.offsetX, view: state.view, box: ev.shiftKey || boxMode() };
    canvas.classList.toggle("dragging", !drag.box);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    if (drag.box) { showBox(drag.x, ev.offsetX); return; }
    const g = layout();
    const span = drag.view.hi - drag.view.lo;
    const shift = Math.round(((drag.x - ev.offsetX) / g.w) * span);
    setView(drag.view.lo + shift, drag.view.hi + shift);
  });
  const endDrag = (ev) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    canvas.classList.remove("dragging");
    $("box-rect").hidden = true;
    if (d.box && Math.abs(ev.offsetX - d.x) >= 3) {
      const a = indexAt(Math.min(d.x, ev.offsetX));
      const b = indexAt(Math.max(d.x, ev.offsetX));
      setView(Math.floor(a), Math.ceil(b));
    }
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("wheel", (ev) => {
    if (!state.view) return;
    ev.preventDefault();
    // In proportion to the scroll (a trackpad sends many small deltas, a wheel a few large
    // ones): 100 pixels zoom by e^0.15, about 1.16; lines count as 33 pixels, pages as 600.
    const pixels = ev.deltaY * (ev.deltaMode === 1 ? 33 : ev.deltaMode === 2 ? 600 : 1);
    zoom(Math.exp(Math.max(-1, Math.min(1, pixels * 0.0015))), indexAt(ev.offsetX));
  }, { passive: false });

  function onKey(ev) {
    if (!state.view || ev.target.tagName === "SELECT") return;
    const actions = {
      ArrowLeft: () => pan(-0.1), ArrowRight: () => pan(0.1),
      "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), _: () => zoom(2),
      Home: () => setView(0, state.array.length), l: () => setLive(!state.live),
    };
    const act = actions[ev.key];
    if (!act || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    ev.preventDefault();
    act();
  }
  document.addEventListener("keydown", onKey);

  $("left").addEventListener("click", () => pan(-0.1));
  $("right").addEventListener("click", () => pan(0.1));
  $("zoom-in").addEventListener("click", () => zoom(0.5));
  $("zoom-out").addEventListener("click", () => zoom(2));
  $("reset").addEventListener("click", () => setView(0, state.array.length));
  $("box").addEventListener("click", () => $("box").setAttribute("aria-pressed", String(!boxMode())));
  $("live").addEventListener("click", () => setLive(!state.live));
  $("array").addEventListener("change", () => choose($("array").value));

  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { resizeTimer = null; if (state.view) { draw(); loadView(); } }, 150);
  });

  // ---- start ---------------------------------------------------------------------

  function choose(name) {
    const a = state.arrays.find((x) => x.name === name);
    if (!a) return;
    state.array = a;
    state.view = null;
    state.drawn = null;
    state.logSince = null;
    setView(0, a.length);
  }

  async function start() {
    try {
      const answer = await requestJson("arrays", apiUrl("", []), {});
      state.arrays = answer.arrays.filter((a) => !a.error && a.length > 0);
      const select = $("array");
      for (const a of answer.arrays) {
        const option = document.createElement("option");
        option.value = a.name;
        option.textContent = a.error ? a.name + " (" + a.error + ")" : a.name + " (" + a.dtype + ", " +
                                                                       formatIndex(a.length) + ")";
        option.disabled = !!a.error || !(a.length > 0);
        select.appendChild(option);
      }
      const wanted = new URLSearchParams(location.search).get("array");
      const first = state.arrays.find((a) => a.name === wanted) || state.arrays[0];
      if (!first) { showStatus("no array to show"); return; }
      select.value = first.name;
      choose(first.name);
    } catch (e) { fail(e); }
  }

  start();
})();
