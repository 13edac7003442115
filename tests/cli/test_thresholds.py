"""One threshold language: validate reports and records a cosine threshold of flip-summed embeddings,
embedding each distinct image once; infer flip-sums the same way and defaults to the recorded threshold."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from paddle_pfc.backbones.state import random_state
from paddle_pfc.cli import infer, validate
from paddle_pfc.deploy.export import export_backbone
from paddle_pfc.deploy.inference import FaceEmbedder
from paddle_pfc.evaluation.bin_set import write_bin
from paddle_pfc.evaluation.verification import evaluate_pairs

SIZE = 32


@pytest.fixture(scope="module")
def model_and_set(tmp_path_factory):
    """An export and a .bin of 12 pairs drawn from 6 images (grey and 92x112-shaped ones among them)."""
    folder = tmp_path_factory.mktemp("thresholds")
    state = random_state("mobilefacenet", 16, SIZE, seed=5)
    model = export_backbone("mobilefacenet", 16, SIZE, state, folder / "model")
    rng = np.random.default_rng(0)
    faces = [cv2.GaussianBlur(rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8), (5, 5), 0) for _ in range(4)]
    faces.append(np.repeat(rng.integers(0, 256, (SIZE, SIZE, 1), dtype=np.uint8), 3, axis=2))  # grey
    faces.append(cv2.GaussianBlur(rng.integers(0, 256, (40, 30, 3), dtype=np.uint8), (5, 5), 0))  # 30x40 (WxH)
    encoded = [cv2.imencode(".png", f)[1].tobytes() for f in faces]
    order = [(0, 1), (2, 3), (4, 5), (0, 2), (1, 3), (5, 0), (1, 1), (2, 2), (3, 4), (4, 4), (5, 5), (0, 0)]
    issame = [a == b for a, b in order]
    write_bin(str(folder / "pairs.bin"), [encoded[i] for pair in order for i in pair], issame)
    paths = []
    for k, f in enumerate(faces):
        paths.append(str(folder / f"face{k}.png"))
        cv2.imwrite(paths[-1], f)
    return folder, str(model), paths


def test_validate_embeds_distinct_images_once_and_records_a_cosine_threshold(model_and_set, capsys):
    folder, model, _ = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3", "--record",
                          "--json", str(folder / "out.json")]) == 0
    out = capsys.readouterr().out
    assert "pairs: embedded 6 distinct images of 24" in out
    assert "pairs: images: 4 grey (first: " in out and "4 not square (first: " in out  # of the 24 pair members
    result = json.loads((folder / "out.json").read_text())["sets"]["pairs"]
    # reference: every image of every pair embedded, flip-summed, through the library's loader
    from paddle_pfc.evaluation.validation import load_pairs

    images, issame = load_pairs(folder / "pairs.bin", SIZE)
    embedder = FaceEmbedder(model)
    summed = embedder.forward(images) + embedder.forward(np.ascontiguousarray(images[:, :, :, ::-1]))
    ref = evaluate_pairs(summed, issame, 3)
    assert result["fold_threshold"] == pytest.approx(1 - ref.threshold / 2) and result["accuracy"] == ref.accuracy
    unit = summed.astype(np.float64) / np.linalg.norm(summed.astype(np.float64), axis=1, keepdims=True)
    cosines = np.sum(unit[0::2] * unit[1::2], axis=1)
    assert result["threshold"] == pytest.approx(middle_reference(cosines, issame), abs=1e-5)
    assert result["rule"] == "best_accuracy_middle" and result["far"] is None
    assert result["distinct_images"] == 6 and result["images"] == 24
    record = json.loads((folder / "model" / "validation.json").read_text())
    assert record["threshold"] == result["threshold"] and record["threshold_kind"] == "cosine similarity"
    assert record["rule"] == "best_accuracy_middle" and record["rule_text"] == result["rule_text"]
    import hashlib

    assert record["set_sha256"] == hashlib.sha256((folder / "pairs.bin").read_bytes()).hexdigest()
    assert f"recorded threshold {result['threshold']:.3f} (cosine, pairs: middle of the best-accuracy range " in out
    # the recorded threshold checked on the pairs that chose it, said selection-biased, verdict last
    rejects = int(np.count_nonzero(issame & (cosines < result["threshold"])))
    accepts = int(np.count_nonzero(~issame & (cosines >= result["threshold"])))
    genuine, impostor = int(issame.sum()), int((~issame).sum())
    head = f"threshold {result['threshold']:.3f} (recorded now on pairs):\n  pairs: false rejects {rejects}/{genuine} "
    assert head in out and f"false accepts {accepts}/{impostor} = " in out
    assert "(selection-biased: these pairs chose the model's threshold)" in out
    assert out.strip().splitlines()[-1].startswith(f"verdict: pairs: {100 * ref.accuracy:.2f} % accuracy; threshold "
                                                   f"{result['threshold']:.3f} wrongly rejects {rejects} of {genuine} "
                                                   f"genuine pairs ")
    assert out.strip().endswith("on the people that chose it: selection-biased, not what new people get")


def middle_reference(cosines, issame) -> float:
    """The middle of the widest gap between neighbouring scores (bounds -1, 1) of the best accuracy."""
    edges = np.r_[-1.0, np.unique(cosines), 1.0]
    scored = [(float(np.mean((cosines >= (lo + hi) / 2) == issame)), hi - lo, (lo + hi) / 2)
              for lo, hi in zip(edges[:-1], edges[1:])]
    best = max(acc for acc, _, _ in scored)
    return max((w, t) for acc, w, t in scored if acc == best)[1]


def test_infer_uses_the_recorded_threshold_and_flip_sums(model_and_set, capsys):
    folder, model, paths = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3", "--record"]) == 0
    recorded = json.loads((folder / "model" / "validation.json").read_text())["threshold"]
    capsys.readouterr()
    assert infer.main(["--model", model, "--compare", paths[0], paths[5]]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    embedder = FaceEmbedder(model)
    rgb = [cv2.cvtColor(cv2.imread(p), cv2.COLOR_BGR2RGB) for p in (paths[0], paths[5])]
    flipped = embedder.embed(rgb, normalize=False, flip=True)
    unit = flipped / np.linalg.norm(flipped, axis=1, keepdims=True)
    cosine = float(unit[0] @ unit[1])
    verdict = "SAME" if cosine >= recorded else "DIFFERENT"
    assert line.startswith(f"{verdict}: cosine similarity {cosine:.4f}")
    rule = json.loads((folder / "model" / "validation.json").read_text())["rule_text"]
    assert f"threshold {recorded:.3f} (recorded by validation in {folder / 'model' / 'validation.json'} (pairs, " \
           f"12 pairs; {rule}); flip-summed)" in line and rule.startswith("middle of the best-accuracy range ")
    assert infer.main(["--model", model, "--compare", paths[0], paths[5], "--threshold", "0.2", "--no-flip"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    plain = embedder.embed(rgb, flip=False)
    assert f"cosine similarity {float(plain[0] @ plain[1]):.4f}" in line
    assert "threshold 0.200 (--threshold; no flip)" in line


def test_infer_without_a_threshold_says_how_to_get_one(tmp_path, model_and_set, capsys):
    _, _, paths = model_and_set
    bare = export_backbone("mobilefacenet", 16, SIZE, random_state("mobilefacenet", 16, SIZE, seed=6), tmp_path / "m")
    assert infer.main(["--model", str(bare), "--compare", paths[0], paths[1]]) == 2
    err = capsys.readouterr().err
    assert "has no validation record: give --threshold COSINE, or record one with paddle-pfc-validate --model MODEL " \
           "--bin SET.bin --record" in err
    (tmp_path / "m" / "validation.json").write_text('{"threshold": 1.7, "threshold_kind": "cosine similarity"}')
    assert infer.main(["--model", str(bare), "--compare", paths[0], paths[1]]) == 2
    assert "validation.json: holds no cosine-similarity \"threshold\" in [-1, 1]" in capsys.readouterr().err


def test_infer_aligns_on_landmarks(model_and_set, tmp_path, capsys):
    from paddle_pfc.evaluation.face_align import ARCFACE_TEMPLATE, align_face

    _, model, _ = model_and_set
    rng = np.random.default_rng(3)
    photo = cv2.GaussianBlur(rng.integers(0, 256, (150, 130, 3), dtype=np.uint8), (7, 7), 0)
    cv2.imwrite(str(tmp_path / "photo.png"), photo)
    points = ARCFACE_TEMPLATE * 1.1 + [5.0, 9.0]
    (tmp_path / "points.txt").write_text("photo.png " + " ".join(repr(float(v)) for v in points.ravel()) + "\n")
    assert infer.main(["--model", model, "--images", str(tmp_path / "photo.png"), "--landmarks",
                       str(tmp_path / "points.txt")]) == 0
    out = capsys.readouterr().out
    crop = align_face(photo[:, :, ::-1], points)  # RGB, 112x112, then resized to the model's 32x32
    raw = FaceEmbedder(model).embed([crop], normalize=False, flip=True)
    assert f"norm {np.linalg.norm(raw[0]):.4f}" in out
    assert "images: 1 resized to 32x32 (first: images[0] 112x112)" in out
    assert infer.main(["--model", model, "--images", str(tmp_path / "photo.png"), str(tmp_path / "points.txt"),
                       "--landmarks", str(tmp_path / "points.txt")]) == 2
    assert "no line for " in capsys.readouterr().err


def test_validate_far_rule_warns_on_too_few_impostors_and_checks_a_given_threshold(model_and_set, tmp_path, capsys):
    folder, model, _ = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3", "--record",
                          "--far", "0.3"]) == 0
    out = capsys.readouterr().out
    record = json.loads((folder / "model" / "validation.json").read_text())
    assert record["rule"] == "false_accept_rate" and record["far"] == 0.3 and record["impostor_pairs"] == 7
    assert record["rule_text"].startswith("false-accept rate 0.3: 2 of 7 impostor pairs accepted")  # floor(0.3 x 7)
    assert "warning: pairs: 7 impostor pairs are too few for a false-accept rate of 0.3: it needs at least 34" in out
    # a given threshold, checked on the set: the record names the set that chose the model's threshold
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3",
                          "--threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "threshold 0.500 (--threshold):\n  pairs: false rejects " in out
    assert "(selection-biased: these pairs chose the model's threshold)" in out
    with pytest.raises(SystemExit):
        validate.parse_args(["--model", model, "--bin", "x.bin", "--far", "1.5"])
    assert "--far 1.5: a false-accept rate is in (0, 1)" in capsys.readouterr().err


@pytest.mark.parametrize("non_square, said", [("crop", "centre-cropped to square"), ("stretch", "stretched to square")])
def test_validate_and_infer_say_the_non_square_policy_they_apply(model_and_set, capsys, non_square, said):
    folder, model, paths = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3",
                          "--non-square", non_square, "--json", str(folder / f"{non_square}.json")]) == 0
    assert f"non-square -> {said}" in capsys.readouterr().out
    from paddle_pfc.evaluation.validation import evaluate_arrays, load_pairs

    images, issame = load_pairs(folder / "pairs.bin", SIZE, non_square=non_square)
    padded, _ = load_pairs(folder / "pairs.bin", SIZE, non_square="pad")
    assert not np.array_equal(images, padded)  # the 30x40 face differs
    embedder = FaceEmbedder(model, non_square=non_square)
    result = json.loads((folder / f"{non_square}.json").read_text())["sets"]["pairs"]
    assert result["accuracy"] == pytest.approx(evaluate_arrays(embedder.forward, images, issame, nrof_folds=3).accuracy)
    assert infer.main(["--model", model, "--images", paths[5], "--non-square", non_square]) == 0
    assert f"(non_square: {non_square})" in capsys.readouterr().out


def test_validate_gives_intervals_over_people_when_the_set_names_them(model_and_set, tmp_path, capsys):
    """The set's people file (face k is person k) turns the pairs' Wilson intervals into intervals
    over its 6 people, said in the output with the warning for so few; without one, the output
    says the pairs are assumed independent."""
    import shutil

    from paddle_pfc.evaluation.operating_point import error_rates
    from paddle_pfc.evaluation.pair_people import read_pair_people, write_pair_people
    from paddle_pfc.evaluation.validation import load_pairs

    folder, model, _ = model_and_set
    shutil.copy(folder / "pairs.bin", tmp_path / "pairs.bin")
    order = [(0, 1), (2, 3), (4, 5), (0, 2), (1, 3), (5, 0), (1, 1), (2, 2), (3, 4), (4, 4), (5, 5), (0, 0)]
    write_pair_people(tmp_path / "pairs.bin", [(f"person{a}", f"person{b}") for a, b in order])
    assert validate.main(["--model", model, "--bin", str(tmp_path / "pairs.bin"), "--nrof-folds", "3",
                          "--threshold", "0.5", "--json", str(tmp_path / "out.json")]) == 0
    out = capsys.readouterr().out
    assert "    95 % intervals over people: where the rates of another 6 people like these land" in out
    assert "    warning: only 6 people: error-rate intervals over them cannot be trusted to carry to new people" in out
    assert "(95 % bounds over 6 people)" in out.strip().splitlines()[-1]
    checked = json.loads((tmp_path / "out.json").read_text())["sets"]["pairs"]["checked"]
    images, issame = load_pairs(tmp_path / "pairs.bin", SIZE)
    embedder = FaceEmbedder(model)
    summed = (embedder.forward(images) + embedder.forward(np.ascontiguousarray(images[:, :, :, ::-1]))).astype(float)
    unit = summed / np.linalg.norm(summed, axis=1, keepdims=True)
    rates = error_rates(np.sum(unit[0::2] * unit[1::2], axis=1), issame, 0.5,
                        read_pair_people(tmp_path / "pairs.bin", issame))
    assert checked["interval_method"] == "people_bootstrap" and checked["people"] == 6
    assert checked["frr_interval"] == pytest.approx(rates.frr_interval, abs=1e-9)
    assert checked["far_interval"] == pytest.approx(rates.far_interval, abs=1e-9)
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3",
                          "--threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "    95 % Wilson intervals, pairs assumed independent" in out and "over pairs assumed independent)" in out


def test_validate_says_whether_other_people_stay_within_the_recorded_intervals(model_and_set, tmp_path, capsys):
    """--record on a set naming its 6 people: its intervals are cross-validated (the set chose the
    threshold); a second set of other pairs is checked against them, inside or outside as its rates
    and the recorded intervals say; the record read back carries them to a later validate."""
    import shutil

    from paddle_pfc.evaluation.pair_people import write_pair_people
    from paddle_pfc.evaluation.threshold_record import read_record

    folder, model, _ = model_and_set
    shutil.copytree(model, tmp_path / "model")
    order = [(0, 1), (2, 3), (4, 5), (0, 2), (1, 3), (5, 0), (1, 1), (2, 2), (3, 4), (4, 4), (5, 5), (0, 0)]
    shutil.copy(folder / "pairs.bin", tmp_path / "chooser.bin")
    write_pair_people(tmp_path / "chooser.bin", [(f"person{a}", f"person{b}") for a, b in order])
    other = [(1, 2), (3, 5), (0, 4), (2, 2), (3, 3), (1, 1)]
    encoded = [cv2.imencode(".png", cv2.imread(path))[1].tobytes() for path in model_and_set[2]]
    write_bin(str(tmp_path / "others.bin"), [encoded[i] for pair in other for i in pair], [a == b for a, b in other])
    args = ["--model", str(tmp_path / "model"), "--bin", str(tmp_path / "chooser.bin"), str(tmp_path / "others.bin"),
            "--nrof-folds", "3", "--json", str(tmp_path / "out.json")]
    assert validate.main([*args, "--record"]) == 0
    out = capsys.readouterr().out
    sets = json.loads((tmp_path / "out.json").read_text())["sets"]
    chooser, others = sets["chooser"]["checked"], sets["others"]["checked"]
    assert chooser["interval_method"] == "people_bootstrap_cross_validated" and chooser["selection_biased"]
    assert chooser["frr_interval"] == sets["chooser"]["error_rates"]["frr_interval"]
    assert chooser["against_record"] is None
    sides = []
    for kind in ("frr", "far"):
        lo, hi = chooser[f"{kind}_interval"]
        sides.append("inside" if lo <= others[kind] <= hi else ("ABOVE" if others[kind] > hi else "below"))
    line = (f"the record's intervals for new people (from chooser's 6 people): false rejects "
            f"{100 * others['frr']:.2f} % {sides[0]} {100 * chooser['frr_interval'][0]:.2f}-"
            f"{100 * chooser['frr_interval'][1]:.2f} %, false accepts {100 * others['far']:.2f} % {sides[1]} ")
    assert others["against_record"].startswith(line) and f"    {others['against_record']}\n" in out
    record = read_record(tmp_path / "model")
    assert record.predicted["frr_interval"] == chooser["frr_interval"] and record.predicted["set"] == "chooser"
    assert validate.main(args) == 0  # the record read back: the same check
    assert f"    {others['against_record']}\n" in capsys.readouterr().out
    payload = json.loads((tmp_path / "model" / "validation.json").read_text())
    payload["error_rates"]["frr_interval"] = ["0", 2]  # a record is data: a malformed one predicts nothing
    (tmp_path / "model" / "validation.json").write_text(json.dumps(payload))
    assert read_record(tmp_path / "model").predicted is None
    assert read_record(tmp_path / "model").threshold == payload["threshold"]
