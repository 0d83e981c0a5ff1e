// ONNX Runtime's profile events -> time per operator type, for the benchmark scripts: the WASM
// build prints its events to the console on endProfiling (one JSON object a line, with commas),
// the native build writes them to a JSON file (an array).

function add(ops, e) {
  if (e?.cat !== "Node" || !e.name?.endsWith("_kernel_time")) return;
  const op = e.args.op_name;
  ops[op] ??= { n: 0, ms: 0 };
  ops[op].n++;
  ops[op].ms += e.dur / 1000;
}

// Console lines of ONNX Runtime Web -> {op: {n, ms}}.
export function profileByOp(lines) {
  const ops = {};
  for (const line of lines) {
    if (!line.includes("_kernel_time")) continue;
    for (const part of line.split("\n")) {
      try {
        add(ops, JSON.parse(part.trim().replace(/,$/, "")));
      } catch {
        // not an event
      }
    }
  }
  return ops;
}

// The events of a native profile file (JSON array) -> {op: {n, ms}}.
export function profileFileByOp(events) {
  const ops = {};
  for (const e of events) add(ops, e);
  return ops;
}
