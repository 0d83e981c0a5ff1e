"""A small ONNX graph builder shared by the model generators (python3-onnx only)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

OPSET = 17


class Graph:
    """Nodes and initializers; every op gets a unique output name."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0
        self.domains = set()  # custom op domains used (com.microsoft)

    def const(self, value, dtype=np.float32):
        self.count += 1
        name = f"c{self.count}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def ints(self, values):
        return self.const(np.array(values, np.int64), np.int64)

    def op(self, op_type, inputs, outputs=1, domain="", **attrs):
        names = []
        for _ in range(outputs):
            self.count += 1
            names.append(f"t{self.count}")
        self.nodes.append(helper.make_node(op_type, inputs, names, domain=domain or None, **attrs))
        if domain:
            self.domains.add(domain)
        return names[0] if outputs == 1 else names

    def name(self, tensor, name):
        self.nodes.append(helper.make_node("Identity", [tensor], [name]))
        return name

    def quantized_matmul(self, x, weight_u8, weight_scale):
        """x @ ((weight_u8 - 128) * weight_scale) as ONNX Runtime's quantize_dynamic writes it:
        DynamicQuantizeLinear -> MatMulInteger (uint8 weight, per-tensor zero point) -> Cast -> Mul."""
        xq, xs, xzp = self.op("DynamicQuantizeLinear", [x], outputs=3)
        acc = self.op("MatMulInteger", [xq, self.const(weight_u8, np.uint8), xzp, self.const(np.uint8(128), np.uint8)])
        scale = self.op("Mul", [xs, self.const(np.float32(weight_scale))])
        return self.op("Mul", [self.op("Cast", [acc], to=TensorProto.FLOAT), scale])

    def matmul_4bit(self, x, weight, block=16):
        """x[..., K] @ weight[K, N] as ONNX Runtime's 4-bit weight-only quantization writes it (the
        q4f16 release files): com.microsoft MatMulNBits, two 4-bit values per byte (low nibble
        first), one scale per block of K, zero point 8."""
        k, n = weight.shape
        blocks = (k + block - 1) // block
        scale = float(np.abs(weight).max() / 7.0) or 1.0
        q = np.full((n, blocks * block), 8, np.uint8)
        q[:, :k] = np.clip(np.round(weight.T / scale) + 8, 0, 15).astype(np.uint8)
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(n, blocks, block // 2)
        scales = np.full((n * blocks,), scale, np.float32)
        return self.op("MatMulNBits", [x, self.const(packed, np.uint8), self.const(scales)], domain="com.microsoft",
                       K=k, N=n, bits=4, block_size=block)

    def save(self, path, inputs, outputs, name, producer, check=True, external_data=False, data_suffix=".data"):
        """external_data: the weights in a "<file><data_suffix>" sidecar, as large exports are stored
        (".data" by most exporters, "_data" in the onnx-community repositories)."""
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in sorted(self.domains)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name=producer)
        model.ir_version = 8
        if check and not self.domains:  # the checker knows only the standard ops
            onnx.checker.check_model(model)
        if external_data:
            # Weights (float and uint8) go to the sidecar; int64 shape and axis constants stay
            # inline, as exporters keep them (ONNX Runtime's shape inference needs them).
            location = os.path.basename(path) + data_suffix
            if os.path.exists(path + data_suffix):
                os.remove(path + data_suffix)  # written by appending
            for t in model.graph.initializer:
                if t.data_type in (TensorProto.FLOAT, TensorProto.UINT8):
                    external_data_helper.set_external_data(t, location)
            external_data_helper.write_external_data_tensors(model, os.path.dirname(path) or ".")
        onnx.save(model, path)
        return os.path.getsize(path)


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)
