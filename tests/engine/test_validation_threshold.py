"""Validation during training embeds each distinct image of its share once, logs its threshold as a cosine
similarity, and leaves it in best/validation.json with its error rates on the pairs (intervals over the
set's people when it names them), which paddle-pfc-export carries into the export."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from launcher import REPO
from paddle_pfc.data.synthetic import make_verification_set
from paddle_pfc.evaluation.bin_set import write_bin
from paddle_pfc.evaluation.operating_point import wilson_interval
from paddle_pfc.evaluation.pair_people import write_pair_people


def test_best_records_the_cosine_threshold_of_a_validation_of_distinct_images(tmp_path):
    bins, _ = make_verification_set(4, 10, 32, seed=5)
    images = bins[:8]  # 8 images, 24 pairs of them: 48 pair members
    pairs = [(a, (a + step) % 8) for step in (0, 1, 4) for a in range(8)]
    write_bin(str(tmp_path / "reuse.bin"), [images[i] for pair in pairs for i in pair],
              [a // 2 == b // 2 for a, b in pairs])
    write_pair_people(tmp_path / "reuse.bin", [(f"p{a // 2}", f"p{b // 2}") for a, b in pairs])  # 4 people
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "tools/train.py", "-c", "tests/train_tiny.yaml", "-o", "train.max_steps=1",
                           "-o", f"validation.sets=[{{name: reuse, path: {tmp_path / 'reuse.bin'}}}]",
                           "-o", "validation.nrof_folds=3", "-o", f"train.output_dir={out}"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    found = re.findall(r"\[reuse\]\[(\d)\] accuracy ([\d.]+) \+- [\d.]+  threshold ([-\d.]+) \(cosine\)  xnorm .*"
                       r"rank 0 embedded 8 distinct images of 48\)", proc.stdout)
    assert [step for step, _, _ in found] == ["0", "1"], proc.stdout[-3000:]
    assert "validate reuse (rank 0: 48 of 48 pair images): 8/8 (100%)" in proc.stdout  # the distinct ones
    record = json.loads((out / "best" / "validation.json").read_text())
    best = max(found, key=lambda f: float(f[1]))  # the first validation with the best accuracy wrote best/
    assert f"{record['threshold']:.3f}" == best[2] and record["set"] == "reuse" and record["num_pairs"] == 24
    assert record["threshold_kind"] == "cosine similarity" and record["flip"] is True
    assert record["rule"] == "best_accuracy_middle" and record["rule_text"].startswith("middle of the best-accuracy")
    assert record["accuracy_note"].startswith("selection-biased")
    rates = record["error_rates"]
    assert rates["interval_method"] == "people_bootstrap_cross_validated" and rates["people"] == 4
    assert (rates["genuine_pairs"], rates["impostor_pairs"]) == (record["genuine_pairs"], record["impostor_pairs"])
    for kind, wrong, count in (("frr", "false_rejects", "genuine_pairs"), ("far", "false_accepts", "impostor_pairs")):
        lo, hi = wilson_interval(rates[wrong], rates[count])  # never narrower than the pairs' Wilson interval
        assert rates[f"{kind}_interval"][0] <= lo + 1e-12 and rates[f"{kind}_interval"][1] >= hi - 1e-12
    assert "verification set reuse: " in proc.stdout and "24 pairs of 4 people" in proc.stdout
    assert f"best/ threshold {record['threshold']:.3f} on reuse's pairs, which chose it (selection-biased): false " \
           "rejects " in proc.stdout and "95 % intervals over people: where the rates of another 4 people land at " \
           "a threshold chosen this way" in proc.stdout
    assert "best/ threshold's intervals: only 4 people: error-rate intervals over them cannot be trusted" in proc.stdout
    assert f"threshold {record['threshold']:.3f} (cosine, reuse: {record['rule_text']}) in " in proc.stdout
    if "best model: step 1," in proc.stdout:  # the last line says which number chose best/
        assert "That accuracy is selection-biased (these pairs chose best/ and its threshold)" in proc.stdout
    export = subprocess.run([sys.executable, "tools/export.py", "--checkpoint", str(out / "best"), "--out",
                             str(tmp_path / "export")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stderr[-2000:]
    assert f"threshold {record['threshold']:.3f} (cosine) of {out / 'best' / 'validation.json'} (reuse, 24 pairs; " \
           f"{record['rule_text']}) " \
           f"copied to {tmp_path / 'export' / 'validation.json'}" in export.stdout
    assert json.loads((tmp_path / "export" / "validation.json").read_text()) == record
