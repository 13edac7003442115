"""Deployment: exporting a trained backbone as a Paddle inference model (``export``) and embedding
faces with it through Paddle Inference or ONNX Runtime (``inference``)."""
