"""tools/validate.py --plot: ROC + per-fold accuracy picture, progress lines; the folds agree with
the reported accuracy."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from launcher import REPO


def test_validate_plot_and_progress(tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.data.synthetic import make_verification_set
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.evaluation.bin_set import write_bin

    bins, issame = make_verification_set(6, 60, 32, seed=1)
    write_bin(str(tmp_path / "syn.bin"), bins, issame)
    export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=2), tmp_path / "model")
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "validate.py"), "--model", str(tmp_path / "model"),
                           "--bin", str(tmp_path / "syn.bin"), "--nrof-folds", "4", "--batch-size", "16",
                           "--plot", str(tmp_path / "roc.png"), "--json", str(tmp_path / "out.json"),
                           "--progress-every", "0"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # 120 pair images, each distinct: embedded once each (and flipped), counted once
    assert "validate syn: 120/120 (100%)" in proc.stdout and "distinct images/s" in proc.stdout
    result = json.loads((tmp_path / "out.json").read_text())["sets"]["syn"]
    assert len(result["fold_accuracies"]) == 4
    assert np.mean(result["fold_accuracies"]) == pytest.approx(result["accuracy"], abs=1e-12)
    import matplotlib.image

    png = matplotlib.image.imread(tmp_path / "roc.png")
    assert png.ndim == 3 and png.shape[1] > png.shape[0] > 500 and (png[..., :3] < 0.8).any()  # histograms beside
