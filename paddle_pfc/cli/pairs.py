"""Hold identities of an image folder out of training and write their verification pairs.

Usage (from the repo root)::

    python tools/pairs.py --root my_faces [--holdout 0.2 | --holdout-ids N] [--test-ids M] [--seed 0]
    python tools/pairs.py --root new_people --eval-only

From ``ROOT/label.txt`` (``relative/path<TAB>label`` lines, docs/your_own_data.md) it writes, in
``ROOT`` (a ``ROOT`` of one sub-folder of images per person and no ``label.txt``: it writes
``label.txt`` first, one label per sub-folder in name order):

* ``pairs.bin``: an insightface verification set of the held-out identities: every genuine pair
  (two images of one identity; at most ``--max-genuine``, drawn at random) and as many impostor
  pairs (two identities), shuffled. Pair ``k`` is images ``2k`` and ``2k+1``, ``issame[k]`` says
  whether they show one identity. JPEG and PNG files are stored as they are, other formats
  re-encoded as PNG.
* ``test_pairs.bin`` (``--test-ids M``): the same kind of set of M further held-out identities,
  neither trained on nor choosing ``best/`` and its threshold: the numbers of
  ``paddle-pfc-validate --bin test_pairs.bin`` are what new people get.
* ``train_label.txt``: the other identities' lines, labels renumbered ``0 .. C-1``: what
  ``paddle-pfc-im2rec --label-file train_label.txt`` converts and ``data.kind: folder`` reads
  (``data.label_file``), so training never sees a held-out identity.

Beside each ``.bin`` it writes who each pair shows: ``pairs.people.json`` (``test_pairs.people.json``;
:mod:`paddle_pfc.evaluation.pair_people`), the two identities' names of every pair, so that
``paddle-pfc-validate`` and validation during training give the error rates intervals over
people, not over pairs assumed independent.

``--eval-only`` holds every identity out: ``pairs.bin`` of all of them, no ``train_label.txt``
(scoring a model on a new group of people).

The training recipes validate on ``pairs.bin`` (relative to ``data.root``; ``paddle-pfc-im2rec``
copies it next to ``train.rec``), which is how ``best/`` and its threshold are chosen: accuracy on
it is selection-biased. The same list and ``--seed`` give the same split and pairs.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys

from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter

_JPEG, _PNG = b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n"


def _parser() -> argparse.ArgumentParser:
    """The command's options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=HelpFormatter)
    ap.add_argument("--root", required=True,
                    help="folder holding label.txt and the images, or one sub-folder of images per person")
    ap.add_argument("--label-file", default="label.txt",
                    help="label file relative to --root (written from the sub-folders when missing)")
    side = ap.add_mutually_exclusive_group()
    side.add_argument("--holdout", type=float, default=0.2,
                      help="fraction of the identities held out (at least 2)")
    side.add_argument("--holdout-ids", type=int, default=None, help="number of identities held out")
    side.add_argument("--eval-only", action="store_true",
                      help="hold every identity out: pairs.bin of all of them, no training label file")
    ap.add_argument("--test-ids", type=int, default=0,
                    help="further identities held out for the test set (--test-bin), scored by validate only")
    ap.add_argument("--test-bin", default="test_pairs.bin", help="test set to write, relative to --root")
    ap.add_argument("--seed", type=int, default=0, help="seed of the split and of the pairs")
    ap.add_argument("--max-genuine", type=int, default=500,
                    help="at most this many genuine pairs (drawn at random), as many impostor pairs")
    ap.add_argument("--bin", default="pairs.bin", help="verification set to write, relative to --root")
    ap.add_argument("--train-label", default="train_label.txt",
                    help="label file of the training identities to write, relative to --root")
    return ap


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The options, paths made absolute; a bad option exits 2."""
    ap = _parser()
    args = ap.parse_args(argv)
    if args.holdout_ids is None and not 0.0 < args.holdout < 1.0:
        ap.error("--holdout must be a fraction in (0, 1)")
    if args.max_genuine < 1:
        ap.error("--max-genuine must be >= 1")
    if args.test_ids < 0 or (args.eval_only and args.test_ids):
        ap.error("--test-ids must be >= 0 (and --eval-only holds out every identity: no test set beside it)")
    args.root = os.path.abspath(args.root)
    for name in ("label_file", "bin", "train_label", "test_bin"):
        setattr(args, name, os.path.join(args.root, getattr(args, name)))
    if os.path.abspath(args.train_label) == os.path.abspath(args.label_file):
        ap.error(f"--train-label {args.train_label} would overwrite the label file it is made from")
    if args.test_ids and os.path.abspath(args.test_bin) == os.path.abspath(args.bin):
        ap.error(f"--test-bin {args.test_bin} is the selection set --bin: give the test set its own file")
    return args


def stored_bytes(path: str, cache: dict[str, bytes]) -> bytes:
    """What ``pairs.bin`` stores for the image at ``path``: the file's bytes if it is a JPEG or PNG,
    else the image re-encoded as PNG (``ValueError`` naming the file when it cannot be decoded).
    One bytes object per file, so the pickle writes each image once however many pairs use it."""
    if path not in cache:
        with open(path, "rb") as f:
            data = f.read()
        if not data.startswith((_JPEG, _PNG)):
            import cv2

            from paddle_pfc.data._image import decode_rgb

            ok, encoded = cv2.imencode(".png", cv2.cvtColor(decode_rgb(data, path), cv2.COLOR_RGB2BGR))
            if not ok:
                raise ValueError(f"{path}: PNG encoding failed")
            data = encoded.tobytes()
        cache[path] = data
    return cache[path]


def train_label_text(groups: dict[int, list[str]], train: list[int], root: str) -> str:
    """``train_label.txt``: each training image's path relative to ``root`` and its new label
    (the training identities in ascending order of their old label, numbered from 0)."""
    lines = [f"{os.path.relpath(path, root)}\t{new}" for new, old in enumerate(train) for path in groups[old]]
    return "\n".join(lines) + "\n"


def identity_name(paths: list[str], root: str) -> str:
    """How to name an identity to a user: the folder of its images relative to ``root`` when they
    share one, else its first image."""
    folders = {os.path.dirname(os.path.relpath(path, root)) for path in paths}
    return folders.pop() if len(folders) == 1 and "" not in folders else os.path.relpath(paths[0], root)


def shown(path: str) -> str:
    """``path`` relative to the current folder when it lies inside it, else absolute."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _next_commands(args: argparse.Namespace) -> list[str]:
    """The commands that train on the split, as they run from the current folder (the training
    config reads the number of training people from the data)."""
    root = shlex.quote(shown(args.root))
    label = shlex.quote(os.path.relpath(args.train_label, args.root))
    rec = shlex.quote(shown(args.root.rstrip(os.sep) + "_rec"))
    return [f"python tools/im2rec.py --root {root} --label-file {label} --output {rec}",
            f"python tools/train.py -c configs/train_small.yaml -o data.root={rec}",
            f"  (or straight from the folder: -o data.kind=folder -o data.root={root} -o data.label_file={label})"] + (
        [f"python tools/validate.py --checkpoint output/train_small/best --bin {shlex.quote(shown(args.test_bin))}"]
        if args.test_ids else [])


def write_folder_labels(args: argparse.Namespace) -> str | None:
    """When the label file is missing and ``--root`` holds one sub-folder of images per person:
    write it (each sub-folder one label, ``0 .. N-1`` in name order) and return the line saying
    so; None when it exists. ``UsageError`` when it is missing and cannot be made."""
    if os.path.exists(args.label_file):
        return None
    from paddle_pfc.deploy.inference import person_folders
    from paddle_pfc.utils.atomic import write_text_atomic
    from paddle_pfc.utils.errors import UsageError

    people = person_folders(args.root) if os.path.isdir(args.root) else {}
    if not people:
        raise UsageError(f"{shown(args.label_file)}: no such file, and {shown(args.root)} holds no sub-folders "
                         "of images (one per person) to write it from (docs/your_own_data.md)")
    lines = [f"{os.path.relpath(path, args.root)}\t{label}" for label, files in enumerate(people.values())
             for path in files]
    write_text_atomic(args.label_file, "\n".join(lines) + "\n")
    return (f"pairs: {shown(args.label_file)} written from {len(people)} sub-folders of {shown(args.root)}, "
            f"one identity each ({len(lines)} images, labels 0..{len(people) - 1} in folder-name order)")


def person_names(groups: dict[int, list[str]], labels: list[int], root: str) -> dict[str, str]:
    """``{image path: its identity's name}`` for the identities ``labels``: :func:`identity_name`,
    with `` (label N)`` added to names that two of them share."""
    names = {label: identity_name(groups[label], root) for label in labels}
    shared = {name for name in names.values() if list(names.values()).count(name) > 1}
    return {path: f"{name} (label {label})" if name in shared else name
            for label, name in names.items() for path in groups[label]}


def _write_pairs(path: str, pairs: list[tuple[str, str, bool]], cache: dict[str, bytes],
                 person_of: dict[str, str]) -> None:
    """Write ``pairs`` as a .bin set and its people file (each whole or not at all)."""
    from paddle_pfc.evaluation.bin_set import write_bin
    from paddle_pfc.evaluation.pair_people import people_path, write_pair_people

    stale = people_path(path)
    if os.path.exists(stale):  # an earlier run's, removed before the set it describes changes
        os.remove(stale)
    bins = [stored_bytes(p, cache) for a, b, _ in pairs for p in (a, b)]
    write_bin(path + ".tmp", bins, [same for _, _, same in pairs])
    os.replace(path + ".tmp", path)
    write_pair_people(path, [(person_of[a], person_of[b]) for a, b, _ in pairs])


def write_split(args: argparse.Namespace) -> dict:
    """Split, write the files (each whole or not at all) and return what was written."""
    from paddle_pfc.data import holdout
    from paddle_pfc.data.image_folder import parse_label_file
    from paddle_pfc.utils.atomic import write_text_atomic

    samples, _ = parse_label_file(args.label_file, args.root, check_files=True)
    groups = holdout.group_by_identity(samples)
    if args.eval_only:
        train, heldout, test = [], holdout.pair_identities(groups), []
    else:
        count = holdout.holdout_count(len(groups), args.holdout, args.holdout_ids)
        train, heldout, test = holdout.split_identities(groups, count, args.seed,
                                                        holdout.count_for_test(len(groups), count, args.test_ids))
    pairs = holdout.verification_pairs(groups, heldout, args.max_genuine, args.seed)
    test_pairs = holdout.verification_pairs(groups, test, args.max_genuine, args.seed + 2) if test else []
    cache: dict[str, bytes] = {}
    _write_pairs(args.bin, pairs, cache, person_names(groups, heldout, args.root))
    if test:
        _write_pairs(args.test_bin, test_pairs, cache, person_names(groups, test, args.root))
    if train:
        write_text_atomic(args.train_label, train_label_text(groups, train, args.root))

    def side(labels: list[int], made: list[tuple[str, str, bool]]) -> dict:
        return {"ids": len(labels), "images": sum(len(groups[g]) for g in labels),
                "names": [identity_name(groups[g], args.root) for g in labels],
                "genuine": sum(same for _, _, same in made), "impostor": sum(not same for _, _, same in made)}
    return {"train_ids": len(train), "train_images": sum(len(groups[g]) for g in train),
            "heldout": side(heldout, pairs), "test": side(test, test_pairs), "unpaired": len(groups) - len(train)
            - len(heldout) - len(test)}


def _held_lines(what: str, who: str, path: str, side: dict) -> list[str]:
    """The lines saying what a pair set holds."""
    names = side["names"]
    from paddle_pfc.evaluation.pair_people import people_path
    from paddle_pfc.evaluation.people_bootstrap import few_people_warning

    return [f"pairs: {what}: {side['ids']} identities, {side['images']} images -> {shown(path)} "
            f"({side['genuine']} genuine + {side['impostor']} impostor pairs; who each shows: "
            f"{shown(people_path(path))})",
            f"pairs: {who} identities: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''}"] + (
        [f"pairs: warning: {who} set: {few}"] if (few := few_people_warning(side["ids"])) else [])


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 written, 2 a bad label file, image or split (``pairs: error: ...``; nothing
    written); a bad option is argparse's exit 2."""
    args = _parse(argv)
    try:
        made = write_folder_labels(args)
        if made:
            print(made)
        info = write_split(args)
    except USER_ERRORS as e:
        return usage_failure(e, "pairs: error")
    if args.eval_only:
        print("\n".join(_held_lines("evaluation only, every identity held out", "held-out", args.bin, info["heldout"])))
        if info["unpaired"]:
            print(f"pairs: {info['unpaired']} identities of one image make no genuine pair: left out")
        print(f"next:\n  python tools/validate.py --model MODEL --bin {shlex.quote(shown(args.bin))}")
        return 0
    print(f"pairs: training: {info['train_ids']} identities, {info['train_images']} images -> "
          f"{shown(args.train_label)} (labels 0..{info['train_ids'] - 1})")
    print("\n".join(_held_lines("held out", "held-out", args.bin, info["heldout"])))
    print(f"pairs: {shown(args.bin)} chooses best/ and its threshold: accuracy on it is selection-biased")
    if info["test"]["ids"]:
        print("\n".join(_held_lines("test", "test", args.test_bin, info["test"])))
        print(f"pairs: {shown(args.test_bin)}: people neither training nor selection sees, what new people get")
    print("next:\n" + "\n".join(f"  {line}" for line in _next_commands(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
