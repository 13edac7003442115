"""Hold identities of an image folder out of training and write their verification pairs.

Usage (from the repo root)::

    python tools/pairs.py --root my_faces [--holdout 0.2 | --holdout-ids N] [--seed 0]

From ``ROOT/label.txt`` (``relative/path<TAB>label`` lines, docs/your_own_data.md) it writes, in
``ROOT`` (a ``ROOT`` of one sub-folder of images per person and no ``label.txt``: it writes
``label.txt`` first, one label per sub-folder in name order):

* ``pairs.bin``: an insightface verification set of the held-out identities: every genuine pair
  (two images of one identity; at most ``--max-genuine``, drawn at random) and as many impostor
  pairs (two identities), shuffled. Pair ``k`` is images ``2k`` and ``2k+1``, ``issame[k]`` says
  whether they show one identity. JPEG and PNG files are stored as they are, other formats
  re-encoded as PNG.
* ``train_label.txt``: the other identities' lines, labels renumbered ``0 .. C-1``: what
  ``paddle-pfc-im2rec --label-file train_label.txt`` converts and ``data.kind: folder`` reads
  (``data.label_file``), so training never sees a held-out identity.

The training recipes validate on ``pairs.bin`` (relative to ``data.root``; ``paddle-pfc-im2rec``
copies it next to ``train.rec``), which is how ``best/`` is chosen. The same list and ``--seed``
give the same split and pairs.
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
    args.root = os.path.abspath(args.root)
    for name in ("label_file", "bin", "train_label"):
        setattr(args, name, os.path.join(args.root, getattr(args, name)))
    if os.path.abspath(args.train_label) == os.path.abspath(args.label_file):
        ap.error(f"--train-label {args.train_label} would overwrite the label file it is made from")
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


def _next_commands(args: argparse.Namespace, num_classes: int) -> list[str]:
    """The commands that train on the split, as they run from the current folder."""
    root = shlex.quote(shown(args.root))
    label = shlex.quote(os.path.relpath(args.train_label, args.root))
    rec = shlex.quote(shown(args.root.rstrip(os.sep) + "_rec"))
    return [f"python tools/im2rec.py --root {root} --label-file {label} --output {rec}",
            f"python tools/train.py -c configs/train_small.yaml -o data.root={rec} -o data.num_classes={num_classes}",
            f"  (or straight from the folder: -o data.kind=folder -o data.root={root} -o data.label_file={label})"]


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


def write_split(args: argparse.Namespace) -> dict:
    """Split, write both files (each whole or not at all) and return what was written."""
    from paddle_pfc.data.holdout import group_by_identity, holdout_count, split_identities, verification_pairs
    from paddle_pfc.data.image_folder import parse_label_file
    from paddle_pfc.evaluation.bin_set import write_bin
    from paddle_pfc.utils.atomic import write_text_atomic

    samples, _ = parse_label_file(args.label_file, args.root, check_files=True)
    groups = group_by_identity(samples)
    count = holdout_count(len(groups), args.holdout, args.holdout_ids)
    train, heldout = split_identities(groups, count, args.seed)
    pairs = verification_pairs(groups, heldout, args.max_genuine, args.seed)
    cache: dict[str, bytes] = {}
    bins = [stored_bytes(path, cache) for a, b, _ in pairs for path in (a, b)]
    write_bin(args.bin + ".tmp", bins, [same for _, _, same in pairs])
    os.replace(args.bin + ".tmp", args.bin)
    write_text_atomic(args.train_label, train_label_text(groups, train, args.root))
    return {"train_ids": len(train), "train_images": sum(len(groups[g]) for g in train),
            "heldout_ids": len(heldout), "heldout_images": sum(len(groups[g]) for g in heldout),
            "heldout_names": [identity_name(groups[g], args.root) for g in heldout],
            "genuine": sum(same for _, _, same in pairs), "impostor": sum(not same for _, _, same in pairs)}


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
    train_label, pairs_bin = shown(args.train_label), shown(args.bin)
    print(f"pairs: training: {info['train_ids']} identities, {info['train_images']} images -> {train_label} "
          f"(labels 0..{info['train_ids'] - 1})")
    print(f"pairs: held out: {info['heldout_ids']} identities, {info['heldout_images']} images -> {pairs_bin} "
          f"({info['genuine']} genuine + {info['impostor']} impostor pairs)")
    names = info["heldout_names"]
    print(f"pairs: held-out identities: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''}")
    print("next:\n" + "\n".join(f"  {line}" for line in _next_commands(args, info["train_ids"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
