"""paddle_pfc.interop.onnx_reader: an ONNX graph laid out as torch's exporter writes arcface_torch's
MobileFaceNet (BatchNorm folded into the convolutions, PRelu, residual Adds, Reshape, MatMul, a final
BatchNormalization), built here from the torch fixture's tensors with the folding done in float64.
onnxruntime running that graph must give torch's embeddings (so the graph is right), and the
converted model must give them too. Graphs it cannot map are refused naming what was found."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from paddle_pfc.interop import ConversionError, convert  # noqa: E402
from paddle_pfc.interop.torch_reader import read_torch_state  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class _GraphWriter:
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

    def mobilefacenet(self) -> onnx.ModelProto:
        x = self.conv_bn("data", "layers.0", 2, True)
        x = self.conv_bn(x, "layers.1", 1, True)
        for index, blocks in ((2, 0), (3, 4), (4, 0), (5, 6), (6, 0), (7, 2)):
            if blocks == 0:
                x = self.depthwise(x, f"layers.{index}", 2, False)
            for j in range(blocks):
                x = self.depthwise(x, f"layers.{index}.layers.{j}", 1, True)
        x = self.conv_bn(x, "conv_sep", 1, True)
        x = self.conv_bn(x, "features.layers.0", 1, False)
        x = self._node("Reshape", [x, self._const(np.array([-1, 512]), np.int64)])
        x = self._node("MatMul", [x, self._const(self.t["features.layers.2.weight"].T)])
        bn = "features.layers.3"
        x = self._node("BatchNormalization", [x] + [self._const(self.t[f"{bn}.{n}"]) for n in
                                                    ("weight", "bias", "running_mean", "running_var")],
                       epsilon=1e-5)
        graph = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT,
                                                                                  ["None", 3, 112, 112])],
                                  [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["None", 128])],
                                  initializer=self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "mbf.onnx"
    model = _GraphWriter(read_torch_state(FIXTURES / "mbf128_fp16.pt")).mobilefacenet()
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def _cosine_rel(emb: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    emb, ref = emb.astype(np.float64), ref.astype(np.float64)
    cos = (emb * ref).sum(1) / (np.linalg.norm(emb, axis=1) * np.linalg.norm(ref, axis=1))
    return float(cos.min()), float(np.abs(emb - ref).max() / np.abs(ref).max())


def test_folded_graph_converts_to_torchs_embeddings(onnx_model):
    from paddle_pfc.deploy.export import EvalProgram

    images = np.load(FIXTURES / "mbf128_images.npy").astype(np.float32)
    torch_emb = np.load(FIXTURES / "mbf128_emb.npy")
    session = ort.InferenceSession(str(onnx_model), providers=["CPUExecutionProvider"])
    ort_emb = session.run(None, {"data": ((images / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy()})[0]
    cos, rel = _cosine_rel(ort_emb, torch_emb)
    assert cos >= 0.99999 and rel <= 1e-4, ("the test graph itself", cos, rel)

    converted = convert(onnx_model)
    assert (converted.backbone, converted.embedding_size, converted.input_size) == ("mobilefacenet", 128, (112, 112))
    assert converted.source["batch_norm"].startswith("49 BatchNorms folded")
    # folded BatchNorms are the identity plus the conv bias
    np.testing.assert_array_equal(converted.state["layers.0.layers.1.weight"], 1.0)
    np.testing.assert_array_equal(converted.state["layers.0.layers.1._mean"], 0.0)
    prog = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, converted.state)
    emb = prog(((images - 127.5) / 128).transpose(0, 3, 1, 2).copy())
    for ref in (ort_emb, torch_emb):
        cos, rel = _cosine_rel(emb, ref)
        assert cos >= 0.99999 and rel <= 1e-4, (cos, rel)


def test_graph_of_another_architecture_is_refused(tmp_path):
    """A transformer-like graph names the ops found; a truncated model names the file."""
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["data", "w"], ["a"]), helper.make_node("Softmax", ["a"], ["b"]),
             helper.make_node("LayerNormalization", ["b", "s", "z"], ["out"])]
    graph = helper.make_graph(nodes, "vit", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])], initializer=[w])
    path = tmp_path / "vit.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(ConversionError, match=r"vit\.onnx: found ONNX ops LayerNormalization, Softmax"):
        convert(path)


def test_truncated_onnx_is_named(onnx_model, tmp_path):
    cut = tmp_path / "cut.onnx"
    data = onnx_model.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ConversionError, match=r"cut\.onnx"):
        convert(cut)
