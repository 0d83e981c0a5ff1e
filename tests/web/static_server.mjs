// A plain static file server on a free loopback port for the browser tests: URL prefixes mapped
// to folders, optionally with the cross-origin isolation headers (COOP/COEP) WASM threads need.
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import path from "node:path";

const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".css": "text/css",
  ".wasm": "application/wasm", ".json": "application/json", ".png": "image/png", ".onnx": "application/octet-stream",
  ".ts": "text/plain", ".gz": "application/gzip" };

// routes: {"/web/": "/abs/folder", ...}; pages: {"/": "<html>..."}; isolated: add COOP/COEP.
export async function startStatic({ routes = {}, pages = {}, isolated = true } = {}) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const headers = {};
    if (isolated) {
      headers["Cross-Origin-Opener-Policy"] = "same-origin";
      headers["Cross-Origin-Embedder-Policy"] = "require-corp";
    }
    if (pages[url.pathname] !== undefined) {
      res.writeHead(200, { ...headers, "Content-Type": "text/html" });
      res.end(pages[url.pathname]);
      return;
    }
    const prefix = Object.keys(routes).sort((a, b) => b.length - a.length).find((p) => url.pathname.startsWith(p));
    if (!prefix) {
      res.writeHead(404, headers).end();
      return;
    }
    const root = path.resolve(routes[prefix]);
    const file = path.resolve(root, decodeURIComponent(url.pathname.slice(prefix.length)));
    let stat;
    try {
      stat = file.startsWith(root + path.sep) ? statSync(file) : null;
    } catch {
      stat = null;
    }
    if (!stat || !stat.isFile()) {
      res.writeHead(404, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream",
      "Content-Length": stat.size });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, baseUrl: `http://127.0.0.1:${server.address().port}` };
}

export async function stopStatic(server) {
  server.closeAllConnections?.();
  await new Promise((done) => server.close(done));
}
