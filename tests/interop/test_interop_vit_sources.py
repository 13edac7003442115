"""ViTs the field exported or trained elsewhere, as paddle_pfc's: an arcface_torch ViT exported to ONNX by
``torch2onnx.py`` and a PLSC ``FaceViT`` saved by PLSC convert exactly (their eval embeddings equal the
source's); a graph that is no ViT keeps its refusal, a ViT graph cut short or altered is refused naming
the place.

Fixtures (tests/interop/make_vit_source_fixtures.py, torch 2.13.0 / Paddle 3.3.1, width 32, depth 2,
8 heads, embedding 16, norms and biases randomized): ``vit_small.onnx`` + ``vit_small_onnx.npz``,
``plsc_vit_small.pdparams`` + ``plsc_vit_small.npz``.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from helpers.vit_small import DEPTH, DIM, EMBEDDING, HEADS, small_vit_layout
from paddle_pfc.interop import vit_map
from paddle_pfc.interop.common import ConversionError, SourceTensors
from paddle_pfc.interop.convert import convert, read_source
from paddle_pfc.interop.mapping import map_state
from paddle_pfc.interop.vit_graph import graph_tensors

FIXTURES = Path(__file__).resolve().parent / "fixtures"
COS, RTOL = 0.99999, 1e-4
# 2 + 2 + blocks + norm + 2 Linears + 2 BatchNorms: every parameter of the small ViT
TENSORS = 2 + 2 + DEPTH * 11 + 2 + 2 + 4 + 4


def _close(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """Cosine and the largest difference relative to the largest value of ``theirs``."""
    ours, theirs = np.asarray(ours, np.float64).ravel(), np.asarray(theirs, np.float64).ravel()
    cos = float(ours @ theirs / (np.linalg.norm(ours) * np.linalg.norm(theirs)))
    return cos, float(np.abs(ours - theirs).max() / np.abs(theirs).max())


def _embed(state: dict, images: np.ndarray) -> np.ndarray:
    """paddle_pfc's eval embeddings of uint8 HWC ``images`` (its input ``(x - 127.5) / 128``)."""
    import paddle

    from paddle_pfc.backbones.vit import VisionTransformer

    paddle.disable_static()
    net = VisionTransformer(DIM, DEPTH, HEADS, embedding_size=EMBEDDING)
    net.set_state_dict({k: v.copy() for k, v in state.items()})
    net.eval()
    x = ((images.astype(np.float32) - 127.5) / 128.0).transpose(0, 3, 1, 2).copy()
    return net(paddle.to_tensor(x)).numpy()


def _graph():
    import onnx

    return onnx.load(str(FIXTURES / "vit_small.onnx"))


def _map_graph(model, path: str = "vit.onnx") -> tuple[dict, dict]:
    named = graph_tensors(model, path)
    assert named is not None
    source = SourceTensors(path, "onnx", "paddle", named)
    return map_state(source, "small ViT", EMBEDDING, (112, 112), vit_map.FIRST_CONV, layout=small_vit_layout())


def test_onnx_export_converts_to_torchs_embeddings():
    state, ignored = _map_graph(_graph())
    assert len(state) == TENSORS and not ignored
    assert not state["mask_token"].any()  # in no eval graph
    # the exporter stored blocks.1.attn.proj.bias once (equal to block 0's): read at both places
    np.testing.assert_array_equal(state["blocks.1.attn.proj.bias"], state["blocks.0.attn.proj.bias"])
    ref = np.load(FIXTURES / "vit_small_onnx.npz")
    cos, rel = _close(_embed(state, ref["images"]), ref["eval"])
    assert cos >= COS and rel <= RTOL, (cos, rel)


def test_plsc_face_vit_converts_to_plscs_embeddings():
    source = read_source(FIXTURES / "plsc_vit_small.pdparams")
    with pytest.raises(ConversionError, match=re.escape("a ViT of width 32 and depth 2")):
        vit_map.detect(source.tensors, "paddle", source.path)  # read as a ViT: only its size is not ours
    state, ignored = map_state(source, "small ViT", EMBEDDING, (112, 112), vit_map.FIRST_CONV,
                               layout=small_vit_layout())
    assert len(state) == TENSORS and set(ignored) == {"head.weight"}  # PartialFC's class centers
    ref = np.load(FIXTURES / "plsc_vit_small.npz")
    cos, rel = _close(_embed(state, ref["images"]), ref["eval"])
    assert cos >= COS and rel <= RTOL, (cos, rel)


def test_small_graph_reaches_the_size_check():
    """Through ``convert``: the graph read as a ViT, refused only because paddle_pfc has no ViT of its size."""
    with pytest.raises(ConversionError, match=re.escape("a ViT of width 32 and depth 2; paddle_pfc has vit_t")):
        convert(FIXTURES / "vit_small.onnx")


def _node(model, name_part: str):
    return next(n for n in model.graph.node if name_part in n.name)


def _cut_after_blocks(model) -> None:
    """The graph ends at the last block's output (norm and feature head removed)."""
    import onnx

    last = _node(model, "/blocks.1/Add_1")
    keep = list(model.graph.node)[:list(model.graph.node).index(last) + 1]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    del model.graph.output[:]
    model.graph.output.append(onnx.helper.make_tensor_value_info(last.output[0], onnx.TensorProto.FLOAT, None))


def _set_constant(model, node_part: str, index: int, value: float) -> None:
    """The Constant feeding input ``index`` of the node named ``node_part`` set to ``value``."""
    from onnx import numpy_helper

    name = _node(model, node_part).input[index]
    constant = next(n for n in model.graph.node if n.op_type == "Constant" and n.output[0] == name)
    constant.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(value, np.float32)))


def _extra_tensor(model) -> None:
    from onnx import numpy_helper

    model.graph.initializer.append(numpy_helper.from_array(np.ones((4, 4), np.float32), "stray"))


@pytest.mark.parametrize("alter,words", [
    (_cut_after_blocks, "at norm expected ReduceMean, found nothing (the graph ends)"),
    (lambda m: _set_constant(m, "/blocks.0/attn/Mul", 1, 0.25), "at blocks.0.attn 8 heads and scale [0.25]"),
    (lambda m: _set_constant(m, "/blocks.1/mlp/act/Clip", 2, 3.0), "Clip to [0.0, 3.0]; paddle_pfc's MLP has ReLU6"),
    (lambda m: _set_constant(m, "/norm/Add", 1, 1e-6), "at norm LayerNorm epsilon 1e-06"),
    (_extra_tensor, "stored tensors read by no layer of the ViT: stray [4, 4]"),
])
def test_altered_vit_graph_is_refused_naming_the_place(alter, words):
    model = _graph()
    alter(model)
    with pytest.raises(ConversionError, match=re.escape(words)):
        _map_graph(model)


def test_graph_that_is_no_vit_keeps_its_refusal(tmp_path):
    """A Conv whose output is no token stream (here it goes to a Softmax): not a ViT, refused as before."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["data", "w"], ["a"]),
                               helper.make_node("Softmax", ["a"], ["b"])], "g",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    assert graph_tensors(model, "cnn.onnx") is None
    onnx.save(model, tmp_path / "cnn.onnx")
    with pytest.raises(ConversionError, match=r"cnn\.onnx: found ONNX ops Softmax, which no supported face "
                                              r"backbone has \(a ViT or another architecture\?\)"):
        convert(tmp_path / "cnn.onnx")
