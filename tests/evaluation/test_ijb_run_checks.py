"""tools/eval_ijb.py: every image checked before any face is embedded, the model's own input
normalization (export.json), feature parts tied to their run and model."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.ijb_set import SIZE, build_ijb
from launcher import REPO
from paddle_pfc.evaluation import ijb

# (x / 255 - 0.5) / 0.5 would be mean 127.5, std 127.5; x / 255 differs more from the default
OTHER_NORMALIZATION = {"inside_model": False, "formula": "x / 255", "mean": 0.0, "std": 255.0}


@pytest.fixture(scope="module")
def ijb_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ijbrun") / "IJBC"
    build_ijb(root, identities=4, templates_per_id=2, seed=4)
    return root


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone

    out = tmp_path_factory.mktemp("model_other_norm")
    export_backbone("mobilefacenet", 16, SIZE, random_state("mobilefacenet", 16, SIZE, seed=5), out)
    meta = json.loads((out / "export.json").read_text())
    meta["normalization"] = dict(OTHER_NORMALIZATION)
    (out / "export.json").write_text(json.dumps(meta, indent=2))
    return out


def run_tool(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PADDLE_TRAINER")}
    environ.update(env or {})
    return subprocess.run([sys.executable, str(REPO / "tools" / "eval_ijb.py"), *args], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=300)


def test_missing_images_are_all_named_before_embedding(ijb_root, model_dir, tmp_path):
    import shutil

    root = tmp_path / "IJBC"
    shutil.copytree(ijb_root, root)
    names = sorted((root / "loose_crop").iterdir(), key=lambda p: int(p.stem))
    gone = [names[i].name for i in (0, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, len(names) - 1)]
    for name in gone:
        (root / "loose_crop" / name).unlink()
    out = tmp_path / "out"
    proc = run_tool(["--model", str(model_dir), "--root", str(root), "--out", str(out)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{len(gone)} of {len(names)} face images not found" in proc.stderr
    assert ", ".join(gone[:10]) + ", ... (2 more)" in proc.stderr
    assert (out / "missing_images.txt").read_text().split() == gone
    assert "embedding" not in proc.stdout and not (out / "ijb_parts").exists()  # nothing was embedded


def aligned_faces(root: Path) -> np.ndarray:
    protocol = ijb.read_protocol(root)
    return np.stack([ijb.load_aligned(protocol, i, SIZE) for i in range(len(protocol.images))])


def test_features_follow_the_models_export_json_normalization(ijb_root, model_dir, tmp_path):
    from paddle_pfc.deploy.inference import FaceEmbedder

    proc = run_tool(["--model", str(model_dir), "--root", str(ijb_root), "--out", str(tmp_path / "out"),
                     "--batch-size", "4"])
    assert proc.returncode == 0, proc.stderr
    got = np.load(ijb.rank_part_path(tmp_path / "out", 0), allow_pickle=False)["features"]
    faces = aligned_faces(ijb_root)
    embedder = FaceEmbedder(model_dir)
    want = embedder.embed(faces, normalize=False, flip=True)  # FaceEmbedder normalizes as export.json says
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    # the default normalization gives other features: the check above can tell them apart
    default = (faces.transpose(0, 3, 1, 2).astype(np.float32) - 127.5) / 128.0
    wrong = embedder.forward(default) + embedder.forward(np.ascontiguousarray(default[:, :, :, ::-1]))
    assert np.abs(wrong - want).max() > 100 * np.abs(got - want).max() + 1e-3


def test_a_stale_part_of_another_run_is_refused(ijb_root, model_dir, tmp_path):
    out = tmp_path / "out"
    n = len(ijb.read_protocol(ijb_root).images)
    start, stop = ijb.shard(n, 1, 2)
    stale = ijb.rank_part_path(out, 1)
    stale.parent.mkdir(parents=True)
    np.savez(stale, start=start, stop=stop, features=np.ones((stop - start, 16), np.float32))  # an earlier run's
    env = {"PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:1,127.0.0.1:2"}
    proc = run_tool(["--model", str(model_dir), "--root", str(ijb_root), "--out", str(out), "--wait-timeout", "1"],
                    env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{stale}: a stale part of another run" in proc.stderr
    assert not (out / "result.json").exists()


def test_a_part_of_this_run_with_another_model_is_refused(ijb_root, model_dir, tmp_path):
    out = tmp_path / "out"
    n = len(ijb.read_protocol(ijb_root).images)
    start, stop = ijb.shard(n, 1, 2)
    other = ijb.PartTag("run-a", "0123456789abcdef x / 255", f"ijbc faces={n} size={SIZE} flip=True", 2)
    ijb.write_part(ijb.rank_part_path(out, 1), np.ones((stop - start, 16)), start, stop, 1, other)
    env = {"PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "2"}
    proc = run_tool(["--model", str(model_dir), "--root", str(ijb_root), "--out", str(out), "--run-id", "run-a"], env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{ijb.rank_part_path(out, 1)}: written by this run with another model" in proc.stderr


def test_merge_parts_checks_each_part(tmp_path):
    tag = ijb.PartTag("run-b", "model-1", "ijbc faces=10", 2)
    feats = np.arange(40, dtype=np.float32).reshape(10, 4)
    for r in range(2):
        start, stop = ijb.shard(10, r, 2)
        ijb.write_part(ijb.rank_part_path(tmp_path, r), feats[start:stop], start, stop, r, tag)
    np.testing.assert_array_equal(ijb.merge_parts(tmp_path, tag, 10, timeout=0), feats)
    with pytest.raises(ijb.IJBError, match=r"rank0.npz: a stale part of another run "
                                           r"\(run id run-b, model model-1; this run is run-c"):
        ijb.merge_parts(tmp_path, ijb.PartTag("run-c", "model-1", "ijbc faces=10", 2), 10, timeout=0)
    ijb.write_part(ijb.rank_part_path(tmp_path, 1), feats[5:], 4, 10, 1, tag)  # wrong share
    with pytest.raises(ijb.IJBError, match=r"rank1.npz: holds rank 1 of 2, faces \[4, 10\)"):
        ijb.merge_parts(tmp_path, tag, 10, timeout=0)
    three = ijb.PartTag("run-b", "model-1", "ijbc faces=10", 3)
    ijb.write_part(ijb.rank_part_path(tmp_path / "three", 0), feats[:4], 0, 4, 0, three)
    with pytest.raises(TimeoutError, match=r"waited 0s for .*three/ijb_parts/rank1.npz"):
        ijb.merge_parts(tmp_path / "three", three, 10, timeout=0)


def test_results_are_written_before_the_plot_and_survive_its_failure(ijb_root, model_dir, tmp_path):
    out = tmp_path / "out"
    (out / "roc.png").mkdir(parents=True)  # the picture cannot be written
    proc = run_tool(["--model", str(model_dir), "--root", str(ijb_root), "--out", str(out)])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "roc.png not drawn" in proc.stderr and "Traceback" not in proc.stderr
    result = json.loads((out / "result.json").read_text())
    assert set(result["tar_at_far"]) == {"1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1"}
    assert (out / "roc.csv").read_text().startswith("fpr,tpr,threshold")
