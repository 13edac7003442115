"""ONNX graphs laid out as torch's exporter (TorchScript, opset 11, eval mode) writes arcface_torch's
MobileFaceNet: BatchNorm folded into each convolution (in float64 here), PRelu with ``[C, 1, 1]``
slopes, residual Adds, Reshape, MatMul, a final BatchNormalization; value and initializer names
carry no layer names. Input: arcface_torch-named tensors (torch conventions)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphWriter:
    def __init__(self, tensors: dict[str, np.ndarray]) -> None:
        self.t = {k: v.astype(np.float64) for k, v in tensors.items()}
        self.nodes, self.inits, self.count = [], [], 0
        self.channels = {"data": 3}

    def _const(self, value: np.ndarray, dtype=np.float32) -> str:
        self.count += 1
        name = f"c{self.count}"  # names say nothing about the layer: mapping is by topology
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def _node(self, op: str, inputs: list[str], **attrs) -> str:
        self.count += 1
        out = f"v{self.count}"
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv_bn(self, x: str, prefix: str, stride: int, prelu: bool) -> str:
        """torch's eval export of conv-BN(-PReLU): the BN folded into the conv."""
        w = self.t[f"{prefix}.layers.0.weight"]
        bn = f"{prefix}.layers.1"
        k = w.shape[2]
        groups = self.channels[x] // w.shape[1]
        scale = self.t[f"{bn}.weight"] / np.sqrt(self.t[f"{bn}.running_var"] + 1e-5)
        folded_w = w * scale.reshape(-1, 1, 1, 1)
        folded_b = self.t[f"{bn}.bias"] - self.t[f"{bn}.running_mean"] * scale
        pad = (k - 1) // 2 if k == 3 else 0
        y = self._node("Conv", [x, self._const(folded_w), self._const(folded_b)], group=groups,
                       kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)
        if prelu:
            y = self._node("PRelu", [y, self._const(self.t[f"{prefix}.layers.2.weight"].reshape(-1, 1, 1))])
        self.channels[y] = w.shape[0]
        return y

    def depthwise(self, x: str, prefix: str, stride: int, residual: bool) -> str:
        y = self.conv_bn(x, f"{prefix}.layers.0", 1, True)
        y = self.conv_bn(y, f"{prefix}.layers.1", stride, True)
        y = self.conv_bn(y, f"{prefix}.layers.2", 1, False)
        if not residual:
            return y
        out = self._node("Add", [y, x])
        self.channels[out] = self.channels[x]
        return out

    def mobilefacenet(self, embedding_size: int = 128, input_size: int = 112, mxnet_style: bool = False,
                      head: str = "gdc") -> onnx.ModelProto:
        """``mxnet_style``: as mxnet-converted models, the graph takes raw pixels and normalizes them
        itself (``Sub`` 127.5, ``Mul`` 1/127.5), and its last BatchNorm has epsilon 2e-5 (the variance
        stored 1e-5 lower, so the network computes the same). ``head="fc"``: insightface w600k_mbf's
        head (1x1 conv 512->64 + PReLU, Flatten, Gemm with bias, BatchNormalization), as its
        released file lays it out; the tensors then hold that head's (see :func:`fc_head`)."""
        x = "data"
        if mxnet_style:
            x = self._node("Sub", [x, self._const(np.array(127.5))])
            x = self._node("Mul", [x, self._const(np.array(1 / 127.5))])
            self.channels[x] = 3
        x = self.conv_bn(x, "layers.0", 2, True)
        x = self.conv_bn(x, "layers.1", 1, True)
        for index, blocks in ((2, 0), (3, 4), (4, 0), (5, 6), (6, 0), (7, 2)):
            if blocks == 0:
                x = self.depthwise(x, f"layers.{index}", 2, False)
            for j in range(blocks):
                x = self.depthwise(x, f"layers.{index}.layers.{j}", 1, True)
        x = self.conv_bn(x, "conv_sep", 1, True)
        if head == "fc":
            x = self.conv_bn(x, "features.layers.0", 1, True)
            x = self._node("Flatten", [x], axis=1)
            x = self._node("Gemm", [x, self._const(self.t["features.layers.2.weight"]),
                                    self._const(self.t["features.layers.2.bias"])], transB=1)
        else:
            x = self.conv_bn(x, "features.layers.0", 1, False)
            x = self._node("Reshape", [x, self._const(np.array([-1, 512]), np.int64)])
            x = self._node("MatMul", [x, self._const(self.t["features.layers.2.weight"].T)])
        bn = "features.layers.3"
        eps = 2e-5 if mxnet_style else 1e-5
        stats = [self.t[f"{bn}.{n}"] for n in ("weight", "bias", "running_mean")]
        stats.append(self.t[f"{bn}.running_var"] + 1e-5 - eps)
        x = self._node("BatchNormalization", [x] + [self._const(v) for v in stats], epsilon=eps)
        graph = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT,
                                                                                  ["None", 3, input_size, input_size])],
                                  [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["None", embedding_size])],
                                  initializer=self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def fc_head(tensors: dict[str, np.ndarray], embedding_size: int, cells: int = 49,
            seed: int = 0) -> dict[str, np.ndarray]:
    """``tensors`` (an arcface_torch MobileFaceNet) with its GDC head replaced by random tensors of
    insightface w600k_mbf's head, under torch's names: ConvBlock(512 -> 64) at ``features.layers.0``,
    Linear(64 * cells -> embedding, bias) at ``features.layers.2``, BatchNorm1d at ``features.layers.3``."""
    rng = np.random.default_rng(seed)
    out = {k: v for k, v in tensors.items() if not k.startswith("features.")}

    def bn(prefix: str, c: int) -> None:
        out.update({f"{prefix}.weight": rng.uniform(0.5, 1.5, c), f"{prefix}.bias": rng.normal(0, 0.1, c),
                    f"{prefix}.running_mean": rng.normal(0, 0.2, c), f"{prefix}.running_var": rng.uniform(0.5, 2, c)})

    out["features.layers.0.layers.0.weight"] = rng.normal(0, np.sqrt(2 / 512), (64, 512, 1, 1))
    bn("features.layers.0.layers.1", 64)
    out["features.layers.0.layers.2.weight"] = rng.uniform(0.1, 0.4, 64)
    out["features.layers.2.weight"] = rng.normal(0, np.sqrt(1 / (64 * cells)), (embedding_size, 64 * cells))
    out["features.layers.2.bias"] = rng.normal(0, 0.1, embedding_size)
    bn("features.layers.3", embedding_size)
    return {k: np.asarray(v, np.float32) for k, v in out.items()}


def torch_named(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A paddle_pfc mobilefacenet state under arcface_torch's names and conventions."""
    out = {}
    for key, value in state.items():
        if key.endswith("._mean"):
            key = key[: -len("._mean")] + ".running_mean"
        elif key.endswith("._variance"):
            key = key[: -len("._variance")] + ".running_var"
        elif key.endswith("._weight"):
            key = key[: -len("._weight")] + ".weight"
        elif key == "features.layers.2.weight":
            value = value.T
        out[key] = value
    return out
