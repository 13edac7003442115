"""Fuzz cases of one reader: its seeds (:mod:`.seeds`) mutated byte-wise (:mod:`.mutations`) or
replaced by a structured hostile file (:mod:`.structured`; for the pickle readers half of those
drawn by hypothesis, :mod:`.strategies`), reproducibly from one seed.

A case of a reader of several files (``rec``, ``labels``, ``checkpoint``) is a copy of the seed
folder with one member mutated; a checkpoint member other than ``meta.json`` is mostly resealed
(its new checksum recorded) so that its reader is reached rather than the checksum refusing it.
"""
from __future__ import annotations

import random
import shutil
from pathlib import Path

from helpers import crafted_pickles as cp
from helpers.fuzz import structured
from helpers.fuzz.mutations import mutate
from helpers.fuzz.seeds import reseal, write_seeds

SUFFIX = {"bin": ".bin", "pdparams": ".pdparams", "torch": ".pt", "onnx": ".onnx", "npz": ".npz", "yaml": ".yaml"}
TEXT_MEMBERS = (".txt", ".idx", ".json", ".yaml")
#: readers of pickles: how a hypothesis-drawn pickle is framed (strategies.pickle_file)
PICKLE_WRAP = {"bin": "bin", "pdparams": "state", "torch": "state"}


def _structured_file(reader: str, rng: random.Random, seed: Path) -> bytes:
    if reader == "bin":
        return structured.pickle_file(rng, "bin")
    if reader == "pdparams":
        return structured.pickle_file(rng, rng.choice(("state", "bare")))
    if reader == "torch":
        return structured.torch_zip_file(rng) if rng.random() < 0.6 else structured.pickle_file(rng, "state")
    if reader == "npz":
        return structured.npz_file(rng)
    if reader == "yaml":
        return structured.yaml_text(rng)
    return mutate(rng, seed.read_bytes())  # onnx: protobuf has no declared sizes beyond what flips reach


def _file_case(reader: str, rng: random.Random, seeds: list[Path], path: Path, share: float, drawn) -> None:
    seed = rng.choice(seeds)
    if rng.random() < share:
        data = next(drawn, None) if drawn is not None and rng.random() < 0.5 else None
        if data is not None and reader == "torch":
            data = cp.torch_zip(data, {})
        path.write_bytes(data if data is not None else _structured_file(reader, rng, seed))
    else:
        path.write_bytes(mutate(rng, seed.read_bytes(), text=reader == "yaml"))


def _folder_case(reader: str, rng: random.Random, seed: Path, case: Path, share: float) -> None:
    shutil.copytree(seed, case)
    members = sorted(p for p in case.rglob("*") if p.is_file())
    member = rng.choice(members)
    if reader == "rec" and rng.random() < share:
        rec, idx = structured.idx_and_rec(rng, (case / "train.rec").read_bytes(), (case / "train.idx").read_bytes())
        (case / "train.rec").write_bytes(rec)
        (case / "train.idx").write_bytes(idx)
        return
    if reader == "labels" and rng.random() < share:
        (case / "label.txt").write_bytes(structured.label_text(rng, (case / "label.txt").read_bytes()))
        return
    if reader == "checkpoint" and member.suffix == ".npz" and rng.random() < share:
        member.write_bytes(structured.npz_file(rng))
    else:
        member.write_bytes(mutate(rng, member.read_bytes(), text=member.suffix in TEXT_MEMBERS))
    if reader == "checkpoint" and member.name != "meta.json" and rng.random() < 0.7:
        reseal(case, member.relative_to(case).as_posix())


def make_cases(reader: str, folder: Path, count: int, seed: int, share: float = 0.35) -> list[Path]:
    """``count`` cases of ``reader`` under ``folder`` (the seeds under ``folder/seeds``); ``share``:
    the fraction that are structured hostile files instead of mutated seeds."""
    folder = Path(folder)
    seeds = write_seeds(reader, folder / "seeds")
    if reader == "yaml":  # the cases' _base_ references resolve next to them
        for path in seeds:
            shutil.copy(path, folder / path.name)
    rng = random.Random(seed)
    drawn = None
    if reader in PICKLE_WRAP:
        from helpers.fuzz.strategies import examples, pickle_file

        drawn = iter(examples(pickle_file(PICKLE_WRAP[reader]), max(1, int(count * share)), seed))
    cases = []
    for index in range(count):
        if reader in SUFFIX:
            case = folder / f"case_{index:05d}{SUFFIX[reader]}"
            _file_case(reader, rng, seeds, case, share, drawn)
        else:
            case = folder / f"case_{index:05d}"
            _folder_case(reader, rng, rng.choice(seeds), case, share)
        cases.append(case)
    return cases
