"""ONNX face-recognition models (arcface_torch ``torch2onnx.py`` exports: opset 11, input ``data``,
dynamic batch; insightface's released recognition models) as paddle_pfc backbone states.

The graph is read with the ``onnx`` package and mapped onto paddle_pfc's layers BY TOPOLOGY, never by
tensor or node names (exporters rename freely): from the input, the data flow is followed node by
node; where it forks, both branches are followed to the ``Add`` that joins them (a residual block:
the longer branch is the main path, the other the shortcut, empty for an identity). The result is
the sequence of weighted layers (Conv, BatchNormalization, PRelu, Gemm / MatMul + bias), main path
before shortcut, which is aligned with the backbone's own layers in order, each shape checked.

BatchNorm folded into convolutions (what torch's exporter does in eval mode): the conv keeps its
weights and paddle_pfc's BatchNorm after it is set to the identity plus the conv's bias (scale 1,
mean 0, variance 1 - epsilon, shift = bias), so the network computes exactly the folded conv and
can still be fine-tuned (its BatchNorm then starts from the identity). A BatchNorm whose epsilon
differs from paddle_pfc's 1e-5 (mxnet-made models use 2e-5) is converted exactly by moving the
difference into the variance. A leading ``Sub`` / ``Mul`` / ``Div`` normalization inside the graph
(mxnet-converted models) must subtract 127.5; its scale is folded into the first convolution, as
the ``(x - 127.5) / 127.5`` of graphs without one is.

Graphs this walk cannot follow (the ViTs: LayerNorms, attention) are first offered to the interop
modules' ``graph_tensors`` (:func:`paddle_pfc.interop.architectures.graph_source`), which read them by
position as named tensors for the checked mapping of ``.pt`` sources.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from paddle_pfc.interop.common import INPUT_SCALE, ConversionError, SourceTensors
from paddle_pfc.interop.onnx_external import load_external_data

__all__ = ["read_onnx", "map_onnx", "OnnxMapped", "GraphLayers", "describe_layers"]

_WEIGHTED = ("Conv", "BatchNormalization", "PRelu", "Gemm", "MatMul")
_PASS = ("Flatten", "Reshape", "Identity", "Dropout", "Squeeze", "Unsqueeze", "Cast")
_SHAPE_ONLY = ("Shape", "Gather", "Concat", "Constant", "ConstantOfShape", "Slice")
_LEADING = ("Sub", "Mul", "Div")
_SUPPORTED_OPS = set(_WEIGHTED + _PASS + _SHAPE_ONLY + _LEADING + ("Add",))
#: Ops of an integer-quantized graph (onnxruntime's static / dynamic quantization, QDQ or QOperator).
_QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                  "QLinearMatMul", "QLinearAdd", "ConvInteger", "MatMulInteger"}
BN_EPSILON = 1e-5


@dataclass
class OnnxMapped:
    backbone: str
    embedding_size: int
    input_size: tuple[int, int]
    state: dict[str, np.ndarray]
    note: str


def read_onnx(path: str | os.PathLike) -> SourceTensors:
    """The ONNX model at ``path`` (held in ``tensors["__graph__"]`` for :func:`map_onnx`)."""
    path = os.fspath(path)
    try:
        import onnx
    except ImportError as error:
        raise ConversionError(f"{path}: reading ONNX models needs the onnx package "
                              "(pip install 'paddle_pfc[onnx]')") from error
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as error:  # protobuf raises assorted errors for a damaged file
        raise ConversionError(f"{path}: not a readable ONNX model ({type(error).__name__}: {error}); "
                              "truncated or corrupt?") from error
    load_external_data(model, path)
    if not model.graph.node:
        raise ConversionError(f"{path}: an ONNX file without a graph (truncated or not a model)")
    return SourceTensors(path, "onnx", "onnx", {"__graph__": model})


def _to_array(tensor: Any, path: str) -> np.ndarray:
    """``tensor`` as an array; dims that disagree with its data are an error naming it."""
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError) as error:
        raise ConversionError(f"{path} (tensor {tensor.name!r}): dims {list(tensor.dims)} do not match its "
                              f"data ({error})") from None


class _Graph:
    def __init__(self, model: Any, path: str) -> None:
        self.path = path
        graph = model.graph
        self.consts: dict[str, np.ndarray] = {t.name: _to_array(t, path) for t in graph.initializer}
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.name == "value":
                        self.consts[node.output[0]] = _to_array(attr.t, path)
        unsupported = sorted({n.op_type for n in graph.node} - _SUPPORTED_OPS)
        if unsupported:
            guess = ("a quantized model: convert its float32 original" if _QUANTIZED_OPS & set(unsupported)
                     else "a ViT or another architecture?")
            raise ConversionError(f"{path}: found ONNX ops {', '.join(unsupported)}, which no supported "
                                  f"face backbone has ({guess}); supported: IResNet "
                                  "and MobileFaceNet graphs (Conv, BatchNormalization, PRelu, Add, Gemm/MatMul), "
                                  "arcface_torch ViT graphs")
        inputs = [i for i in graph.input if i.name not in self.consts]
        if len(inputs) != 1:
            raise ConversionError(f"{path}: {len(inputs)} graph inputs, expected one image input")
        self.input = inputs[0]
        self.outputs = {o.name for o in graph.output}
        self.consumers: dict[str, list] = {}
        for node in graph.node:
            if node.op_type in _SHAPE_ONLY:
                continue
            for name in node.input[:1] if node.op_type in _PASS else node.input:
                if name and name not in self.consts:
                    self.consumers.setdefault(name, []).append(node)

    def const(self, node: Any, index: int) -> np.ndarray | None:
        if len(node.input) <= index or not node.input[index]:
            return None
        name = node.input[index]
        if name not in self.consts:
            raise ConversionError(f"{self.path}: {node.op_type} node {node.name or node.output[0]} takes a "
                                  f"computed {['input', 'weight', 'bias', 'mean', 'variance'][min(index, 4)]}, "
                                  "not a stored tensor")
        return np.asarray(self.consts[name])

    def is_join(self, node: Any) -> bool:
        return node.op_type == "Add" and all(n not in self.consts for n in node.input)


def _attrs(node: Any) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _item(graph: _Graph, node: Any, items: list) -> None:
    """Append ``node``'s weighted layer to ``items`` (or attach a bias; pass shape ops)."""
    op, attrs = node.op_type, _attrs(node)
    if op == "Add":  # a bias added to the previous layer
        bias = graph.const(node, 1) if node.input[1] in graph.consts else graph.const(node, 0)
        if not items or items[-1]["op"] not in ("linear", "conv") or items[-1]["b"] is not None:
            raise ConversionError(f"{graph.path}: a constant Add that is no layer's bias")
        items[-1]["b"] = bias.reshape(-1)
    elif op in _LEADING:
        items.append(_input_normalization(graph, node, items))
    elif op in ("Conv", "BatchNormalization", "PRelu", "Gemm", "MatMul"):
        items.append(_weighted_layer(graph, node, attrs))
    # _PASS ops change only the shape


def _weighted_layer(graph: _Graph, node: Any, attrs: dict) -> dict:
    """The item of a Conv, BatchNormalization, PRelu, Gemm or MatMul node."""
    op = node.op_type
    if op == "Conv":
        if any(d != 1 for d in attrs.get("dilations", [1])):
            raise ConversionError(f"{graph.path}: a dilated Conv; paddle_pfc's backbones have none")
        return {"op": "conv", "w": graph.const(node, 1), "b": graph.const(node, 2), "group": int(attrs.get("group", 1))}
    if op == "BatchNormalization":
        return {"op": "bn", "scale": graph.const(node, 1), "b": graph.const(node, 2), "mean": graph.const(node, 3),
                "var": graph.const(node, 4), "eps": float(attrs.get("epsilon", 1e-5))}
    if op == "PRelu":
        return {"op": "prelu", "slope": graph.const(node, 1)}
    if op == "Gemm":
        if attrs.get("transA", 0) or float(attrs.get("alpha", 1.0)) != 1.0 or float(attrs.get("beta", 1.0)) != 1.0:
            raise ConversionError(f"{graph.path}: a Gemm with transA/alpha/beta; expected a plain Linear")
        w = graph.const(node, 1)
        return {"op": "linear", "w": w.T if attrs.get("transB", 0) else w, "b": graph.const(node, 2)}
    return {"op": "linear", "w": graph.const(node, 1), "b": None}  # MatMul


def _input_normalization(graph: _Graph, node: Any, items: list) -> dict:
    """The item of a constant Sub, Mul or Div ahead of the first convolution (the input normalization)."""
    op = node.op_type
    if any(i["op"] != "norm" for i in items):
        raise ConversionError(f"{graph.path}: a {op} inside the network; only an input normalization "
                              "before the first convolution is supported")
    value = next((graph.const(node, k) for k in (1, 0) if node.input[k] in graph.consts), None)
    if value is None:
        raise ConversionError(f"{graph.path}: a {op} of two computed values")
    return {"op": "norm", "kind": op, "value": np.asarray(value, np.float64)}


def _chain(graph: _Graph, value: str, items: list) -> tuple[list, Any]:
    """Follow the data flow from ``value``; returns (items, the join ``Add`` reached or ``None``)."""
    while True:
        consumers = graph.consumers.get(value, [])
        if not consumers:
            if value in graph.outputs:
                return items, None
            raise ConversionError(f"{graph.path}: value {value} leads nowhere (not a graph output)")
        if len(consumers) == 1:
            node = consumers[0]
            if graph.is_join(node):
                return items, node
            _item(graph, node, items)
            value = node.output[0]
            if value in graph.outputs and not graph.consumers.get(value):
                return items, None
            continue
        if len(consumers) != 2:
            raise ConversionError(f"{graph.path}: value {value} feeds {len(consumers)} nodes; a residual "
                                  "block forks in two")
        branches = []
        for node in consumers:
            if graph.is_join(node):
                branches.append(([], node))
            else:
                sub: list = []
                _item(graph, node, sub)
                branches.append(_chain(graph, node.output[0], sub))
        (a, join_a), (b, join_b) = branches
        if join_a is None or join_a is not join_b:
            raise ConversionError(f"{graph.path}: a fork at {value} whose branches do not meet in one Add")
        main, shortcut = (a, b) if len(a) >= len(b) else (b, a)
        items.append({"op": "residual", "main": main, "shortcut": shortcut})
        value = join_a.output[0]
        if value in graph.outputs and not graph.consumers.get(value):
            return items, None


def _flatten(items: list, counter: list | None = None) -> tuple[list, int]:
    """The layers in order (main path before shortcut), each tagged with its ``seg``ment: a run of
    layers with no residual fork or join between them (a Conv and a BatchNorm are a pair only
    within one segment), and the number of residual blocks."""
    counter = [0] if counter is None else counter
    out, residuals, seg = [], 0, counter[0]
    for item in items:
        if item["op"] == "residual":
            residuals += 1
            for branch in (item["main"], item["shortcut"]):
                counter[0] += 1
                sub, inner = _flatten(branch, counter)
                out += sub
                residuals += inner
            counter[0] += 1
            seg = counter[0]
        else:
            out.append(dict(item, seg=seg))
    return out, residuals


def _input_scale(graph: _Graph, norms: list, channels: int) -> tuple[np.ndarray, str]:
    """Per-input-channel factor folded into the first conv, and how the source normalizes."""
    if not norms:
        return np.full(channels, INPUT_SCALE), "(x - 127.5) / 127.5 outside the model (insightface convention)"
    shift, scale = np.zeros(channels), np.ones(channels)
    for item in norms:
        v = np.broadcast_to(item["value"].reshape(-1), (channels,)) if item["value"].size in (1, channels) \
            else None
        if v is None:
            raise ConversionError(f"{graph.path}: input {item['kind']} by a tensor of shape "
                                  f"{list(item['value'].shape)}")
        if item["kind"] == "Sub":
            if np.any(scale != 1):
                raise ConversionError(f"{graph.path}: input Sub after a Mul/Div is not supported")
            shift = shift + v
        elif item["kind"] == "Mul":
            scale = scale * v
        else:
            scale = scale / v
    if not np.allclose(shift, 127.5, rtol=0, atol=1e-3):
        raise ConversionError(f"{graph.path}: the graph subtracts {shift.tolist()} from its input; "
                              "paddle_pfc's input is centered at 127.5 (a zero-padded convolution cannot "
                              "absorb another center exactly)")
    return scale * 128.0, f"(x - 127.5) * {scale.tolist()} inside the model (removed and folded)"


def _layers(layout: dict) -> list[tuple[str, str, dict]]:
    """The backbone's layers in order: (kind, prefix, {param: (name, shape)})."""
    layers: list = []
    for name, (shape, kind) in layout.items():
        prefix, _, leaf = name.rpartition(".")
        group = {"conv": "conv", "linear": "linear", "prelu": "prelu", "bn": "bn", "mean": "bn",
                 "variance": "bn"}.get(kind)
        if group is None:  # a bias: of the layer just seen
            group = layers[-1][0]
        if not layers or layers[-1][1] != prefix:
            layers.append((group, prefix, {}))
        layers[-1][2][leaf] = (name, shape)
    return layers


def _set(state: dict, slot: tuple, value: np.ndarray, path: str, what: str) -> None:
    name, shape = slot
    value = np.asarray(value, np.float64)
    if value.size == int(np.prod(shape)) and value.ndim != len(shape) and len(shape) == 1:
        value = value.reshape(shape)
    if tuple(value.shape) != tuple(shape):
        raise ConversionError(f"{path}: {what} has shape {list(value.shape)}, paddle_pfc {name} needs "
                              f"{list(shape)}")
    state[name] = value.astype(np.float32)


class _Aligner:
    """Walks paddle_pfc's layers and the graph's weighted layers (``seq``) in step, filling ``state``."""

    def __init__(self, path: str, seq: list, backbone: str) -> None:
        self.path, self.seq, self.backbone = path, seq, backbone
        self.state: dict[str, np.ndarray] = {}
        self.i, self.folded = 0, 0
        self.pending_bias = None  # bias of the conv just read, for the BatchNorm after it

    def take(self, op: str, where: str) -> dict:
        """The next weighted layer of the graph, which must be an ``op``."""
        seq, i = self.seq, self.i
        if i >= len(seq) or seq[i]["op"] != op:
            found = seq[i]["op"] if i < len(seq) else "the end of the graph"
            raise ConversionError(f"{self.path}: at {where} paddle_pfc {self.backbone} has a {op}, the graph has "
                                  f"{found} (weighted layer {i}); not a {self.backbone}")
        self.i += 1
        return seq[i]

    def conv(self, prefix: str, params: dict, next_is_bn: bool) -> None:
        """A bias-free Conv; its bias, if any, goes to the BatchNorm after it (else must be zero)."""
        item = self.take("conv", prefix)
        _set(self.state, params["weight"], item["w"], self.path, f"Conv weight {self.i - 1}")
        self.pending_bias = item["b"]
        if not next_is_bn and self.pending_bias is not None and np.any(self.pending_bias != 0):
            raise ConversionError(f"{self.path}: the Conv for {prefix} has a bias, paddle_pfc's has none")

    def _bn_item(self, prefix: str, params: dict, after_conv: bool) -> dict:
        """The graph's BatchNorm, or an identity one when the graph folded it into the conv before."""
        seq, i = self.seq, self.i
        c = params["weight"][1][0]
        if after_conv and (i >= len(seq) or seq[i]["op"] != "bn" or seq[i]["seg"] != seq[i - 1]["seg"]):
            bias = np.zeros(c) if self.pending_bias is None else self.pending_bias.reshape(-1)
            self.folded += 1
            return {"scale": np.ones(c), "b": bias, "mean": np.zeros(c), "var": np.full(c, 1.0 - BN_EPSILON),
                    "eps": BN_EPSILON}
        item = dict(self.take("bn", prefix))
        if after_conv and self.pending_bias is not None:
            item["mean"] = np.asarray(item["mean"], np.float64) - self.pending_bias.reshape(-1)
        return item

    def bn(self, prefix: str, params: dict, after_conv: bool) -> None:
        """A BatchNorm with paddle_pfc's epsilon (the graph's conv bias moved into its mean)."""
        path = self.path
        item = self._bn_item(prefix, params, after_conv)
        var = np.asarray(item["var"], np.float64) + (item["eps"] - BN_EPSILON)
        if np.any(var <= 0):
            raise ConversionError(f"{path}: BatchNorm for {prefix} with epsilon {item['eps']:g} cannot be "
                                  f"expressed with epsilon {BN_EPSILON:g} (variance would be <= 0)")
        _set(self.state, params["weight"], item["scale"], path, f"BatchNorm scale for {prefix}")
        _set(self.state, params["bias"], item["b"], path, f"BatchNorm shift for {prefix}")
        _set(self.state, params["_mean"], item["mean"], path, f"BatchNorm mean for {prefix}")
        _set(self.state, params["_variance"], var, path, f"BatchNorm variance for {prefix}")
        self.pending_bias = None

    def prelu(self, prefix: str, params: dict) -> None:
        """A PReLU's slopes."""
        _set(self.state, params["_weight"], np.asarray(self.take("prelu", prefix)["slope"]).reshape(-1),
             self.path, f"PRelu slope for {prefix}")

    def linear(self, prefix: str, params: dict) -> None:
        """A Linear; a bias the graph has and paddle_pfc's lacks must be zero."""
        item = self.take("linear", prefix)
        _set(self.state, params["weight"], item["w"], self.path, f"Linear weight for {prefix}")
        if "bias" in params:
            bias = item["b"] if item["b"] is not None else np.zeros(params["bias"][1])
            _set(self.state, params["bias"], bias, self.path, f"Linear bias for {prefix}")
        elif item["b"] is not None and np.any(item["b"] != 0):
            raise ConversionError(f"{self.path}: the Linear for {prefix} has a bias, paddle_pfc's has none")

    def check_all_taken(self) -> None:
        """ConversionError when the graph has weighted layers after paddle_pfc's last."""
        if self.i != len(self.seq):
            raise ConversionError(f"{self.path}: {len(self.seq) - self.i} weighted layers left after paddle_pfc "
                                  f"{self.backbone}'s last ({self.seq[self.i]['op']} first); not a {self.backbone}")


def _align(graph: _Graph, seq: list, layout: dict, backbone: str) -> tuple[dict, int]:
    """State of ``backbone`` from the flattened source layers; returns (state, folded BatchNorms)."""
    layers = _layers(layout)
    aligner = _Aligner(graph.path, seq, backbone)
    for index, (kind, prefix, params) in enumerate(layers):
        if kind == "conv":
            aligner.conv(prefix, params, index + 1 < len(layers) and layers[index + 1][0] == "bn")
        elif kind == "bn":
            aligner.bn(prefix, params, index > 0 and layers[index - 1][0] == "conv")
        elif kind == "prelu":
            aligner.prelu(prefix, params)
        else:
            aligner.linear(prefix, params)
    aligner.check_all_taken()
    return aligner.state, aligner.folded


def describe_layers(items: list) -> str:
    """The weighted layers ``items`` as one line: ``Conv1x1 512→64 + PReLU + Flatten + Gemm 3136→512 + BN1d``."""
    words, spatial = [], True
    for item in items:
        if item["op"] == "conv":
            w = np.shape(item["w"])
            cin, cout, group = w[1] * item["group"], w[0], item["group"]
            kind = " depthwise" if group > 1 and group == cin == cout else (f" groups {group}" if group > 1 else "")
            words.append(f"Conv{w[2]}x{w[3]} {cin}→{cout}{kind}")
        elif item["op"] == "linear":
            words += ["Flatten"] if spatial else []
            words.append(f"Gemm {np.shape(item['w'])[0]}→{np.shape(item['w'])[1]}")
            spatial = False
        elif item["op"] == "bn":
            words.append("BN" if spatial else "BN1d")
        elif item["op"] == "prelu":
            words.append("PReLU")
        else:
            words.append("a residual block")
    return " + ".join(words) or "nothing"


@dataclass
class GraphLayers:
    """What an interop module's ``detect_graph`` reads of a graph: its top-level ``items`` (a residual
    block as one item), the flattened weighted layers ``seq``, the number of residual blocks, the
    convolutions and Linears of ``seq``, and the input's dims (0 where unknown)."""

    path: str
    items: list
    seq: list
    residuals: int
    convs: list
    linears: list
    dims: list


def _detect(graph: _Graph, items: list, seq: list, residuals: int) -> tuple[str, int, tuple[int, int]]:
    """(backbone, embedding size, input size) of the graph's layers: the first interop module of the
    backbone table (:mod:`paddle_pfc.interop.architectures`) that claims them, each part compared with ours."""
    from paddle_pfc.interop.architectures import SUPPORTED, interop_modules

    path = graph.path
    convs = [item for item in seq if item["op"] == "conv"]
    linears = [item for item in seq if item["op"] == "linear"]
    if not convs or not linears:
        raise ConversionError(f"{path}: a graph without convolutions and a final Linear; supported: "
                              "IResNet and MobileFaceNet")
    embedding = int(np.shape(linears[-1]["w"])[1])
    dims = [d.dim_value for d in graph.input.type.tensor_type.shape.dim]
    layers = GraphLayers(path, items, seq, residuals, convs, linears, dims)
    found = next((hit for hit in (getattr(module, "detect_graph", lambda _: None)(layers)
                                  for module in interop_modules()) if hit is not None), None)
    if found is None:
        raise ConversionError(f"{path}: a graph of {residuals} residual blocks and {len(convs)} convolutions "
                              f"that no backbone of paddle_pfc's claims; supported: {SUPPORTED}")
    backbone, size = found
    if len(dims) == 4 and dims[2] > 0 and dims[3] > 0 and (dims[2], dims[3]) != size:
        raise ConversionError(f"{path}: input {dims[2]}x{dims[3]} but the layers imply {list(size)}")
    return backbone, embedding, size


def _map_named(source: SourceTensors, named: SourceTensors, note: str, backbone: str | None) -> OnnxMapped:
    """The backbone state of a graph an interop module read as named tensors (``graph_tensors``),
    through the checked mapping of ``.pt`` / ``.pdparams`` sources."""
    from paddle_pfc.interop.architectures import SUPPORTED, detect_tensors
    from paddle_pfc.interop.mapping import map_state

    found = detect_tensors(named)
    if found is None:
        raise ConversionError(f"{source.path}: a graph whose layers no backbone of paddle_pfc's claims; "
                              f"supported: {SUPPORTED}")
    name, embedding, size, first_conv = found
    if backbone is not None and backbone != name:
        raise ConversionError(f"{source.path}: holds a {name} backbone, but --backbone {backbone} was given")
    graph = source.tensors["__graph__"].graph
    stored = {t.name for t in graph.initializer}
    image = next(i for i in graph.input if i.name not in stored)
    dims = [d.dim_value for d in image.type.tensor_type.shape.dim]
    if len(dims) == 4 and dims[2] > 0 and dims[3] > 0 and (dims[2], dims[3]) != tuple(size):
        raise ConversionError(f"{source.path}: input {dims[2]}x{dims[3]} but the layers imply {list(size)}")
    state, ignored = map_state(named, name, embedding, size, first_conv)
    source.ignored.clear()
    source.ignored.update(ignored)
    return OnnxMapped(name, embedding, size, state, note + "; input (x - 127.5) / 127.5 outside the model")


def map_onnx(source: SourceTensors, backbone: str | None = None) -> OnnxMapped:
    """The paddle_pfc backbone state of an ONNX source read by :func:`read_onnx`; ``backbone``, when
    given, must be the one the graph holds (ConversionError naming both, before any mapping)."""
    from paddle_pfc.interop.architectures import graph_source
    from paddle_pfc.interop.mapping import target_layout

    named = graph_source(source)
    if named is not None:
        return _map_named(source, *named, backbone)
    graph = _Graph(source.tensors["__graph__"], source.path)
    items, _ = _chain(graph, graph.input.name, [])
    norms = [item for item in items if item["op"] == "norm"]
    items = [item for item in items if item["op"] != "norm"]
    seq, residuals = _flatten(items)
    found, embedding, size = _detect(graph, items, seq, residuals)
    if backbone is not None and backbone != found:
        raise ConversionError(f"{source.path}: holds a {found} backbone, but --backbone {backbone} was given")
    backbone = found
    layout = target_layout(backbone, embedding, size)
    state, folded = _align(graph, seq, layout, backbone)
    first = next(name for name, (shape, kind) in layout.items() if kind == "conv")
    factor, how = _input_scale(graph, norms, state[first].shape[1])
    state[first] = (state[first].astype(np.float64) * factor.reshape(1, -1, 1, 1)).astype(np.float32)
    for name, value in state.items():
        if not np.all(np.isfinite(value)):
            raise ConversionError(f"{source.path}: tensor for {name} holds NaN or infinity")
    note = (f"{folded} BatchNorms folded into convolutions by the exporter: set to identity + conv bias"
            if folded else "BatchNorms stored unfolded") + f"; input {how}"
    source.ignored.clear()
    return OnnxMapped(backbone, embedding, size, state, note)
