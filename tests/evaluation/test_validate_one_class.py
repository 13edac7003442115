"""tools/validate.py --plot on a .bin holding one kind of pair: the table and JSON are written and
say why there is no ROC (no traceback)."""
from __future__ import annotations

import json
import subprocess
import sys

from launcher import REPO


def test_one_class_bin_writes_json_and_says_why_no_roc(tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.data.synthetic import make_verification_set
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.evaluation.bin_set import write_bin

    bins, issame = make_verification_set(4, 24, 32, seed=3)
    same = [b for k, s in enumerate(issame) if s for b in bins[2 * k:2 * k + 2]]
    write_bin(str(tmp_path / "same_only.bin"), same, [True] * (len(same) // 2))
    export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=2), tmp_path / "model")
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "validate.py"), "--model", str(tmp_path / "model"),
                           "--bin", str(tmp_path / "same_only.bin"), "--nrof-folds", "3", "--plot",
                           str(tmp_path / "roc.png"), "--json", str(tmp_path / "out.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    reason = f"all {len(same) // 2} pairs are genuine (same identity): a ROC needs both genuine and impostor pairs"
    assert f"note: same_only: no ROC: {reason}" in proc.stdout
    result = json.loads((tmp_path / "out.json").read_text())["sets"]["same_only"]
    assert result["no_roc"].startswith(reason) and len(result["fold_accuracies"]) == 3
    assert (tmp_path / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
