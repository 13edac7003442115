"""Models of other frameworks as paddle_pfc backbones (docs/pretrained_models.md).

``convert`` (:func:`~paddle_pfc.interop.convert.convert`, ``read_source``, ``detect_format``: a source
file to a checked backbone state), one reader per source format (``torch_reader``, ``onnx_reader``,
``plsc_reader``), one map per architecture (``iresnet_map``, ``mobilefacenet_map``,
``vit_map``; ``vit_graph``: a ViT ONNX graph read by position), ``mapping`` (the
checked tensor-by-tensor mapping), ``common`` (``ConversionError``, what a reader and a map share).
"""
