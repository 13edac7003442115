"""Errors name their rank, file and cause: per-rank summaries and error files, disk errors with the
path, skip_bad logging each skipped image."""
from __future__ import annotations

import errno
import logging
import os

import numpy as np
import pytest

from paddle_pfc.data._image import encode_jpeg
from paddle_pfc.data.image_folder import ImageFolderDataset
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.errors import error_summary, report_error


def test_error_summary_is_one_line_with_rank_type_cause_and_place(tmp_path, capsys):
    try:
        raise ValueError("bad record 17\nin /data/train.rec")
    except ValueError as exc:
        summary = report_error(exc, 3, tmp_path / "out")
        assert summary == error_summary(exc, 3)
    assert summary.startswith("[rank 3] ValueError: bad record 17 in /data/train.rec (at test_reliability_errors.py:")
    assert "\n" not in summary and summary in capsys.readouterr().err
    text = (tmp_path / "out" / "error_rank3.txt").read_text()
    assert summary in text.splitlines()[0] and "Traceback" in text


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to make a write fail with ENOSPC")
def test_full_disk_error_names_the_file(tmp_path):
    folder = tmp_path / "step_000000040.partial"
    folder.mkdir()
    (folder / "meta.json.tmp").symlink_to("/dev/full")  # every write into it: No space left on device
    with pytest.raises(OSError) as info:
        ckpt.write_meta(folder, {"global_step": 40}, world_size=1, num_heads=1)
    assert info.value.errno == errno.ENOSPC
    assert str(folder / "meta.json") in str(info.value)


def test_checkpoint_refuses_non_finite_values_naming_the_tensor():
    ckpt.check_finite("fine", np.ones(3, np.float32))
    ckpt.check_finite("counter", np.array([7], np.int32))
    with pytest.raises(FloatingPointError, match=r"bn1\._variance: 1 of 3 values are inf/NaN"):
        ckpt.check_finite("bn1._variance", np.array([1.0, np.inf, 2.0], np.float32))
    bf16_nan = np.array([0x3F80, 0x7FC0], np.uint16)  # 1.0 and NaN as bfloat16 bit patterns
    with pytest.raises(FloatingPointError, match="centers"):
        ckpt.check_finite("centers", bf16_nan, bfloat16_bits=True)


def test_skip_bad_logs_each_skipped_image_and_the_count(tmp_path, caplog):
    root = tmp_path / "folder"
    (root / "images").mkdir(parents=True)
    good = encode_jpeg(np.full((16, 16, 3), 128, np.uint8))
    lines = []
    for i in range(4):
        (root / "images" / f"{i}.jpg").write_bytes(good)
        lines.append(f"images/{i}.jpg\t{i % 2}")
    (root / "images" / "broken.jpg").write_bytes(b"not a jpeg")
    lines += ["images/broken.jpg\t0", "images/missing.jpg\t1"]
    (root / "label.txt").write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="paddle_pfc.data"):
        ds = ImageFolderDataset(str(root), image_size=16, skip_bad=True)
    assert len(ds) == 4 and ds.num_skipped == 2
    messages = [r.getMessage() for r in caplog.records]
    assert any("broken.jpg" in m and "cannot decode" in m for m in messages), messages
    assert any("missing.jpg" in m and "not found" in m for m in messages), messages
    assert any("2 of 6 images" in m for m in messages), messages


@pytest.mark.multirank
def test_bad_image_read_by_one_rank_is_named_in_that_ranks_error_file(tmp_path):
    """Whichever rank decodes the broken image writes error_rank{r}.txt naming it; the other rank
    is stopped by the launcher, or fails in a collective and says that this is a consequence."""
    from launcher import REPO, launch

    root = tmp_path / "folder"
    (root / "images").mkdir(parents=True)
    rng = np.random.default_rng(0)
    lines = []
    for i in range(24):
        name = f"images/{i}.jpg"
        data = b"not a jpeg at all" if i == 13 else encode_jpeg(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8))
        (root / name).write_bytes(data)
        lines.append(f"{name}\t{i % 6}")
    (root / "label.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    proc = launch(REPO / "tools" / "train.py", 2,
                  ["-c", str(REPO / "tests" / "train_tiny.yaml"), "-o", "data.kind=folder", "-o", f"data.root={root}",
                   "-o", "data.num_classes=6", "-o", "train.batch_size=4", "-o", "train.epochs=1",
                   "-o", f"train.output_dir={out}"], tmp_path / "log", check=False)
    assert proc.returncode != 0
    files = {r: (out / f"error_rank{r}.txt").read_text().splitlines()[0]
             for r in range(2) if (out / f"error_rank{r}.txt").exists()}
    culprits = [r for r, line in files.items() if "13.jpg: cannot decode" in line]
    assert len(culprits) == 1, files
    assert files[culprits[0]].split(" ", 2)[2].startswith(f"[rank {culprits[0]}] ValueError: ")
    for r, line in files.items():
        if r != culprits[0]:
            assert "another rank stopped first" in line, line
    # Every rank that failed names the job's first error, whichever rank the launcher blames.
    culprit = culprits[0]
    for r in files:
        log = (tmp_path / "log" / f"workerlog.{r}").read_text()
        if r == culprit:
            assert f"[rank {r}] the first error of this job is this rank's (error_rank{r}.txt)" in log, log
        else:
            assert (f"[rank {r}] the first error of this job is in {out / f'error_rank{culprit}.txt'}: "
                    f"[rank {culprit}] ValueError: ") in log, log
