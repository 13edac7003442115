"""The people file beside a .bin set: written, read back, and refused when it does not describe
its set."""
from __future__ import annotations

import hashlib
import json

import cv2
import numpy as np
import pytest

from paddle_pfc.evaluation import pair_people as pp
from paddle_pfc.evaluation.bin_set import write_bin
from paddle_pfc.utils.errors import BudgetError, InputDataError

NAMES = [("bob", "bob"), ("alice", "bob"), ("alice", "alice"), ("carol", "alice")]


@pytest.fixture
def bin_path(tmp_path):
    image = cv2.imencode(".png", np.zeros((4, 4), np.uint8))[1].tobytes()
    path = tmp_path / "selection.bin"
    write_bin(str(path), [image] * 8, [a == b for a, b in NAMES])
    return path


def test_written_file_is_plain_json_read_back_as_indices(bin_path):
    written = pp.write_pair_people(bin_path, NAMES)
    assert written == str(bin_path.with_name("selection.people.json"))
    data = json.loads(open(written, encoding="utf-8").read())
    assert data == {"format": "paddle-pfc pair people", "version": 1,
                    "bin_sha256": hashlib.sha256(bin_path.read_bytes()).hexdigest(),
                    "people": ["alice", "bob", "carol"], "pairs": [[1, 1], [0, 1], [0, 0], [2, 0]]}
    people = pp.read_pair_people(bin_path, [a == b for a, b in NAMES])
    assert people.names == ("alice", "bob", "carol") and people.count == 3
    assert [(people.names[a], people.names[b]) for a, b in people.pairs] == NAMES


def test_a_set_without_a_people_file_has_none(bin_path):
    assert pp.read_pair_people(bin_path, [True] * 4) is None
    assert pp.people_path("a/x.bin") == "a/x.people.json" and pp.people_path("a/x") == "a/x.people.json"


def rewrite(path: str, **change) -> None:
    data = json.loads(open(path, encoding="utf-8").read())
    data.update(change)
    open(path, "w", encoding="utf-8").write(json.dumps(data))


@pytest.mark.parametrize("change, message", [
    ({"bin_sha256": "0" * 64}, "describes another file than"),
    ({"pairs": [[1, 1], [0, 1], [0, 0]]}, "3 pairs for a set of 4"),
    ({"pairs": [[1, 1], [0, 1], [0, 0], [2, 2]]}, "pair 3 shows the same person but the set calls it impostor"),
    ({"pairs": [[1, 1], [0, 1], [0, 0], [2, 3]]}, "\"pairs\" must be a list of [i, j] indices"),
    ({"pairs": [[1, 1], [0, 1], [0, 0], [2, True]]}, "\"pairs\" must be a list of [i, j] indices"),
    ({"people": ["alice", "alice", "carol"]}, "\"people\" must be a list of distinct names"),
    ({"format": "something else"}, "not a people file"),
])
def test_a_people_file_that_does_not_describe_its_set_is_refused(bin_path, change, message):
    path = pp.write_pair_people(bin_path, NAMES)
    rewrite(path, **change)
    with pytest.raises(InputDataError, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
        pp.read_pair_people(bin_path, [a == b for a, b in NAMES])
    assert str(caught.value).startswith(path) and "paddle-pfc-pairs" in str(caught.value)


def test_unreadable_and_oversized_people_files_are_refused(bin_path, monkeypatch):
    path = pp.people_path(bin_path)
    open(path, "w").write("{not json")
    with pytest.raises(InputDataError, match="not a readable JSON people file"):
        pp.read_pair_people(bin_path, [True] * 4)
    monkeypatch.setattr(pp, "MAX_FILE_BYTES", 5)
    with pytest.raises(BudgetError, match="size of a people file is 9, over the limit of 5"):
        pp.read_pair_people(bin_path, [True] * 4)
