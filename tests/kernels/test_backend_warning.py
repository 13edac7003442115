"""kernels=fused without a GPU is said once a process, however many heads a command builds."""
from __future__ import annotations

import logging

import paddle_pfc.kernels as kernels


def test_emulated_fused_kernels_warn_once(monkeypatch, caplog):
    monkeypatch.setattr(kernels, "_WARNED_EMULATED", set())
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert kernels.choose_backend("fused", gpu=False).emulated
    said = [r for r in caplog.records if "fused on a machine without a GPU" in r.getMessage()]
    assert len(said) == 1


def test_an_expected_emulation_is_not_warned(monkeypatch, caplog):
    """A caller that names the emulation itself (selfcheck) asks for no warning of kernels=fused;
    $PADDLE_PFC_KERNELS=fused is still said."""
    monkeypatch.setattr(kernels, "_WARNED_EMULATED", set())
    kernels.expect_emulation()
    with caplog.at_level(logging.WARNING):
        assert kernels.choose_backend("fused", gpu=False).emulated
        monkeypatch.setenv(kernels.ENV, "fused")
        assert kernels.choose_backend(None, gpu=False).emulated
    said = [r.getMessage() for r in caplog.records if "fused on a machine without a GPU" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(f"paddle_pfc: {kernels.ENV}=fused")
