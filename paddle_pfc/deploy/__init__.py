"""Deployment: the exported-model format (``model_format``), exporting a trained backbone as a
Paddle inference model (``export``; ONNX: ``onnx_export``), and running it (``predictor``: raw
embeddings through Paddle Inference or ONNX Runtime; ``inference``: ``FaceEmbedder``, faces in).
``export`` and ``inference`` do not import each other. Nothing is imported here."""
