// One thread of the tab's own kernels (sam3-int8.mjs): an instance of int8-*.wasm (the int8
// product and attention) over the kernels' shared memory with a stack of its own, computing the
// rows it is given.
//   {type: "init", module, memory, stackTop} -> {ready: true}
//   {type: "call", fn (an export: sam3_int8_gemm, sam3_attention), args} -> {done: true}
let exports = null;

self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") {
      const instance = await WebAssembly.instantiate(data.module, { env: { memory: data.memory } });
      instance.exports.__stack_pointer.value = data.stackTop;  // instances share the memory, not the stack
      exports = instance.exports;
      self.postMessage({ ready: true });
    } else if (data.type === "call") {
      exports[data.fn](...data.args);
      self.postMessage({ done: true });
    }
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
