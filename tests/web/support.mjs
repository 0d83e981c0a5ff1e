// What the browser tests share: the scene of the C++ tests as a PNG, `sam3 serve` on a free
// loopback port with the generated models, and headless Debian Chromium.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { chromium } from "playwright-core";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;

// The scene of the C++ tests: 400x240, a big red box top-left, a small red square
// bottom-left, magenta top-right, blue bottom-right.
export const SCENE = { width: 400, height: 240, redBig: [40, 20, 160, 100], redSmall: [60, 160, 90, 190] };

export function scenePng() {
  return rgbPng(SCENE.width, SCENE.height, [[SCENE.redBig, [255, 0, 0]], [[260, 20, 360, 90], [255, 0, 255]],
    [SCENE.redSmall, [255, 0, 0]], [[240, 140, 380, 220], [0, 0, 255]]]);
}

// The C++ tests' click scene (tests/support/test_images.h make_click_scene): 640x480, two red
// squares and a blue rectangle on black.
export const CLICK_SCENE = { width: 640, height: 480, redLeft: [100, 100, 220, 220], redRight: [400, 100, 520, 220] };

export function clickScenePng() {
  return rgbPng(CLICK_SCENE.width, CLICK_SCENE.height, [[CLICK_SCENE.redLeft, [255, 0, 0]],
    [CLICK_SCENE.redRight, [255, 0, 0]], [[200, 300, 500, 420], [0, 0, 255]]]);
}

// A PNG of rectangles [[x0, y0, x1, y1], [r, g, b]] filled in order on black.
export function rgbPng(width, height, rects) {
  const px = Buffer.alloc(width * height * 3);
  for (const [[x0, y0, x1, y1], rgb] of rects) {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) px.set(rgb, (y * width + x) * 3);
  }
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) px.copy(raw, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3);
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32 ? zlib.crc32(body) : crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

// COCO's compressed RLE string (column-major counts), as pycocotools reads it: 0/1 row-major.
export function cocoDecode(counts, height, width) {
  const runs = [];
  for (let p = 0; p < counts.length;) {
    let x = 0, k = 0, more = true;
    while (more) {
      const c = counts.charCodeAt(p++) - 48;
      x |= (c & 0x1f) << (5 * k++);
      more = (c & 0x20) !== 0;
      if (!more && (c & 0x10)) x |= -1 << (5 * k);
    }
    if (runs.length > 2) x += runs[runs.length - 2];
    runs.push(x);
  }
  const mask = new Uint8Array(height * width);
  let i = 0, v = 0;
  for (const n of runs) {
    for (let j = 0; j < n; j++, i++) if (v) mask[(i % height) * width + Math.floor(i / height)] = 1;
    v ^= 1;
  }
  return mask;
}

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}


export async function startServer(args = [], models = "usls") {
  assert.ok(CLI && MODELS, "SAM3_CLI and SAM3_TEST_MODELS must be set");
  const server = spawn(CLI, ["serve", "--models", path.join(MODELS, models), "--port", "0", ...args],
    { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = await Promise.race([
    once(server.stdout, "data"),
    new Promise((_, reject) => setTimeout(() => reject(new Error("server did not start")), 20000)),
  ]);
  const baseUrl = line.toString().match(/http:\/\/\S+/)[0];
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${baseUrl}/health`).catch(() => null);
    if (r?.ok) break;
    await new Promise((done) => setTimeout(done, 50));
  }
  return { server, baseUrl };
}

export async function stopServer(server) {
  if (!server) return;
  server.kill("SIGTERM");
  const [code] = await once(server, "exit");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
}

const QUIET = ["--no-first-run", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export function launchBrowser() {
  return launchChromium(["--no-sandbox", "--disable-gpu", ...QUIET]);
}

// The same with more Chromium flags (e.g. V8's --js-flags).
export function launchBrowserWith(flags) {
  return launchChromium(["--no-sandbox", "--disable-gpu", ...QUIET, ...flags]);
}

// WebGPU on the CPU: Chromium's SwiftShader adapter (correct, slow), in a browser of its own.
export function launchWebGpuBrowser() {
  return launchChromium(["--no-sandbox", "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader", ...QUIET]);
}

// Playwright gives Chromium a temporary profile, but Chromium still writes its crash-report
// database and GTK's dconf under $HOME (~/.config/chromium, ~/.cache/dconf): the environment
// that gives it `home` instead (the benchmarks use it too).
export function chromiumHomeEnv(home) {
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_CACHE_HOME: path.join(home, ".cache") };
}

// Each browser a test starts gets a home of its own, removed when the browser closes.
async function launchChromium(args) {
  const home = mkdtempSync(path.join(os.tmpdir(), "sam3-chromium-home-"));
  const remove = () => rmSync(home, { recursive: true, force: true });
  try {
    const browser = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args, env: chromiumHomeEnv(home) });
    browser.on("disconnected", remove);
    return browser;
  } catch (e) {
    remove();
    throw e;
  }
}
