// The browser's graph rewrite (docs/browser.md, "Which device, which build, which graph") in a
// worker of its own, started by sam3-browser.mjs for the files a load must rewrite and
// terminated before any session is made: a WebAssembly memory never shrinks and the rewrite
// grows it to twice the largest file it changes, so ending the worker is what gives that memory
// back (the first load's peak, docs/browser.md "Memory").
//
// Messages, in order, per file: {type: "begin", file, size}, {type: "chunk", at, bytes} (the
// file's bytes, transferred), {type: "rewrite", options, returnUnchanged} -> {stats, changed,
// bytes} (the rewritten graph, or the file itself with returnUnchanged when nothing changed,
// else null) or {error: {code, message}}.
import createSam3Core from "./sam3.mjs";

let core = null;
let input = 0;  // the file's bytes in the core's memory, until handed to the rewrite
let size = 0;
let failure = null;  // the first error of this file, answered at "rewrite"

function call(name, ...args) {
  const allocated = args.map((a) => {
    if (typeof a !== "string") return a;
    const n = core.lengthBytesUTF8(a) + 1;
    const p = core._malloc(n);
    core.stringToUTF8(a, p, n);
    return p;
  });
  try {
    return JSON.parse(core.UTF8ToString(core[`_${name}`](...allocated)));
  } finally {
    args.forEach((a, i) => typeof a === "string" && core._free(allocated[i]));
  }
}

async function handle(m) {
  core ??= await createSam3Core();
  if (m.type === "begin") {
    core._sam3_release_rewritten();
    if (input) core._free(input);
    failure = null;
    size = m.size;
    input = core._malloc(Math.max(size, 1));
    if (!input) failure = { code: "out_of_memory", message: `${m.file}: not enough memory in the tab to prepare it (${size} bytes)` };
    return null;
  }
  if (m.type === "chunk") {
    if (input && !failure) core.HEAPU8.set(new Uint8Array(m.bytes), input + m.at);
    return null;
  }
  // "rewrite": the core owns the input from here (owns_input), and answers it as the graph
  // itself when nothing changed.
  if (failure) return { error: failure };
  const owned = input;
  input = 0;
  const answer = call("sam3_rewrite_for_browser", owned, size, JSON.stringify({ ...m.options, owns_input: true }));
  if (answer.error) return { error: answer.error };
  const { ptr, bytes, ...stats } = answer;
  const changed = stats.fused + stats.chunked + stats.matmuls + stats.convs + stats.linears > 0;
  const out = changed || m.returnUnchanged ? core.HEAPU8.slice(ptr, ptr + bytes) : null;
  core._sam3_release_rewritten();
  return { stats, changed, bytes: out };
}

let queue = Promise.resolve();
self.onmessage = ({ data }) => {
  queue = queue.then(() => handle(data)).then((reply) => {
    if (reply) self.postMessage(reply, reply.bytes ? [reply.bytes.buffer] : []);
  }, (e) => {
    const error = { code: "runtime", message: `the rewrite worker failed: ${e?.message ?? e}` };
    if (data.type === "rewrite") self.postMessage({ error });
    else failure ??= error;  // answered at this file's "rewrite"
  });
};
