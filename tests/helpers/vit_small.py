"""The small ViT of the interop fixtures (``tests/interop/make_vit_fixtures.py``,
``make_vit_source_fixtures.py``: arcface_torch's / PLSC's class at width 32, depth 2, 8 heads,
embedding 16) and its checked layout."""
from __future__ import annotations

DIM, DEPTH, HEADS, EMBEDDING = 32, 2, 8, 16


def small_vit_layout() -> dict:
    """:func:`paddle_pfc.interop.mapping.layer_layout` of paddle_pfc's ViT of the fixtures' size
    (built lazily in dygraph whatever mode an earlier test left on, the mode restored)."""
    import paddle

    from paddle_pfc.backbones.vit import VisionTransformer
    from paddle_pfc.interop import vit_map
    from paddle_pfc.interop.mapping import layer_layout

    was_static = not paddle.in_dynamic_mode()
    paddle.disable_static()
    try:
        with paddle.LazyGuard():
            net = VisionTransformer(DIM, DEPTH, HEADS, embedding_size=EMBEDDING)
    finally:
        if was_static:
            paddle.enable_static()
    return layer_layout(net, extra=vit_map.parameter_kind)
