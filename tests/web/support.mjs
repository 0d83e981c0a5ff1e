// What the browser tests share: the scene of the C++ tests as a PNG, `sam3 serve` on a free
// loopback port with the generated models, and headless Debian Chromium.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import zlib from "node:zlib";
import { chromium } from "playwright-core";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;

// The scene of the C++ tests: 400x240, a big red box top-left, a small red square
// bottom-left, magenta top-right, blue bottom-right.
export const SCENE = { width: 400, height: 240, redBig: [40, 20, 160, 100], redSmall: [60, 160, 90, 190] };

export function scenePng() {
  const { width, height } = SCENE;
  const px = Buffer.alloc(width * height * 3);
  const fill = ([x0, y0, x1, y1], rgb) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) px.set(rgb, (y * width + x) * 3);
  };
  fill(SCENE.redBig, [255, 0, 0]);
  fill([260, 20, 360, 90], [255, 0, 255]);
  fill(SCENE.redSmall, [255, 0, 0]);
  fill([240, 140, 380, 220], [0, 0, 255]);
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

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}


export async function startServer(args = []) {
  assert.ok(CLI && MODELS, "SAM3_CLI and SAM3_TEST_MODELS must be set");
  const server = spawn(CLI, ["serve", "--models", path.join(MODELS, "usls"), "--port", "0", ...args],
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

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}
