"""tools/bench_backbone.py refuses a peer it cannot run before it runs anything."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

from launcher import REPO

SCRIPT = REPO / "tools" / "bench_backbone.py"


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--steps", "1", "--rounds", "1", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_a_checkout_without_arcface_torch_is_a_usage_error(tmp_path):
    """A wrong --insightface path used to fail in the peer's worker ("No module named 'backbones'")
    after paddle_pfc's side had run; now it is refused first, naming what is missing (or torch)."""
    (tmp_path / "recognition" / "arcface_torch" / "backbones").mkdir(parents=True)
    (tmp_path / "recognition" / "arcface_torch" / "backbones" / "__init__.py").write_text("")
    torch_missing = importlib.util.find_spec("torch") is None
    proc = _bench("--insightface", str(tmp_path), "--classes", "100")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "paddle_pfc " not in proc.stdout  # no side ran
    if torch_missing:
        assert "PyTorch, which is not installed here" in proc.stderr
        return
    assert f"no partial_fc_v2.py, losses.py under {tmp_path / 'recognition' / 'arcface_torch'}" in proc.stderr
    proc = _bench("--insightface", str(tmp_path / "elsewhere"))  # backbone only: backbones/ is what it needs
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert ("no backbones/__init__.py" in proc.stderr
            and "a checkout of github.com/deepinsight/insightface" in proc.stderr)


def test_a_vits_options_optimizer_and_floor_follow_the_arguments():
    from helpers.tool_scripts import load_tool
    from paddle_pfc.bench.vit_floor import VitShape, vit_step_gemm_flop

    bench = load_tool("bench_backbone")
    args = bench.parse_args(["--backbone", "vit_t", "--batch-size", "4", "--mask-ratio", "0"])
    assert bench.vit_options(args) == {"mask_ratio": 0.0}
    assert bench.optimizer_of(args.optimizer, "vit_t") == "adamw" and bench.optimizer_of("auto", "r50") == "momentum"
    assert bench.vit_floor_flop(args) == vit_step_gemm_flop(VitShape(256, 12, 8, 144, 144), 4)
    default = bench.parse_args(["--backbone", "vit_t", "--batch-size", "4"])  # arcface_torch's 10 % masked
    assert bench.vit_floor_flop(default) == vit_step_gemm_flop(VitShape(256, 12, 8, 144, 129), 4)


def test_vit_only_arguments_are_refused_elsewhere():
    for args in (["--backbone", "iresnet50", "--floor"], ["--backbone", "vit_t", "--floor", "--classes", "10"],
                 ["--backbone", "mobilefacenet", "--mask-ratio", "0"]):
        proc = _bench(*args)
        assert proc.returncode == 2 and "paddle_pfc " not in proc.stdout, (args, proc.stderr[-500:])
