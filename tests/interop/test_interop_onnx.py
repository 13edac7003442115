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

from helpers.interop_onnx_graphs import GraphWriter, fc_head  # noqa: E402
from paddle_pfc.interop.common import ConversionError  # noqa: E402
from paddle_pfc.interop.convert import convert  # noqa: E402
from paddle_pfc.interop.torch_reader import read_torch_state  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "mbf.onnx"
    model = GraphWriter(read_torch_state(FIXTURES / "mbf128_fp16.pt")).mobilefacenet()
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


def test_in_graph_normalization_and_another_epsilon(tmp_path):
    """mxnet-converted style: Sub 127.5 / Mul 1/127.5 inside the graph (fed raw pixels) and a
    BatchNorm with epsilon 2e-5; the converted model takes (x - 127.5) / 128 and gives torch's
    embeddings. Another center than 127.5 is refused."""
    from paddle_pfc.deploy.export import EvalProgram

    tensors = read_torch_state(FIXTURES / "mbf128_fp16.pt")
    path = tmp_path / "mx.onnx"
    onnx.save(GraphWriter(tensors).mobilefacenet(mxnet_style=True), path)
    images = np.load(FIXTURES / "mbf128_images.npy").astype(np.float32)
    torch_emb = np.load(FIXTURES / "mbf128_emb.npy")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ort_emb = session.run(None, {"data": images.transpose(0, 3, 1, 2).copy()})[0]
    assert _cosine_rel(ort_emb, torch_emb)[0] >= 0.99999
    converted = convert(path)
    assert "inside the model" in converted.source["batch_norm"]
    # epsilon 2e-5 -> paddle_pfc's 1e-5: the stored variance (1e-5 lower) moved back up
    np.testing.assert_allclose(converted.state["features.layers.3._variance"],
                               tensors["features.layers.3.running_var"].astype(np.float64), rtol=0, atol=2e-7)
    prog = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, converted.state)
    cos, rel = _cosine_rel(prog(((images - 127.5) / 128).transpose(0, 3, 1, 2).copy()), torch_emb)
    assert cos >= 0.99999 and rel <= 1e-4, (cos, rel)

    model = onnx.load(path)
    center = next(i for i in model.graph.initializer if i.name == model.graph.node[0].input[1])
    center.CopyFrom(numpy_helper.from_array(np.array(100.0, np.float32), center.name))
    onnx.save(model, tmp_path / "off_center.onnx")
    with pytest.raises(ConversionError, match=r"off_center\.onnx: the graph subtracts \[100\.0"):
        convert(tmp_path / "off_center.onnx")


def test_graph_of_another_architecture_is_refused(tmp_path):
    """A transformer-like graph names the ops found; a truncated model names the file."""
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["data", "w"], ["a"]), helper.make_node("Softmax", ["a"], ["b"]),
             helper.make_node("LayerNormalization", ["b", "s", "z"], ["out"])]
    graph = helper.make_graph(nodes, "vit", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])], initializer=[w])
    path = tmp_path / "vit.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(ConversionError, match=r"vit\.onnx: found ONNX ops LayerNormalization, Softmax.*a ViT"):
        convert(path)


def test_quantized_graph_is_named_as_such(tmp_path):
    """An int8 export (QDQ: DequantizeLinear before each float op) is refused as a quantized model."""
    inits = [numpy_helper.from_array(np.ones((4, 4), np.int8), "wq"), numpy_helper.from_array(np.float32(0.1), "s"),
             numpy_helper.from_array(np.int8(0), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["w"]),
             helper.make_node("MatMul", ["data", "w"], ["out"])]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])], initializer=inits)
    path = tmp_path / "sface_int8.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(ConversionError, match=r"sface_int8\.onnx: found ONNX ops DequantizeLinear.*a quantized model"):
        convert(path)


def test_truncated_onnx_is_named(onnx_model, tmp_path):
    cut = tmp_path / "cut.onnx"
    data = onnx_model.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ConversionError, match=r"cut\.onnx"):
        convert(cut)


def test_insightface_fc_head_converts_to_onnxruntimes_embeddings(tmp_path):
    """insightface w600k_mbf's head (the buffalo_s / buffalo_sc recognition model: 1x1 conv 512->64 +
    PReLU, Flatten, Gemm 3136->E with bias, BatchNorm1d) on arcface_torch's MobileFaceNet body, laid
    out as its released file (BatchNorms folded, dynamic batch): mobilefacenet_fc, embedding as
    onnxruntime runs the graph; every head tensor where the mapping puts it."""
    from paddle_pfc.deploy.export import EvalProgram

    tensors = fc_head(read_torch_state(FIXTURES / "mbf128_fp16.pt"), embedding_size=96)
    path = tmp_path / "w600k_mbf_like.onnx"
    model = GraphWriter(tensors).mobilefacenet(embedding_size=96, head="fc")
    onnx.checker.check_model(model)
    onnx.save(model, path)
    images = np.load(FIXTURES / "mbf128_images.npy").astype(np.float32)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ort_emb = session.run(None, {"data": ((images - 127.5) / 127.5).transpose(0, 3, 1, 2).copy()})[0]

    converted = convert(path)
    assert (converted.backbone, converted.embedding_size, converted.input_size) == ("mobilefacenet_fc", 96, (112, 112))
    np.testing.assert_array_equal(converted.state["features.layers.2.bias"], tensors["features.layers.2.bias"])
    np.testing.assert_array_equal(converted.state["features.layers.2.weight"], tensors["features.layers.2.weight"].T)
    np.testing.assert_array_equal(converted.state["features.layers.0.layers.2._weight"],
                                  tensors["features.layers.0.layers.2.weight"])
    prog = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, converted.state)
    cos, rel = _cosine_rel(prog(((images - 127.5) / 128).transpose(0, 3, 1, 2).copy()), ort_emb)
    assert cos >= 0.99999 and rel <= 1e-4, (cos, rel)
    assert convert(path, backbone="w600k_mbf").backbone == "mobilefacenet_fc"
    with pytest.raises(ConversionError, match=r"holds a mobilefacenet_fc backbone, but --backbone iresnet50 was given"):
        convert(path, backbone="iresnet50")


def test_unsupported_mobilefacenet_head_is_named(tmp_path):
    """A MobileFaceNet head that is neither GDC nor insightface's fc head (here: the fc head reducing
    to 32 channels) is refused naming its layers and the supported heads."""
    tensors = fc_head(read_torch_state(FIXTURES / "mbf128_fp16.pt"), embedding_size=64)
    for name in ("features.layers.0.layers.0.weight", "features.layers.0.layers.1.weight",
                 "features.layers.0.layers.1.bias", "features.layers.0.layers.1.running_mean",
                 "features.layers.0.layers.1.running_var", "features.layers.0.layers.2.weight"):
        tensors[name] = tensors[name][:32]
    tensors["features.layers.2.weight"] = tensors["features.layers.2.weight"][:, :32 * 49]
    path = tmp_path / "other_head.onnx"
    onnx.save(GraphWriter(tensors).mobilefacenet(embedding_size=64, head="fc"), path)
    with pytest.raises(ConversionError, match=r"other_head\.onnx: a MobileFaceNet whose head is Conv1x1 512→32 \+ "
                                              r"PReLU \+ Flatten \+ Gemm 1568→64 \+ BN1d; supported heads: GDC"):
        convert(path)


def test_bare_released_onnx_is_fed_the_fields_normalization(onnx_model):
    """A .onnx of the field given alone (no export.json beside it), as validate / infer / eval_ijb
    take insightface's released files: its input is normalized (x - 127.5) / 127.5, as insightface
    feeds it, and said once as a warning."""
    from paddle_pfc.deploy.predictor import EmbeddingModel

    images = np.load(FIXTURES / "mbf128_images.npy").astype(np.float32)
    session = ort.InferenceSession(str(onnx_model), providers=["CPUExecutionProvider"])
    want = session.run(None, {"data": ((images - 127.5) / 127.5).transpose(0, 3, 1, 2).copy()})[0]
    with pytest.warns(UserWarning, match=r"mbf\.onnx: no export\.json beside it: assuming RGB input normalized "
                                         r"\(x - 127\.5\) / 127\.5"):
        model = EmbeddingModel(onnx_model)
    assert (model._mean, model._std) == (127.5, 127.5)
    got = model(((images - model._mean) / model._std).transpose(0, 3, 1, 2).copy())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
