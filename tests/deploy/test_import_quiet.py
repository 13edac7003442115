"""Using the package from Python prints none of Paddle's import noise ("No ccache found")."""
from __future__ import annotations

import subprocess
import sys

from launcher import REPO


def test_face_embedder_import_is_quiet():
    proc = subprocess.run([sys.executable, "-W", "default", "-c",
                           "from paddle_pfc.deploy.inference import FaceEmbedder; import paddle"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ccache" not in proc.stderr + proc.stdout
