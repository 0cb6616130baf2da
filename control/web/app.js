// sigproc control page: polls the JSON API of the server that served it
// and draws on canvases. No network access beyond this server.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { status: null, retunes: -1, lat: [], respStage: -1, formStage: -1 };
const HISTORY = 400; // latency points kept (2 min at 300 ms)

async function getJSON(url, opts) {
  const r = await fetch(url, opts);
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status });
  return body;
}

function fmtCount(n) { return n.toLocaleString("en-US"); }
function fmtRate(r) {
  if (r >= 1e6) return (r / 1e6).toPrecision(4) + " MS/s";
  if (r >= 1e3) return (r / 1e3).toPrecision(4) + " kS/s";
  return r.toPrecision(4) + " S/s";
}
function fmtHz(f) { return Math.abs(f) >= 1e3 ? (f / 1e3).toFixed(Math.abs(f) >= 1e5 ? 0 : 1) + "k" : f.toFixed(0); }

// plot draws series [{x:[], y:[], color}] on a canvas with a grid, axes
// labels and fixed or automatic y limits.
function plot(cv, series, o) {
  const g = cv.getContext("2d"), W = cv.width, H = cv.height;
  const L = 48, R = 8, T = 8, B = 22;
  g.clearRect(0, 0, W, H);
  let xs = series.flatMap((s) => s.x), ys = series.flatMap((s) => s.y).filter(Number.isFinite);
  if (!xs.length) return;
  let x0 = o.xmin ?? Math.min(...xs), x1 = o.xmax ?? Math.max(...xs);
  let y0 = o.ymin ?? Math.min(...ys), y1 = o.ymax ?? Math.max(...ys);
  if (!(x1 > x0)) x1 = x0 + 1;
  if (!(y1 > y0)) { y1 = y0 + 1; }
  const px = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const py = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  g.strokeStyle = "#26313c"; g.fillStyle = "#7b8794"; g.font = "11px sans-serif"; g.lineWidth = 1;
  for (let i = 0; i <= 5; i++) {
    const y = y0 + (y1 - y0) * i / 5, yy = Math.round(py(y)) + 0.5;
    g.beginPath(); g.moveTo(L, yy); g.lineTo(W - R, yy); g.stroke();
    g.fillText((o.yfmt || ((v) => v.toFixed(0)))(y), 2, yy + 4);
    const x = x0 + (x1 - x0) * i / 5, xx = Math.round(px(x)) + 0.5;
    g.beginPath(); g.moveTo(xx, T); g.lineTo(xx, H - B); g.stroke();
    g.fillText((o.xfmt || fmtHz)(x), Math.min(xx - 10, W - 40), H - 6);
  }
  for (const s of series) {
    g.strokeStyle = s.color; g.lineWidth = 1.5; g.beginPath();
    let first = true;
    for (let i = 0; i < s.x.length; i++) {
      if (!Number.isFinite(s.y[i])) continue;
      const X = px(s.x[i]), Y = py(Math.max(y0, Math.min(y1, s.y[i])));
      if (first) { g.moveTo(X, Y); first = false; } else g.lineTo(X, Y);
    }
    g.stroke();
  }
  if (o.legend) {
    o.legend.forEach((t, i) => { g.fillStyle = series[i].color; g.fillText(t, W - R - 110, T + 12 + 13 * i); });
  }
}

// waterfall scrolls the canvas down one row and draws the newest
// spectrum on top, dB mapped to a blue-yellow scale.
function waterfall(cv, db, lo, hi) {
  const g = cv.getContext("2d"), W = cv.width, H = cv.height, ROW = 2;
  g.drawImage(cv, 0, 0, W, H - ROW, 0, ROW, W, H - ROW);
  const row = g.createImageData(W, 1);
  for (let x = 0; x < W; x++) {
    const v = db[Math.min(db.length - 1, Math.floor(x * db.length / W))];
    const t = Math.max(0, Math.min(1, (v - lo) / (hi - lo)));
    row.data[4 * x] = 255 * Math.min(1, Math.max(0, 2 * t - 0.6));
    row.data[4 * x + 1] = 255 * Math.min(1, 1.3 * t);
    row.data[4 * x + 2] = 255 * Math.min(1, 0.35 + t) * (1 - t * 0.7);
    row.data[4 * x + 3] = 255;
  }
  for (let y = 0; y < ROW; y++) g.putImageData(row, 0, y);
}

function fillSelect(sel, values, keep) {
  const cur = sel.value;
  if ([...sel.options].map((o) => o.value + "=" + o.text).join() === values.map((v) => v[0] + "=" + v[1]).join()) return;
  sel.innerHTML = "";
  for (const [v, t] of values) sel.add(new Option(t, v));
  sel.value = values.some((v) => v[0] === cur) ? cur : keep;
}

function describe(s) {
  if (s.kind === "shift") return `shift ${s.frequency_hz} Hz`;
  if (s.kind === "fir") return `fir ${s.num_taps} taps${s.decimate > 1 ? " ÷" + s.decimate : ""}`;
  if (s.kind === "channelize") return `channelize ${s.channels} channels ÷${s.decimate}`;
  if (s.kind === "select") return `select ${s.keep.length > 8 ? s.keep.length + " channels" : s.keep.join(", ")}`;
  return `resample ${s.num_taps} taps ×${s.up}/${s.down}`;
}

async function pollStatus() {
  try {
    const s = await getJSON("api/status");
    state.status = s;
    $("conn").textContent = "live"; $("conn").className = "pill good";
    $("backend").textContent = s.backend + (s.transport ? "/" + s.transport : "");
    $("chain").textContent = s.stages.map(describe).join(" → ");
    $("uptime").textContent = s.uptime_s.toFixed(1) + " s";
    $("samples-in").textContent = fmtCount(s.samples_in);
    $("samples-out").textContent = fmtCount(s.samples_out);
    $("rates").textContent = fmtRate(s.input_rate) + " / " + fmtRate(s.output_rate);
    $("drops-capture").textContent = `${fmtCount(s.drops.capture_blocks)} / ${fmtCount(s.drops.capture_samples)}`;
    $("drops-filter").textContent = `${fmtCount(s.drops.filter_blocks)} / ${fmtCount(s.drops.filter_samples)}`;
    $("gaps").textContent = fmtCount(s.drops.gaps);
    $("retunes").textContent = fmtCount(s.retunes);
    const pts = s.points.map((p) => [p, p]);
    fillSelect($("point-a"), pts, s.points[0]);
    fillSelect($("point-b"), pts, "output");
    const firs = s.stages.filter((x) => x.num_taps > 0).map((x) => [String(x.index), `${x.index}: ${describe(x)}`]);
    fillSelect($("resp-stage"), firs, firs.length ? firs[0][0] : "");
    fillSelect($("stage-index"), s.stages.map((x) => [String(x.index), `${x.index}: ${x.kind}`]), "0");
    syncForm(false);
    if (!s.retunable) { setResult(s.retune_note || "this backend cannot retune", false); }
    state.lat.push({ t: s.uptime_s, p50: s.latency_us.p50, p99: s.latency_us.p99, fill: 100 * s.ring.fill });
    if (state.lat.length > HISTORY) state.lat.shift();
    const lt = state.lat.map((p) => p.t);
    plot($("lat"), [
      { x: lt, y: state.lat.map((p) => p.p50), color: "#4fc3f7" },
      { x: lt, y: state.lat.map((p) => p.p99), color: "#ffb74d" },
      { x: lt, y: state.lat.map((p) => p.fill), color: "#81c784" },
    ], { ymin: 0, xfmt: (v) => v.toFixed(1) + " s", yfmt: (v) => v.toFixed(v < 10 ? 1 : 0), legend: ["p50 µs", "p99 µs", "ring fill %"] });
    if (s.retunes !== state.retunes || $("resp-stage").value !== String(state.respStage)) {
      state.retunes = s.retunes;
      drawResponse();
    }
  } catch (e) {
    $("conn").textContent = "disconnected: " + e.message; $("conn").className = "pill bad";
  }
}

// strip draws a point's per-channel power (a channelizer's output) as one
// bar per channel, coloured on the waterfall's scale, the channel whose
// spectrum is shown outlined.
function strip(cv, db, sel) {
  const g = cv.getContext("2d"), W = cv.width, H = cv.height, n = db.length;
  const top = Math.max(...db), lo = top - 60;
  g.clearRect(0, 0, W, H);
  for (let k = 0; k < n; k++) {
    const t = Math.max(0, Math.min(1, (db[k] - lo) / (top - lo)));
    const x0 = Math.floor(k * W / n), x1 = Math.max(x0 + 1, Math.floor((k + 1) * W / n));
    g.fillStyle = `rgb(${255 * Math.min(1, Math.max(0, 2 * t - 0.6))},${255 * Math.min(1, 1.3 * t)},${255 * Math.min(1, 0.35 + t) * (1 - t * 0.7)})`;
    g.fillRect(x0, H * (1 - 0.15 - 0.85 * t), x1 - x0, H * (0.15 + 0.85 * t));
    if (k === sel) { g.strokeStyle = "#fff"; g.strokeRect(x0 + 0.5, 0.5, x1 - x0 - 1, H - 1); }
  }
}

async function drawSpectrum(which, color) {
  const point = $("point-" + which).value;
  if (!point) return;
  try {
    const ch = Number($("chan-" + which).value) || 0;
    let s;
    try {
      s = await getJSON("api/spectrum?point=" + encodeURIComponent(point) + "&channel=" + ch);
    } catch (e) {
      if (e.status !== 400 || ch === 0) throw e;
      $("chan-" + which).value = "0"; // the point has fewer channels
      s = await getJSON("api/spectrum?point=" + encodeURIComponent(point));
    }
    const many = s.channels > 1;
    $("chan-box-" + which).hidden = !many; $("strip-" + which).hidden = !many;
    if (many) {
      $("chan-" + which).max = String(s.channels - 1);
      strip($("strip-" + which), s.channel_power_db, s.channel);
      $("strip-" + which).dataset.channels = String(s.channels);
    }
    const top = Math.ceil(Math.max(...s.db) / 10) * 10, lo = top - 100;
    plot($("spec-" + which), [{ x: s.freq_hz, y: s.db, color }], { ymin: lo, ymax: top, xmin: s.freq_hz[0], xmax: s.freq_hz[s.freq_hz.length - 1] });
    waterfall($("wf-" + which), s.db, lo, top);
    const peak = $("peak-" + which);
    peak.textContent = s.peak_hz.toFixed(1) + (s.nonfinite ? " (" + s.nonfinite + " NaN/Inf samples, shown as 0)" : "");
    peak.dataset.point = point;
    peak.dataset.channel = String(s.channel);
    peak.dataset.peakHz = String(s.peak_hz);
  } catch (e) {
    $("peak-" + which).textContent = e.message;
  }
}

async function drawResponse() {
  const n = $("resp-stage").value;
  state.respStage = n;
  if (n === "") return;
  try {
    const r = await getJSON("api/response?stage=" + n);
    plot($("resp"), [{ x: r.freq_hz, y: r.db, color: "#81c784" }], { ymin: -100, ymax: Math.max(10, Math.ceil(Math.max(...r.db) / 10) * 10) });
  } catch (e) { /* a shift stage has no response */ }
}

// syncForm shows the fields of the selected stage's kind and, when the
// stage changes (or force), fills them with its current parameters.
function syncForm(force) {
  const s = state.status;
  if (!s) return;
  const i = Number($("stage-index").value || 0), st = s.stages[i];
  if (!st) return;
  $("fields-shift").hidden = st.kind !== "shift";
  $("fields-fir").hidden = st.kind === "shift" || st.kind === "select";
  $("apply").disabled = !s.retunable || st.kind === "select"; // a selection cannot change while it runs
  $("stage-now").textContent = "now: " + describe(st) + " at " + fmtRate(st.rate_in);
  if (force || state.formStage !== i) {
    state.formStage = i;
    if (st.kind === "shift") $("frequency").value = st.frequency_hz;
    else if (st.taps) $("taps").value = st.taps.map((v) => +v.toPrecision(7)).join(", ");
  }
  $("body-preview").textContent = JSON.stringify(formBody()).slice(0, 400);
}

function num(id) { const v = $(id).value; return v === "" ? undefined : Number(v); }

// formBody is the stage in the config's schema.
function formBody() {
  const s = state.status, st = s && s.stages[Number($("stage-index").value || 0)];
  if (!st) return {};
  if (st.kind === "shift") return { shift: { frequency_hz: num("frequency") } };
  let f;
  if (document.querySelector("input[name=src]:checked").value === "design") {
    const d = { type: $("d-type").value, num_taps: num("d-ntaps"), window: $("d-window").value };
    if (d.type === "lowpass" || d.type === "highpass") d.cutoff_hz = num("d-cutoff");
    else { d.low_hz = num("d-low"); d.high_hz = num("d-high"); }
    f = { design: d };
  } else {
    f = { taps: $("taps").value.split(/[\s,]+/).filter((x) => x !== "").map(Number) };
  }
  if (st.kind === "channelize") f.channels = st.channels; // new taps; the channels stay
  return { [st.kind]: f };
}

function setResult(text, ok) { const o = $("result"); o.textContent = text; o.className = ok ? "good" : "bad"; }

$("retune").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const n = $("stage-index").value;
  try {
    const r = await getJSON("api/stages/" + n, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(formBody()) });
    setResult(`stage ${n}: ${describe(r.stage)}, applied at sample ${r.applied_at_sample}`, true);
    $("result").dataset.appliedAt = String(r.applied_at_sample);
    await pollStatus();
    syncForm(true);
  } catch (e) {
    setResult(`${e.status || ""} ${e.message}`, false);
  }
});
$("stage-index").addEventListener("change", () => syncForm(true));
$("retune").addEventListener("input", () => syncForm(false));
for (const r of document.querySelectorAll("input[name=src]")) {
  r.addEventListener("change", () => {
    const d = document.querySelector("input[name=src]:checked").value === "design";
    $("design-box").hidden = !d; $("taps-box").hidden = d; syncForm(false);
  });
}
$("resp-stage").addEventListener("change", drawResponse);
for (const w of ["a", "b"]) {
  $("strip-" + w).addEventListener("click", (ev) => {
    const cv = ev.currentTarget, n = Number(cv.dataset.channels || 1);
    $("chan-" + w).value = String(Math.min(n - 1, Math.floor(ev.offsetX * n / cv.clientWidth)));
  });
}

async function tick() {
  await pollStatus();
  await Promise.all([drawSpectrum("a", "#4fc3f7"), drawSpectrum("b", "#ffb74d")]);
  setTimeout(tick, 300);
}
tick();
