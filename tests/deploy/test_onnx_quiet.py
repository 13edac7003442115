"""ONNX conversion prints none of paddle2onnx's own lines (C++ and Python alike)."""
from __future__ import annotations

import pytest

pytest.importorskip("paddle2onnx")


def test_conversion_is_quiet(tmp_path, capfd):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.deploy.onnx_export import export_onnx

    model = export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=1), tmp_path / "m")
    capfd.readouterr()
    assert export_onnx(model).is_file()
    out, err = capfd.readouterr()
    assert "Paddle2ONNX" not in out + err and "ONNX model saved" not in out + err, out + err
