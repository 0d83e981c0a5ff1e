// One thread of the tab's int8 kernel (sam3-int8.mjs): an instance of int8-*.wasm over the
// kernel's shared memory with a stack of its own, computing the rows it is given.
//   {type: "init", module, memory, stackTop} -> {ready: true}
//   {type: "gemm", args} (sam3_int8_gemm's arguments) -> {done: true}
let gemm = null;

self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") {
      const instance = await WebAssembly.instantiate(data.module, { env: { memory: data.memory } });
      instance.exports.__stack_pointer.value = data.stackTop;  // instances share the memory, not the stack
      gemm = instance.exports.sam3_int8_gemm;
      self.postMessage({ ready: true });
    } else if (data.type === "gemm") {
      gemm(...data.args);
      self.postMessage({ done: true });
    }
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
