// sam3cpp web page: upload once, add prompts as chips, see every instance as a coloured overlay.
// No dependencies, no network beyond this server. Served at /app/ (or exported by `sam3 web
// export`, with its config.json) it computes in the tab instead: sam3's core in WebAssembly on
// ONNX Runtime Web (sam3-browser.mjs), and no request carries the image.
"use strict";

const PALETTE = ["#e6194b", "#3cb44b", "#0082c8", "#f58231", "#911eb4", "#46f0f0", "#f032e6",
  "#d2f53c", "#fabebe", "#008080", "#aa6e28", "#800000", "#808000", "#000080"];
const SERVER_THRESHOLD = 0.05;  // ask for everything plausible; the slider filters locally

const $ = (id) => document.getElementById(id);
const state = {
  image: null,        // {id, width, height, bitmap}
  prompts: [],        // {text, color, pending, instances: [{score, box, area, mask: Uint8Array}]}
  boxes: [],          // {x0, y0, x1, y1, positive}
  threshold: 0.5,
  hover: null,        // {prompt, index}
  drag: null,
  lastResponse: null,
  clicks: false,      // click mode (the server has SAM3's interactive model)
  clicksOnly: false,  // the model takes clicks only (SAM3's interactive model alone)
  retry: null,        // what failed for want of the API key, run again once it is typed
  object: null,       // the object being clicked: {points: [[x, y, "pos"|"neg"]], box, prompt}
  local: null,        // computing in this browser: {model, embedding}
  inBrowser: false,   // /app/ or an export: everything is computed here, nothing goes to a server
};

// ---- API -------------------------------------------------------------------------------
// The key of a server started with --api-key, kept for this tab's session only.
function authHeaders() {
  const key = sessionStorage.getItem("sam3-api-key");
  return key ? { Authorization: `Bearer ${key}` } : {};
}

// The server wants its key: the page asks for it in the field at the top (not the message
// meant for programs about "Authorization: Bearer").
function askForKey() {
  const had = Boolean(sessionStorage.getItem("sam3-api-key"));
  $("api-key").hidden = false;
  $("api-key").focus();
  const pill = $("model-status");
  pill.textContent = had ? "API key refused" : "API key needed";
  pill.className = "pill error";
  return had ? "the server refused this API key; type the right one in the \"API key\" field at the top"
    : "this server needs its API key: type it in the \"API key\" field at the top (kept for this tab only)";
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers || {}) } });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) {
    const e = new Error(askForKey());
    e.needsKey = true;
    throw e;
  }
  if (!response.ok) {
    const message = body.error ? body.error.message : `HTTP ${response.status}`;
    throw new Error(message);
  }
  return body;
}

// COCO compressed RLE (column-major) -> row-major Uint8Array.
function decodeRle(counts, height, width) {
  const runs = [];
  let p = 0;
  while (p < counts.length) {
    let x = 0, k = 0, more = true, c = 0;
    while (more) {
      c = counts.charCodeAt(p) - 48;
      x |= (c & 0x1f) << (5 * k);
      more = (c & 0x20) !== 0;
      p++; k++;
      if (!more && (c & 0x10)) x |= -1 << (5 * k);
    }
    if (runs.length > 2) x += runs[runs.length - 2];
    runs.push(x);
  }
  const mask = new Uint8Array(width * height);
  let pos = 0, value = 0;
  for (const run of runs) {
    if (value) {
      for (let i = pos; i < pos + run; i++) mask[(i % height) * width + Math.floor(i / height)] = 1;
    }
    pos += run;
    value ^= 1;
  }
  return mask;
}

// ---- status ------------------------------------------------------------------------------
function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", isError);
}

function setBusy(text) {
  $("busy").hidden = !text;
  if (text) $("busy-text").textContent = text;
}

async function pollHealth() {
  const pill = $("model-status");
  try {
    const response = await fetch("/health");
    const body = await response.json();
    if (response.ok) {
      let info = null;
      try {
        info = await api("/v1/info");
      } catch (e) {
        if (e.needsKey) { setStatus(e.message, true); return; }  // polled again once the key is typed
      }
      pill.textContent = info ? `${info.model.layout} model ready` : "ready";
      $("click-row").hidden = !(info && (info.interactive_model || info.model.interactive));
      pill.className = "pill ready";
      // The interactive model alone takes clicks only: the page starts in click mode, as /app/ does.
      state.clicksOnly = Boolean(info && info.model.interactive && !info.interactive_model);
      if (state.clicksOnly) {
        TEXT_MODE.placeholder ??= $("prompt-input").placeholder;
        TEXT_MODE.tagline ??= document.querySelector(".tagline").textContent;
        setClickMode(true, true);
      }
      if (info) $("versions").textContent = `sam3cpp ${info.versions.sam3cpp} · ONNX Runtime ${info.versions.onnxruntime}`;
      return;
    }
    pill.textContent = body.status === "error" ? "model failed to load" : "loading model…";
    pill.className = body.status === "error" ? "pill error" : "pill";
    if (body.status === "error") { setStatus(body.message, true); return; }
  } catch (e) {
    pill.textContent = "server unreachable";
    pill.className = "pill error";
  }
  setTimeout(pollHealth, 1000);
}

// ---- computing in this browser (/app/) ---------------------------------------------------
// The model's files come from the server's /models/ (or a folder the user picks; nothing is
// uploaded), are cached by the browser, and every step runs in the tab.
async function browserConfig() {
  const response = await fetch("config.json").catch(() => null);
  if (!response || !response.ok) return null;
  return response.json().catch(() => null);
}

function showProgress(p) {
  const pill = $("model-status");
  if (p.stage === "download") {
    const pct = p.total ? ` ${Math.round((100 * p.loaded) / p.total)}%` : "";
    pill.textContent = `${p.cached ? "reading" : "downloading"} ${p.file}${pct}`;
  } else if (p.stage === "rewrite") {
    pill.textContent = `preparing ${p.file} for this browser`;
  } else if (p.loaded >= p.total) {
    setBusy("Decoding…");
  }
}

function seconds(ms) {
  if (ms < 10000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 90 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

// Before an encode in the tab: the estimate (the last encode of this model here, as the module
// remembers it) and a bar of the time elapsed against it. ONNX Runtime Web's run holds the
// page's thread on WASM and reports no progress, so the bar is moved by a transform animation,
// which the compositor runs without that thread; with no estimate yet it only says it is busy.
let encodeAnimation = [];
function showEncodeProgress(estimate) {
  setBusy(estimate ? `Encoding image in this browser: about ${seconds(estimate.ms)}`
    : "Encoding image in this browser: the first encode of this model here");
  const box = $("encode-progress");
  const bar = $("encode-bar");
  box.hidden = false;
  box.dataset.estimateMs = estimate ? String(estimate.ms) : "";
  for (const a of encodeAnimation) a.cancel();
  bar.classList.toggle("unknown", !estimate);
  if (estimate) {
    $("encode-eta").textContent = `estimate: ${estimate.basis} took ${seconds(estimate.ms)} (${new Date(estimate.at).toLocaleString()}); `
      + "the bar is time elapsed against it";
    const duration = Math.max(estimate.ms, 1);
    encodeAnimation = [bar.animate([{ transform: "scaleX(0)" }, { transform: "scaleX(1)" }],
      { duration, easing: "linear", fill: "forwards" }),
    // Past the estimate the full bar pulses: still running, longer than the last time.
    bar.animate([{ opacity: 1 }, { opacity: 0.35 }, { opacity: 1 }], { duration: 1400, delay: duration, iterations: Infinity })];
  } else {
    $("encode-eta").textContent = "no estimate yet: this encode's time is remembered for the next one";
    encodeAnimation = [bar.animate([{ transform: "translateX(-100%)" }, { transform: "translateX(333%)" }],
      { duration: 1600, iterations: Infinity })];
  }
}

function hideEncodeProgress() {
  for (const a of encodeAnimation) a.cancel();
  encodeAnimation = [];
  $("encode-progress").hidden = true;
}

// Lets the browser paint what was just shown before a call that holds the page's thread.
function nextPaint() {
  return new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
}

// What the page says before a model takes clicks only (restored when a text model is loaded).
const TEXT_MODE = {};

// Another model in the tab: the image, its embedding, the prompts and the clicks were the
// previous model's, so the stage starts empty.
function clearForAnotherModel() {
  state.local = null;
  state.image = null;
  state.prompts = [];
  state.boxes = [];
  state.object = null;
  state.clicks = false;
  $("click-mode").checked = false;
  $("click-mode").disabled = false;
  $("click-row").hidden = true;
  $("prompt-input").placeholder = TEXT_MODE.placeholder;
  $("prompt-input").disabled = true;
  $("add-prompt").disabled = true;
  document.querySelector(".tagline").textContent = TEXT_MODE.tagline;
  renderChips();
  resetStage();
}

async function startBrowser(config, source) {
  const pill = $("model-status");
  state.inBrowser = true;
  // The tab decodes images with the browser, which draws no TIFF: the drop zone promises what it takes.
  document.querySelector("#drop-zone span").textContent = "or click to choose a JPEG, PNG, WebP or BMP";
  $("file-input").accept = "image/jpeg,image/png,image/webp,image/bmp";
  TEXT_MODE.placeholder ??= $("prompt-input").placeholder;
  TEXT_MODE.tagline ??= document.querySelector(".tagline").textContent;
  const previous = state.local?.model;
  clearForAnotherModel();
  previous?.release().catch(() => {});
  const params = new URLSearchParams(location.search);
  const models = source ?? params.get("models") ?? config.models;
  $("model-pick").hidden = false;
  if (!models) {
    pill.textContent = "choose a model folder";
    pill.className = "pill";
    return;
  }
  // A static export has no server API to link to: the link shows only once the API answers.
  $("api-link").hidden = true;
  fetch("/openapi.json").then((r) => { $("api-link").hidden = !r.ok; }, () => {});
  pill.textContent = "loading model in this browser…";
  pill.className = "pill";
  try {
    const { Sam3 } = await import("./sam3-browser.mjs");
    const model = await Sam3.load(models, {
      device: params.get("device") ?? "auto", vocabulary: config.vocabulary ?? undefined, onProgress: showProgress,
      // The server lists its model's files: none is probed (a 404 each in the console). Not
      // for another folder picked with ?models= or from disk.
      files: models === config.models ? config.files ?? undefined : undefined,
    });
    state.local = { model, embedding: null };
    setStatus("");  // an earlier load's error is no longer true
    pill.textContent = `${model.layout} model ready · ${model.device === "webgpu" ? "WebGPU" : "WASM"} in this browser`;
    pill.className = "pill ready";
    pill.title = `${model.device}: ${model.deviceReason} (${model.ortBuild})`;
    $("versions").textContent = `sam3cpp core in WebAssembly · ONNX Runtime Web · ${model.generation}`;
    if (model.warnings.length) setStatus(model.warnings.join("; "));
    if (model.info.interactive) setClickMode(true, true);  // the interactive model takes clicks only
  } catch (e) {
    pill.textContent = "model failed to load";
    pill.className = "pill error";
    setStatus(e.message, true);
  }
}

async function encodeHere(file, bitmap) {
  const estimate = state.local.model.encodeEstimate;
  showEncodeProgress(estimate);
  await nextPaint();
  let embedding;
  try {
    embedding = await state.local.model.encode(file, { onProgress: showProgress });
  } finally {
    hideEncodeProgress();
  }
  state.local.embedding = embedding;
  state.image = { id: "local", width: embedding.width, height: embedding.height, bitmap };
  state.boxes = [];
  state.object = null;
  state.prompts = state.prompts.filter((p) => !p.object);
  for (const p of state.prompts) p.instances = [];
  const took = `Image encoded in this browser in ${(embedding.timings_ms.encode_image / 1000).toFixed(1)} s`;
  setStatus(estimate ? `${took} (estimated ${(estimate.ms / 1000).toFixed(1)} s).` : `${took}.`);
  const clicksOnly = Boolean(state.local.model.info.interactive);  // no words for the interactive model
  $("prompt-input").disabled = clicksOnly;
  $("add-prompt").disabled = clicksOnly;
  $("undo-click").disabled = true;
  $("prompt-input").focus();
  resizeCanvas();
  await runAll();
}

// POST /v1/segment's body without the image: answered by the server, or by the model in this
// tab with the same document (the module's answer, shown as it comes).
function segmentAnswer(request) {
  if (state.local) return state.local.model.answer(state.local.embedding, request);
  return api("/v1/segment", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ image_id: state.image.id, ...request }),
  });
}

// ---- image -------------------------------------------------------------------------------
async function loadFile(file) {
  if (!file) return;
  setStatus("");
  $("drop-zone").hidden = true;
  $("canvas-wrap").hidden = false;
  $("stage-hint").hidden = false;
  setBusy("Encoding image…");
  try {
    const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" }).catch(() => null);
    if (state.local) {
      await encodeHere(file, bitmap);  // the file itself: decoded without colour conversion
      return;
    }
    if (state.inBrowser) {  // the tab's model failed to load: the image never goes to a server instead
      throw new Error("no model is loaded in this browser, so nothing can be computed; choose a model folder (nothing is sent to a server)");
    }
    // A format this browser cannot draw (Chromium and TIFF): the server sends the image it decoded as a PNG.
    const info = await api(bitmap ? "/v1/images" : "/v1/images?preview=png", {
      method: "POST",
      // The server recognises the format from the bytes; odd browser types must not get in the way.
      headers: { "Content-Type": file.type.startsWith("image/") ? file.type : "application/octet-stream" },
      body: file,
    });
    let shown = bitmap;
    if (!shown && info.preview_png) {
      const png = Uint8Array.from(atob(info.preview_png), (c) => c.charCodeAt(0));
      shown = await createImageBitmap(new Blob([png], { type: "image/png" })).catch(() => null);
    }
    state.image = { id: info.image_id, width: info.width, height: info.height, bitmap: shown };
    state.boxes = [];
    state.object = null;
    state.prompts = state.prompts.filter((p) => !p.object);
    for (const p of state.prompts) p.instances = [];
    setStatus(info.cached ? "Image already encoded (cache hit)." : `Image encoded in ${(info.encode_ms / 1000).toFixed(1)} s.`);
    if (!shown) setStatus("This browser cannot show this image, so the outlines are drawn on a blank canvas; a PNG or JPEG of it shows both.", true);
    $("prompt-input").disabled = state.clicksOnly;  // no words for the interactive model
    $("add-prompt").disabled = state.clicksOnly;
    $("prompt-input").focus();
    resizeCanvas();
    await runAll();
  } catch (e) {
    setStatus(e.message, true);
    if (e.needsKey) state.retry = () => loadFile(file);  // sent again once the key is typed
    if (!state.image) resetStage();
  } finally {
    setBusy(null);
  }
}

function resetStage() {
  $("drop-zone").hidden = false;
  $("canvas-wrap").hidden = true;
  $("stage-hint").hidden = true;
}

function resizeCanvas() {
  const canvas = $("view");
  canvas.width = state.image.width;
  canvas.height = state.image.height;
  fitCanvas();
  render();
}

// Scale the canvas (CSS pixels) to fill the stage, keeping the image's aspect ratio.
function fitCanvas() {
  if (!state.image) return;
  const wrap = $("canvas-wrap");
  const scale = Math.min(wrap.clientWidth / state.image.width, wrap.clientHeight / state.image.height);
  $("view").style.width = `${Math.floor(state.image.width * scale)}px`;
  $("view").style.height = `${Math.floor(state.image.height * scale)}px`;
}

// ---- prompts -----------------------------------------------------------------------------
function boxesPayload() {
  return state.boxes.map((b) => [b.x0, b.y0, b.x1, b.y1, b.positive ? "pos" : "neg"]);
}

async function runPrompt(prompt) {
  if (!state.image) return;
  prompt.pending = true;
  renderChips();
  try {
    const result = await segmentAnswer({ prompts: [{ text: prompt.text, boxes: boxesPayload() }], threshold: SERVER_THRESHOLD });
    const image = result.images[0];
    prompt.instances = image.prompts[0].instances.map((inst) => ({
      score: inst.score, box: inst.box, area: inst.area,
      mask: decodeRle(inst.mask.counts, inst.mask.size[0], inst.mask.size[1]),
      raw: inst,
    }));
    state.lastResponse = result;
    const t = result.timings_ms;
    setStatus(`"${prompt.text || "boxes"}": ${prompt.instances.length} candidates in ${Math.round(t.encode_text + t.decode + t.postprocess)} ms.`);
  } catch (e) {
    if (e.message.startsWith("no image with id")) {
      state.image = null;
      resetStage();
    }
    setStatus(e.message, true);
  } finally {
    prompt.pending = false;
    renderAll();
  }
}

// Click mode: each click (Shift or right button: "not this") or dragged box refines the
// current object, decoded again at once by the interactive model.
async function runObject() {
  const object = state.object;
  if (!state.image || !object) return;
  if (!object.prompt) {
    const used = new Set(state.prompts.map((p) => p.color));
    const color = PALETTE.find((c) => !used.has(c)) || PALETTE[state.prompts.length % PALETTE.length];
    object.prompt = { text: `object ${state.prompts.filter((p) => p.object).length + 1}`, color, pending: false, instances: [], object };
    state.prompts.push(object.prompt);
  }
  const prompt = object.prompt;
  prompt.pending = true;
  renderChips();
  try {
    const result = await segmentAnswer({ prompts: [{ points: object.points, box: object.box }] });
    const answer = result.images[0].prompts[0];
    prompt.objectScore = answer.object_score;
    prompt.instances = answer.instances.map((inst) => ({
      score: inst.score, box: inst.box, area: inst.area,
      mask: decodeRle(inst.mask.counts, inst.mask.size[0], inst.mask.size[1]), raw: inst,
    }));
    state.lastResponse = result;
    const t = result.timings_ms;
    setStatus(`${prompt.text}: ${object.points.length} point${object.points.length === 1 ? "" : "s"}${object.box ? " and a box" : ""}, ` +
      `object score ${answer.object_score.toFixed(2)}, ${Math.round(t.encode_image + t.decode + t.postprocess)} ms.`);
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    prompt.pending = false;
    $("new-object").disabled = false;
    renderAll();
  }
}

// Each click or box is remembered so that undo takes back the last one.
function addClick(point, box) {
  state.object ??= { points: [], box: null, prompt: null, history: [] };
  if (point) {
    state.object.points.push(point);
    state.object.history.push({ point });
  }
  if (box) {
    state.object.history.push({ box: state.object.box });  // the box it replaces
    state.object.box = box;
  }
  $("undo-click").disabled = false;
  runObject();
}

function undoClick() {
  const object = state.object;
  const last = object?.history.pop();
  if (!last) return;
  if (last.point) object.points.pop();
  else object.box = last.box;
  $("undo-click").disabled = !object.history.length;
  if (object.points.length || object.box) {
    runObject();
    return;
  }
  // Nothing left of the object: it goes.
  if (object.prompt) state.prompts = state.prompts.filter((p) => p !== object.prompt);
  state.object = null;
  $("new-object").disabled = true;
  renderAll();
}

function setClickMode(on, only = false) {
  state.clicks = on;
  $("click-mode").checked = on;
  $("click-mode").disabled = only;
  $("click-row").hidden = false;
  $("hint-text").textContent = state.clicks
    ? "Click the object; Shift-click or right-click where it is not; drag for its box; Ctrl+Z undoes."
    : "Drag on the image to add an exemplar box; hold Shift for a negative one.";
  if (only) {
    $("prompt-input").placeholder = "this model takes clicks, not words";
    document.querySelector(".tagline").textContent = "Click an object to segment it; Shift-click where it is not.";
  }
}

async function runAll() {
  const list = state.prompts.filter((p) => !p.object);  // clicked objects are decoded by runObject
  if (!list.length && state.boxes.length) {
    addPrompt("", false);  // box-only prompt
    return;
  }
  await Promise.all(list.map(runPrompt));
}

function addPrompt(text, run = true) {
  text = text.trim();
  if (!text && !state.boxes.length) return;
  if (state.prompts.some((p) => p.text === text)) return;
  const used = new Set(state.prompts.map((p) => p.color));
  const color = PALETTE.find((c) => !used.has(c)) || PALETTE[state.prompts.length % PALETTE.length];
  const prompt = { text, color, pending: false, instances: [] };
  state.prompts.push(prompt);
  renderChips();
  if (run || !text) runPrompt(prompt);
}

function removePrompt(prompt) {
  if (state.object && state.object.prompt === prompt) state.object = null;
  state.prompts = state.prompts.filter((p) => p !== prompt);
  if (state.hover && state.hover.prompt === prompt) state.hover = null;
  renderAll();
}

// ---- rendering ---------------------------------------------------------------------------
function visibleInstances() {
  const out = [];
  for (const prompt of state.prompts) {
    prompt.instances.forEach((inst, index) => {
      // A clicked object's mask is what was asked for; its score is a predicted IoU.
      if (prompt.object || inst.score > state.threshold) out.push({ prompt, index, inst });
    });
  }
  return out;
}

function hexToRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

function render() {
  if (!state.image) return;
  const canvas = $("view");
  const ctx = canvas.getContext("2d");
  const { width, height } = state.image;
  ctx.clearRect(0, 0, width, height);
  if (state.image.bitmap) ctx.drawImage(state.image.bitmap, 0, 0, width, height);
  const visible = visibleInstances();
  if (visible.length) {
    const base = ctx.getImageData(0, 0, width, height);
    const px = base.data;
    for (const { prompt, index, inst } of visible) {
      const hovered = state.hover && state.hover.prompt === prompt && state.hover.index === index;
      const alpha = hovered ? 0.7 : (state.hover ? 0.25 : 0.45);
      const [r, g, b] = hexToRgb(prompt.color);
      const m = inst.mask;
      for (let i = 0; i < m.length; i++) {
        if (!m[i]) continue;
        const o = i * 4;
        px[o] = px[o] * (1 - alpha) + r * alpha;
        px[o + 1] = px[o + 1] * (1 - alpha) + g * alpha;
        px[o + 2] = px[o + 2] * (1 - alpha) + b * alpha;
      }
    }
    ctx.putImageData(base, 0, 0);
    const scale = Math.max(1, width / 900);
    ctx.font = `${Math.round(13 * scale)}px system-ui, sans-serif`;
    for (const { prompt, index, inst } of visible) {
      const hovered = state.hover && state.hover.prompt === prompt && state.hover.index === index;
      const [x0, y0, x1, y1] = inst.box;
      ctx.lineWidth = (hovered ? 3 : 1.5) * scale;
      ctx.strokeStyle = prompt.color;
      ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
      const label = `${prompt.text || "boxes"} ${inst.score.toFixed(2)}`;
      const tw = ctx.measureText(label).width + 8 * scale;
      const th = 18 * scale;
      const ty = y0 > th ? y0 - th : y0;
      ctx.fillStyle = prompt.color;
      ctx.fillRect(x0, ty, tw, th);
      ctx.fillStyle = "#fff";
      ctx.fillText(label, x0 + 4 * scale, ty + 13 * scale);
    }
  }
  for (const b of state.boxes) drawBox(ctx, b, false);
  if (state.object) {
    const scale = Math.max(1, width / 900);
    if (state.object.box) {
      const [x0, y0, x1, y1] = state.object.box;
      drawBox(ctx, { x0, y0, x1, y1, positive: true }, false);
    }
    for (const [x, y, kind] of state.object.points) {
      ctx.beginPath();
      ctx.arc(x, y, 5 * scale, 0, 2 * Math.PI);
      ctx.fillStyle = kind === "pos" ? "#12b76a" : "#d92d20";
      ctx.fill();
      ctx.lineWidth = 1.5 * scale;
      ctx.strokeStyle = "#fff";
      ctx.stroke();
    }
  }
  if (state.drag) drawBox(ctx, state.drag, true);
}

function drawBox(ctx, b, active) {
  const scale = Math.max(1, state.image.width / 900);
  ctx.lineWidth = 2 * scale;
  ctx.setLineDash(b.positive ? [] : [6 * scale, 4 * scale]);
  ctx.strokeStyle = b.positive ? "#12b76a" : "#d92d20";
  ctx.globalAlpha = active ? 0.8 : 1;
  ctx.strokeRect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
}

function renderChips() {
  const ul = $("chips");
  ul.replaceChildren(...state.prompts.map((prompt) => {
    const li = document.createElement("li");
    li.className = "chip" + (prompt.pending ? " pending" : "");
    li.dataset.text = prompt.text;
    const dot = document.createElement("span");
    dot.className = "dot";
    dot.style.background = prompt.color;
    const label = document.createElement("span");
    label.textContent = prompt.text || "boxes";
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = String(prompt.instances.filter((i) => i.score > state.threshold).length);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.title = "Remove";
    remove.textContent = "×";
    remove.onclick = () => removePrompt(prompt);
    li.append(dot, label, count, remove);
    return li;
  }));
  const boxes = state.boxes.length;
  $("boxes-row").hidden = boxes === 0;
  const neg = state.boxes.filter((b) => !b.positive).length;
  $("boxes-label").textContent = `${boxes} exemplar box${boxes === 1 ? "" : "es"}${neg ? ` (${neg} negative)` : ""}`;
}

function renderList() {
  const ul = $("instance-list");
  const items = [];
  for (const prompt of state.prompts) {
    prompt.instances.forEach((inst, index) => {
      const li = document.createElement("li");
      li.className = inst.score > state.threshold ? "visible" : "";
      if (state.hover && state.hover.prompt === prompt && state.hover.index === index) li.classList.add("hover");
      li.dataset.score = inst.score;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = prompt.color;
      const label = document.createElement("span");
      label.className = "label";
      label.textContent = `${prompt.text || "boxes"} #${index + 1}`;
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = inst.score.toFixed(2);
      const download = document.createElement("button");
      download.title = "Download this mask as PNG";
      download.textContent = "⤓";
      download.onclick = () => downloadMask([{ prompt, inst }], `${slug(prompt.text)}-${index + 1}.png`);
      li.append(swatch, label, score, download);
      li.onmouseenter = () => { state.hover = { prompt, index }; render(); renderListHover(); };
      li.onmouseleave = () => { state.hover = null; render(); renderListHover(); };
      items.push(li);
    });
  }
  ul.replaceChildren(...items);
  const visible = visibleInstances().length;
  $("instance-count").textContent = state.prompts.length ? `(${visible})` : "";
  $("download-masks").disabled = visible === 0;
  $("download-json").disabled = !state.prompts.some((p) => p.instances.length);
}

function renderListHover() {
  let i = 0;
  const lis = $("instance-list").children;
  for (const prompt of state.prompts) {
    prompt.instances.forEach((_, index) => {
      const on = state.hover && state.hover.prompt === prompt && state.hover.index === index;
      lis[i++].classList.toggle("hover", !!on);
    });
  }
}

function renderAll() {
  render();
  renderChips();
  renderList();
}

// ---- downloads ---------------------------------------------------------------------------
function slug(text) {
  return (text || "boxes").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "prompt";
}

function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// A single mask is black/white; several are coloured by prompt on black.
function downloadMask(entries, name) {
  const { width, height } = state.image;
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d");
  const data = ctx.createImageData(width, height);
  for (const { prompt, inst } of entries) {
    const [r, g, b] = entries.length === 1 ? [255, 255, 255] : hexToRgb(prompt.color);
    for (let i = 0; i < inst.mask.length; i++) {
      if (!inst.mask[i]) continue;
      data.data.set([r, g, b], i * 4);
    }
  }
  for (let i = 3; i < data.data.length; i += 4) data.data[i] = 255;
  ctx.putImageData(data, 0, 0);
  canvas.toBlob((blob) => save(blob, name), "image/png");
}

// The answer to every prompt at the slider's threshold, asked for once more as one request (a
// clicked object as `sam3 segment --point`'s entry, its masks whatever their score): the
// document `sam3 segment --json` writes, as the server or the tab's model gives it.
async function downloadJson() {
  const prompts = state.prompts.map((p) => (p.object ? { points: p.object.points, box: p.object.box }
    : { text: p.text, boxes: boxesPayload() }));
  try {
    const answer = await segmentAnswer({ prompts, threshold: state.threshold });
    save(new Blob([JSON.stringify(answer, null, 2)], { type: "application/json" }), "sam3-results.json");
  } catch (e) {
    setStatus(e.message, true);
  }
}

// ---- canvas interaction ------------------------------------------------------------------
function imagePoint(event) {
  const canvas = $("view");
  const rect = canvas.getBoundingClientRect();
  return {
    x: Math.max(0, Math.min(state.image.width, (event.clientX - rect.left) * state.image.width / rect.width)),
    y: Math.max(0, Math.min(state.image.height, (event.clientY - rect.top) * state.image.height / rect.height)),
  };
}

function instanceAt(p) {
  const visible = visibleInstances();
  const index = Math.floor(p.y) * state.image.width + Math.floor(p.x);
  let best = null;
  for (const v of visible) {
    if (v.inst.mask[index] && (!best || v.inst.area < best.inst.area)) best = v;  // smallest on top
  }
  return best ? { prompt: best.prompt, index: best.index } : null;
}

function installCanvasHandlers() {
  const canvas = $("view");
  canvas.addEventListener("mousedown", (e) => {
    if (!state.image) return;
    const p = imagePoint(e);
    state.drag = { sx: p.x, sy: p.y, x0: p.x, y0: p.y, x1: p.x, y1: p.y, positive: !e.shiftKey && e.button !== 2 };
  });
  window.addEventListener("mousemove", (e) => {
    if (!state.image) return;
    if (state.drag) {
      const p = imagePoint(e);
      Object.assign(state.drag, {
        x0: Math.min(state.drag.sx, p.x), y0: Math.min(state.drag.sy, p.y),
        x1: Math.max(state.drag.sx, p.x), y1: Math.max(state.drag.sy, p.y),
      });
      render();
      return;
    }
    if (e.target !== canvas) return;
    const hit = instanceAt(imagePoint(e));
    const same = (hit && state.hover && hit.prompt === state.hover.prompt && hit.index === state.hover.index) || (!hit && !state.hover);
    if (!same) {
      state.hover = hit;
      render();
      renderListHover();
    }
  });
  window.addEventListener("mouseup", () => {
    const d = state.drag;
    state.drag = null;
    if (!d) return;
    const isClick = d.x1 - d.x0 < 4 || d.y1 - d.y0 < 4;
    if (state.clicks) {  // a click is a point on the object, a drag its box
      if (isClick) addClick([Math.round(d.sx), Math.round(d.sy), d.positive ? "pos" : "neg"], null);
      else addClick(null, [Math.round(d.x0), Math.round(d.y0), Math.round(d.x1), Math.round(d.y1)]);
      return;
    }
    if (isClick) { render(); return; }  // a click, not a box
    state.boxes.push({ x0: Math.round(d.x0), y0: Math.round(d.y0), x1: Math.round(d.x1), y1: Math.round(d.y1), positive: d.positive });
    renderChips();
    runAll();
  });
  canvas.addEventListener("contextmenu", (e) => { if (state.clicks) e.preventDefault(); });
  canvas.addEventListener("mouseleave", () => {
    if (state.hover) { state.hover = null; render(); renderListHover(); }
  });
}

// ---- wiring ------------------------------------------------------------------------------
function init() {
  $("file-input").addEventListener("change", (e) => loadFile(e.target.files[0]));
  const zone = $("drop-zone");
  for (const target of [zone, $("canvas-wrap")]) {
    target.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
    target.addEventListener("dragleave", () => zone.classList.remove("over"));
    target.addEventListener("drop", (e) => {
      e.preventDefault();
      zone.classList.remove("over");
      loadFile(e.dataTransfer.files[0]);
    });
  }
  $("change-image").addEventListener("click", () => $("file-input").click());
  $("prompt-form").addEventListener("submit", (e) => {
    e.preventDefault();
    addPrompt($("prompt-input").value);
    $("prompt-input").value = "";
  });
  $("threshold").addEventListener("input", (e) => {
    state.threshold = parseFloat(e.target.value);
    $("threshold-value").textContent = state.threshold.toFixed(2);
    renderAll();  // re-filters locally, no request
  });
  $("clear-boxes").addEventListener("click", () => {
    state.boxes = [];
    state.prompts = state.prompts.filter((p) => p.text);
    renderAll();
    runAll();
  });
  $("download-masks").addEventListener("click", () =>
    downloadMask(visibleInstances().map(({ prompt, inst }) => ({ prompt, inst })), "sam3-masks.png"));
  $("download-json").addEventListener("click", downloadJson);
  $("click-mode").addEventListener("change", (e) => setClickMode(e.target.checked));
  $("new-object").addEventListener("click", () => {  // keep the current object, start another
    state.object = null;
    $("new-object").disabled = true;
    $("undo-click").disabled = true;
    render();
  });
  $("undo-click").addEventListener("click", undoClick);
  window.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "z" && state.clicks && document.activeElement?.tagName !== "INPUT") {
      e.preventDefault();
      undoClick();
    }
  });
  $("api-key").addEventListener("change", async (e) => {
    sessionStorage.setItem("sam3-api-key", e.target.value);
    setStatus("");
    await pollHealth();
    const retry = state.retry;
    state.retry = null;
    if (retry && $("model-status").classList.contains("ready")) retry();
  });
  window.addEventListener("resize", fitCanvas);
  installCanvasHandlers();
  $("model-input").addEventListener("change", async (e) => {
    const config = (await browserConfig()) ?? {};
    startBrowser(config, [...e.target.files]);
  });
  browserConfig().then((config) => (config ? startBrowser(config) : pollHealth()));
}

init();
