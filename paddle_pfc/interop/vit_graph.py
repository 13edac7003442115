"""arcface_torch ViT ONNX graphs (``torch2onnx.py``: torch's TorchScript exporter, opset 11) read as the
tensors of arcface_torch's ``VisionTransformer`` under its own names, in Paddle's layout (Linear
``[in, out]``, BatchNorm ``_mean`` / ``_variance``), for the checked mapping of
:mod:`paddle_pfc.interop.mapping`.

The graph is read BY POSITION, never by tensor or node names: from the input, ``Conv`` (the patch
embedding, kernel = stride) -> ``Reshape`` / ``Transpose`` -> ``Add`` of a ``[1, L, D]`` constant
(``pos_embed``); then per block, on the residual stream ``x``: LayerNorm -> ``MatMul`` (``qkv``) ->
the attention (``Reshape`` to ``[.., 3, heads, head_dim]``, ``Transpose``, ``Gather``, ``MatMul``,
``Mul`` by ``head_dim ** -0.5``, ``Softmax``, ``MatMul``, ``Transpose``, ``Reshape``) -> ``MatMul`` +
``Add`` (``proj``) -> ``Add`` with ``x``; LayerNorm -> ``fc1`` -> ``Clip(0, 6)`` -> ``fc2`` -> ``Add``
with the stream; after the last block, LayerNorm (``norm``) -> ``Reshape`` -> ``MatMul`` ->
``BatchNormalization`` -> ``MatMul`` -> ``BatchNormalization``, the graph's output. A LayerNorm is one
``LayerNormalization`` node (opset 17) or, at opset 11, its decomposition ``ReduceMean``, ``Sub``,
``Pow 2``, ``ReduceMean``, ``Add eps``, ``Sqrt``, ``Div``, ``Mul weight``, ``Add bias``. The exporter's
pre-transposed Linear weights (``MatMul`` by ``[in, out]``) are Paddle's layout; tensors it merged
because they were equal (``Identity`` of one initializer) are read at each place that uses them.

Checked: every node the image reaches is one of these places, every stored float tensor is read,
LayerNorm epsilon 1e-5, 8 heads (the scale and the reshape agree), ReLU6, BatchNorm epsilons moved
to paddle_pfc's 2e-5 exactly (into the variance). ``mask_token`` (used only by training with
masking) is in no eval graph: it is given as zeros, and said so.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from paddle_pfc.interop.common import ConversionError

__all__ = ["graph_tensors", "HEADS"]

HEADS = 8
LN_EPSILON = 1e-5
FEATURE_BN_EPSILON = 2e-5
_PASS = ("Cast", "Identity", "Dropout")
_TOKENS = ("Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze")
_ATTENTION = {"Reshape", "Transpose", "Gather", "Cast", "Squeeze", "Unsqueeze", "Split", "Slice", "MatMul",
              "Mul", "Div", "Softmax", "Identity", "Dropout"}


def _attrs(node: Any) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Consts(dict):
    """Constants by value name: initializers converted to arrays when first read."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def __getitem__(self, name: str) -> np.ndarray:
        value = super().__getitem__(name)
        if not isinstance(value, np.ndarray):
            from onnx import numpy_helper

            try:
                value = numpy_helper.to_array(value)
            except (ValueError, TypeError, KeyError) as error:
                raise ConversionError(f"{self.path} (tensor {name!r}): its dims do not match its data "
                                      f"({error})") from None
            self[name] = value
        return value


class _Walk:
    """The graph's constants and data flow, the nodes matched so far and the tensors read."""

    def __init__(self, model: Any, path: str) -> None:
        graph, self.path = model.graph, path
        self.consts = _Consts(path)
        self.consts.update((t.name, t) for t in graph.initializer)
        self.stored = {t.name for t in graph.initializer}
        self.origin = {name: name for name in self.stored}  # a constant -> the initializer it is
        for node in graph.node:
            if node.op_type == "Constant":
                self.consts[node.output[0]] = _attrs(node)["value"]
            elif node.op_type in ("Identity", "Transpose") and node.input[0] in self.consts:
                value = self.consts[node.input[0]]
                perm = _attrs(node).get("perm")
                self.consts[node.output[0]] = value if node.op_type == "Identity" else value.transpose(perm)
                self.origin[node.output[0]] = self.origin.get(node.input[0], node.input[0])
        self.consumers: dict[str, list] = {}
        for node in graph.node:  # Shape reads only a value's dims: no data flows through it
            for name in [] if node.op_type == "Shape" else node.input:
                if name and name not in self.consts:
                    self.consumers.setdefault(name, []).append(node)
        inputs = [i for i in graph.input if i.name not in self.consts]
        self.input = inputs[0].name if len(inputs) == 1 else None
        self.outputs = [o.name for o in graph.output]
        self.visited: set[int] = set()
        self.read: set[str] = set()
        self.tensors: dict[str, np.ndarray] = {}

    def fail(self, where: str, what: str) -> ConversionError:
        return ConversionError(f"{self.path}: an arcface_torch ViT graph, but at {where} {what}")

    def users(self, value: str) -> list:
        return [n for n in self.consumers.get(value, []) if id(n) not in self.visited]

    def skip(self, value: str) -> str:
        """``value`` after the single-consumer ``Cast`` / ``Identity`` / ``Dropout`` nodes it feeds."""
        while len(users := self.users(value)) == 1 and users[0].op_type in _PASS:
            self.visited.add(id(users[0]))
            value = users[0].output[0]
        return value

    def pick(self, value: str, op: str, where: str, const: bool | None = None) -> Any:
        """The consumer of ``value`` that is an ``op`` (with a constant operand when ``const``), now visited."""
        users = self.users(value)
        for node in users:
            if node.op_type == op and (const is None or const == any(i in self.consts for i in node.input)):
                self.visited.add(id(node))
                return node
        found = ", ".join(n.op_type for n in users) or "nothing (the graph ends)"
        raise self.fail(where, f"expected {op}, found {found}")

    def const(self, node: Any, where: str, index: int | None = None) -> np.ndarray:
        """The stored operand of ``node`` (its ``index``-th input, else the constant one), marked read."""
        names = [node.input[index]] if index is not None else [i for i in node.input if i in self.consts]
        if not names or names[0] not in self.consts:
            raise self.fail(where, f"{node.op_type} takes a computed operand where a stored tensor belongs")
        self.read.add(self.origin.get(names[0], names[0]))
        return np.asarray(self.consts[names[0]], np.float64)

    def scalar(self, node: Any, where: str, index: int | None = None) -> float:
        """The number ``node`` takes as its stored operand (its ``index``-th input when given)."""
        value = self.const(node, where, index)
        if value.size != 1:
            raise self.fail(where, f"{node.op_type} by a tensor of shape {list(value.shape)}, expected a number")
        return float(value.reshape(()))

    def put(self, name: str, value: np.ndarray) -> None:
        self.tensors[name] = np.ascontiguousarray(value, dtype=np.float32)


def _patch_embedding(walk: _Walk) -> str | None:
    """The patch ``Conv`` and ``pos_embed`` read; the token stream after them, or None when the
    graph does not start as a ViT (a Conv whose output becomes tokens plus a ``[1, L, D]`` constant)."""
    users = walk.users(walk.input) if walk.input else []
    if len(users) != 1 or users[0].op_type != "Conv" or users[0].input[1] not in walk.consts:
        return None
    conv, value = users[0], users[0].output[0]
    while len(users := walk.users(value)) == 1 and users[0].op_type in _TOKENS:
        value = users[0].output[0]
    if len(users) != 1 or users[0].op_type != "Add" or not any(
            i in walk.consts and np.ndim(walk.consts[i]) == 3 for i in users[0].input):
        return None
    walk.visited.add(id(conv))
    value = conv.output[0]
    while (node := walk.users(value)[0]).op_type in _TOKENS:
        walk.visited.add(id(node))
        value = node.output[0]
    walk.visited.add(id(node))
    weight = walk.const(conv, "the patch embedding", 1)
    kernel, strides = list(weight.shape[2:]), list(_attrs(conv).get("strides", [1, 1]))
    if kernel != strides:
        raise walk.fail("the patch embedding", f"a Conv of kernel {kernel} with strides {strides}")
    walk.put("patch_embed.proj.weight", weight)
    if len(conv.input) > 2 and conv.input[2]:
        walk.put("patch_embed.proj.bias", walk.const(conv, "the patch embedding", 2))
    walk.put("pos_embed", walk.const(node, "the position embedding"))
    return node.output[0]


def _layer_norm(walk: _Walk, x: str, name: str) -> str:
    """LayerNorm ``name`` of the stream ``x`` read; its output."""
    fused = [n for n in walk.users(x) if n.op_type == "LayerNormalization"]
    if fused:
        node = walk.pick(x, "LayerNormalization", name)
        eps = float(_attrs(node).get("epsilon", 1e-5))
        weight, bias = walk.const(node, name, 1), walk.const(node, name, 2)
    else:
        mean = walk.pick(x, "ReduceMean", name)
        centered = walk.pick(x, "Sub", name)
        if list(centered.input) != [x, mean.output[0]]:
            raise walk.fail(name, "a Sub that is not the input minus its mean")
        square = walk.pick(centered.output[0], "Pow", name)
        if walk.scalar(square, name) != 2:
            raise walk.fail(name, "a Pow that is not the square")
        shifted = walk.pick(walk.pick(square.output[0], "ReduceMean", name).output[0], "Add", name, const=True)
        eps = walk.scalar(shifted, name)
        root = walk.pick(shifted.output[0], "Sqrt", name)
        normed = walk.pick(centered.output[0], "Div", name)
        if list(normed.input) != [centered.output[0], root.output[0]]:
            raise walk.fail(name, "a Div that is not the centered input over its deviation")
        node = walk.pick(normed.output[0], "Mul", name, const=True)
        weight = walk.const(node, name)
        node = walk.pick(node.output[0], "Add", name, const=True)
        bias = walk.const(node, name)
    if abs(eps - LN_EPSILON) > 1e-3 * LN_EPSILON:
        raise walk.fail(name, f"LayerNorm epsilon {eps:g}; paddle_pfc's ViTs have {LN_EPSILON:g}")
    walk.put(f"{name}.weight", weight.reshape(-1))
    walk.put(f"{name}.bias", bias.reshape(-1))
    return node.output[0]


def _linear(walk: _Walk, x: str, name: str) -> str:
    """Linear ``name`` (``MatMul`` by a stored ``[in, out]`` [+ ``Add`` bias], or ``Gemm``) read; its output."""
    gemm = [n for n in walk.users(x) if n.op_type == "Gemm"]
    node = walk.pick(x, "Gemm" if gemm else "MatMul", name, const=True)
    weight = walk.const(node, name, 1)
    if gemm:
        attrs = _attrs(node)
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
            raise walk.fail(name, "a Gemm with transA / alpha / beta, not a Linear")
        walk.put(f"{name}.weight", weight.T if attrs.get("transB", 0) else weight)
        if len(node.input) > 2 and node.input[2]:
            walk.put(f"{name}.bias", walk.const(node, name, 2).reshape(-1))
        return node.output[0]
    walk.put(f"{name}.weight", weight)
    users = walk.users(node.output[0])
    if len(users) == 1 and users[0].op_type == "Add" and any(i in walk.consts for i in users[0].input):
        node = walk.pick(node.output[0], "Add", name, const=True)
        walk.put(f"{name}.bias", walk.const(node, name).reshape(-1))
    return node.output[0]


def _attention(walk: _Walk, qkv: str, where: str, dim: int) -> str:
    """The weightless attention between ``qkv`` and ``proj``, checked (8 heads, their scale, softmax
    over the keys); the value ``proj`` reads."""
    frontier, proj, heads, scales = [qkv], [], set(), []
    while frontier:
        for node in walk.users(frontier.pop()):
            if node.op_type == "MatMul" and node.input[1] in walk.consts:
                proj.append(node)
                continue
            if node.op_type not in _ATTENTION:
                raise walk.fail(where, f"a {node.op_type} inside the attention")
            walk.visited.add(id(node))
            frontier += list(node.output)
            consts = [walk.consts[i] for i in node.input[1:] if i in walk.consts]
            if node.op_type == "Reshape" and consts and np.size(consts[0]) >= 4 and not heads:
                heads.add(int(consts[0].reshape(-1)[-2]))
            elif node.op_type in ("Mul", "Div") and consts:
                scales.append(float(np.reshape(consts[0], -1)[0]) ** (1 if node.op_type == "Mul" else -1))
            elif node.op_type == "Softmax" and _attrs(node).get("axis", -1) not in (-1, 3):
                raise walk.fail(where, f"a Softmax over axis {_attrs(node)['axis']}, not the keys")
    if len({id(n) for n in proj}) != 1:
        raise walk.fail(where, f"{len(proj)} Linears after the attention, expected proj alone")
    count = heads.pop() if heads else HEADS
    if count != HEADS or len(scales) != 1 or abs(scales[0] * np.sqrt(dim // HEADS) - 1) > 1e-5:
        raise walk.fail(where, f"{count} heads and scale {scales}; paddle_pfc's ViTs have {HEADS} heads, "
                               f"scale (head width {dim // HEADS}) ** -0.5")
    return proj[0].input[0]


def _residual(walk: _Walk, branch: str, stream: str, where: str) -> str:
    node = walk.pick(branch, "Add", where, const=False)
    if set(node.input) != {branch, stream}:
        raise walk.fail(where, "an Add that is not the residual of the block's input")
    return node.output[0]


def _block(walk: _Walk, x: str, index: int, dim: int) -> str:
    """Block ``index`` of the stream ``x`` read; the stream after it."""
    name = f"blocks.{index}"
    qkv = _linear(walk, _layer_norm(walk, x, f"{name}.norm1"), f"{name}.attn.qkv")
    proj = _linear(walk, _attention(walk, qkv, f"{name}.attn", dim), f"{name}.attn.proj")
    x = _residual(walk, walk.skip(proj), x, f"{name} (attention)")
    hidden = _linear(walk, _layer_norm(walk, walk.skip(x), f"{name}.norm2"), f"{name}.mlp.fc1")
    clip = walk.pick(hidden, "Clip", f"{name}.mlp")
    bounds = [walk.scalar(clip, f"{name}.mlp", k) for k in (1, 2)] if len(clip.input) > 2 else \
        [_attrs(clip).get("min"), _attrs(clip).get("max")]
    if bounds != [0.0, 6.0]:
        raise walk.fail(f"{name}.mlp", f"Clip to {bounds}; paddle_pfc's MLP has ReLU6 (Clip to [0, 6])")
    out = _linear(walk, walk.skip(clip.output[0]), f"{name}.mlp.fc2")
    return _residual(walk, walk.skip(out), x, f"{name} (MLP)")


def _batch_norm(walk: _Walk, x: str, name: str) -> str:
    """BatchNorm1d ``name`` read, its epsilon moved into the variance (paddle_pfc's is 2e-5); its output."""
    node = walk.pick(x, "BatchNormalization", name)
    scale, shift, mean, var = (walk.const(node, name, k).reshape(-1) for k in (1, 2, 3, 4))
    var = var + (float(_attrs(node).get("epsilon", 1e-5)) - FEATURE_BN_EPSILON)
    if np.any(var <= 0):
        raise walk.fail(name, "a BatchNorm whose epsilon cannot be expressed as 2e-5 (variance <= 0)")
    for leaf, value in (("weight", scale), ("bias", shift), ("_mean", mean), ("_variance", var)):
        walk.put(f"{name}.{leaf}", value)
    return node.output[0]


def _head(walk: _Walk, x: str) -> str:
    """``norm`` and the ``feature`` head after the last block read; the embedding's value."""
    x = _layer_norm(walk, walk.skip(x), "norm")
    while len(users := walk.users(x)) == 1 and users[0].op_type in _TOKENS + _PASS:
        walk.visited.add(id(users[0]))
        x = users[0].output[0]
    x = _batch_norm(walk, _linear(walk, x, "feature.0"), "feature.1")
    x = _batch_norm(walk, _linear(walk, walk.skip(x), "feature.2"), "feature.3")
    x = walk.skip(x)
    if x not in walk.outputs or walk.users(x):
        raise walk.fail("the embedding", "the graph goes on after the feature head")
    return x


def _check_all_read(walk: _Walk) -> None:
    """ConversionError naming a node the image reaches that no ViT layer accounts for, or a stored
    float tensor no layer read."""
    seen, frontier = set(), [walk.input]
    while frontier:
        for node in walk.consumers.get(frontier.pop(), []):
            if id(node) not in seen:
                seen.add(id(node))
                frontier += list(node.output)
                if id(node) not in walk.visited:
                    raise walk.fail(f"node {node.name or node.output[0]!r}", f"a {node.op_type} that is no part "
                                                                           "of arcface_torch's ViT")
    unread = sorted(name for name in walk.stored - walk.read
                    if walk.consts[name].dtype.kind == "f" and walk.consts[name].size > 1)
    if unread:
        raise ConversionError(f"{walk.path}: stored tensors read by no layer of the ViT: "
                              + ", ".join(f"{n} {list(walk.consts[n].shape)}" for n in unread[:6]))


def graph_tensors(model: Any, path: str) -> dict[str, np.ndarray] | None:
    """The tensors of an arcface_torch ViT graph under arcface_torch's names, Paddle's layout
    (``mask_token`` zeros: in no eval graph); None when the graph does not start as a ViT (its input
    read by one Conv whose output, made tokens, gets a stored ``[1, L, D]`` tensor added),
    ConversionError naming the place where a ViT graph differs."""
    walk = _Walk(model, path)
    x = _patch_embedding(walk)
    if x is None:
        return None
    dim = int(walk.tensors["pos_embed"].shape[-1])
    index = 0
    while any(n.op_type == "Add" and all(i not in walk.consts for i in n.input) for n in walk.users(x)):
        x = _block(walk, x, index, dim)
        index += 1
    if index == 0:
        raise walk.fail("the first block", "no residual block after the position embedding")
    _head(walk, x)
    _check_all_read(walk)
    walk.put("mask_token", np.zeros((1, 1, dim)))
    return walk.tensors
