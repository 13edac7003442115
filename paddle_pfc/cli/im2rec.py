"""Convert an insightface image folder (``root/label.txt`` + images) to ``train.rec`` / ``train.idx``.

Usage (from the repo root)::

    python tools/im2rec.py --root DIR --output OUTDIR [--quality 95] [--image-size 112]
                           [--num-classes C] [--skip-bad] [--workers N] [--landmarks FILE]
                           [--non-square pad|crop|stretch]

The output follows insightface's MS1M/Glint360K layout (images keys 1..N
sorted by label, header record 0, one identity record per class) and a
``property`` file ``C,H,W`` when all images share one size.
Images are decoded and re-encoded as JPEG at ``--quality``, converted by the one policy of every
command (paddle_pfc.data.photos: grey -> 3 equal channels; with ``--image-size``, non-square ->
made square by ``--non-square``: stretched, padded with its border or centre-cropped, then
resized), said in one line. ``--landmarks FILE`` (lines
``image x1 y1 ... x5 y5``, see paddle_pfc.data.photos) first aligns each image on the ArcFace
template (paddle_pfc.evaluation.face_align; 112x112, or ``--image-size S``).

``--workers N`` decodes and encodes in N processes (default: the CPU count, at most 8); the
records are written in the same order, so the output is byte-identical to ``--workers 0``
(in this process). A progress line (images done, images/s, eta) is printed every
``--progress-every`` seconds, and the final line reports the rate.

A ``pairs.bin`` in ``--root`` (the held-out pairs ``paddle-pfc-pairs`` writes) is copied into
``--output`` with its people file ``pairs.people.json``, where the training recipes look for it
(``validation.sets`` relative to ``data.root``).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

from paddle_pfc.cli._photos import add_non_square_option
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.utils.progress import Progress

CHUNK = 64  # images per task handed to a worker

_SAMPLES: list = []  # (path, label) in output order; set before the workers fork
_OPTIONS: dict = {}


def _init(samples, options) -> None:
    global _SAMPLES, _OPTIONS
    _SAMPLES, _OPTIONS = samples, options


def _load(path: str, conversions):
    """The image at ``path`` as written: aligned on its landmarks (with --landmarks), converted by
    the policy; ``ValueError`` naming the file."""
    from paddle_pfc.data._image import read_rgb

    img, size, points = read_rgb(path), _OPTIONS["size"], _OPTIONS["landmarks"]
    if points is not None:
        from paddle_pfc.evaluation.face_align import align_face

        found = points.get(os.path.realpath(path))
        if found is None:
            raise ValueError(f"{path}: no line of the --landmarks file names this image")
        img = align_face(img, found, size[0] if size and size[0] == size[1] else 112)
    return conversions.fit(img, size, path)


def convert(span: tuple[int, int]) -> tuple[list[tuple[int, bytes | None, tuple | str]], object]:
    """``([(label, jpeg, (h, w))], conversions)`` of samples ``[start, stop)``; with skip_bad an
    unreadable image gives ``(label, None, reason)``, the reason naming the file (else
    ``ValueError`` naming it)."""
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.photos import Conversions

    out, conversions = [], Conversions(_OPTIONS["non_square"])
    for path, label in _SAMPLES[span[0]:span[1]]:
        try:
            img = _load(path, conversions)
        except ValueError as e:
            if not _OPTIONS["skip_bad"]:
                raise
            out.append((label, None, str(e)))
            continue
        out.append((label, encode_jpeg(img, _OPTIONS["quality"]), img.shape[:2]))
    return out, conversions


def default_workers() -> int:
    """The CPU count, at most 8."""
    return min(8, os.cpu_count() or 1)


def _parser() -> argparse.ArgumentParser:
    """The command's options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=HelpFormatter)
    ap.add_argument("--root", required=True, help="folder containing label.txt and the images")
    ap.add_argument("--output", required=True, help="output folder for train.rec / train.idx")
    ap.add_argument("--label-file", default="label.txt", help="label file relative to --root")
    ap.add_argument("--quality", type=int, default=95, help="JPEG quality 1-100")
    ap.add_argument("--image-size", type=int, nargs="+", default=None,
                    help="resize to S or H W (default: keep each image's size)")
    ap.add_argument("--num-classes", type=int, default=None, help="default: max label + 1")
    ap.add_argument("--skip-bad", action="store_true", help="skip missing/undecodable images instead of failing")
    ap.add_argument("--allow-outside-root", action="store_true",
                    help="let the label file name images outside --root (absolute paths, '..', symlinks "
                         "leading out); refused by default")
    ap.add_argument("--prefix", default="train", help="output names: PREFIX.rec / PREFIX.idx")
    ap.add_argument("--workers", type=int, default=default_workers(),
                    help="decode/encode processes (0: in this process); output is identical")
    ap.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    ap.add_argument("--landmarks", metavar="FILE",
                    help="align each image on its five points in FILE first (lines: image x1 y1 ... x5 y5)")
    add_non_square_option(ap)
    return ap


def _parse(argv: list[str] | None) -> tuple[argparse.Namespace, tuple[int, int] | None]:
    """The options and the output image size (None: keep each image's); a bad option exits 2."""
    ap = _parser()
    args = ap.parse_args(argv)
    if not 1 <= args.quality <= 100:
        ap.error("--quality must be in 1..100")
    if args.workers < 0:
        ap.error("--workers must be >= 0")
    from paddle_pfc.cli._outputs import check_output_dir

    check_output_dir(ap, "--output", args.output)
    from paddle_pfc.data._image import as_size

    size = None
    if args.image_size is not None:
        if len(args.image_size) not in (1, 2):
            ap.error("--image-size takes S or H W")
        size = as_size(args.image_size[0] if len(args.image_size) == 1 else tuple(args.image_size))
    return args, size


def _read_samples(args: argparse.Namespace) -> tuple[list, list]:
    """``(samples, skipped)`` of the label file, samples sorted by label (identities contiguous);
    ``ValueError`` naming the file when it is bad or yields no usable sample."""
    import numpy as np

    from paddle_pfc.data.image_folder import parse_label_file

    root = os.path.abspath(args.root)
    label_file = args.label_file if os.path.isabs(args.label_file) else os.path.join(root, args.label_file)
    if os.path.isdir(root) and not os.path.exists(label_file) and os.path.basename(label_file) == "train_label.txt":
        raise ValueError(f"{label_file}: not found (python tools/pairs.py --root {args.root} writes it: the "
                         "identities it does not hold out for validation)")
    samples, skipped = parse_label_file(label_file, root, args.num_classes, check_files=True,
                                        skip_missing=args.skip_bad,
                                        allow_outside_root=args.allow_outside_root)
    if not samples:
        raise ValueError(f"{label_file}: no usable samples")
    order = np.argsort(samples.labels, kind="stable")
    return [samples[i] for i in order], skipped


class _Tally:
    """What the written records held: image sizes, labels with an image, skipped-image reasons."""

    def __init__(self, skipped: list, progress: Progress, non_square: str) -> None:
        from paddle_pfc.data.photos import Conversions

        self.conversions = Conversions(non_square)
        self.sizes: set = set()
        self.written: set = set()
        self.bad = [f"{path}: {reason}" for path, reason in skipped]  # each skipped image, its path first
        self.progress = progress

    def items(self, results):
        """``(label, jpeg)`` of each encoded image in ``results``, noting sizes and skipped ones."""
        for chunk, conversions in results:
            self.conversions.add(conversions)
            for label, data, info in chunk:
                self.progress.update(1)
                if data is None:
                    self.bad.append(info)
                    continue
                self.sizes.add(info)
                self.written.add(label)
                yield label, data


def _encode_and_write(args: argparse.Namespace, ordered: list, size, num_classes: int, tally: _Tally) -> dict:
    """Encode ``ordered`` in ``args.workers`` processes (0: here), in order, and write the record
    files; the writer's summary. ``ValueError`` on a bad image (without --skip-bad)."""
    from paddle_pfc.data.recordio import write_insightface_rec

    landmarks = None
    if args.landmarks:
        from paddle_pfc.data.photos import read_landmarks

        landmarks = read_landmarks(args.landmarks)
    options = {"size": size, "quality": args.quality, "skip_bad": args.skip_bad, "landmarks": landmarks,
               "non_square": args.non_square}
    spans = [(s, min(s + CHUNK, len(ordered))) for s in range(0, len(ordered), CHUNK)]
    pool = None
    try:
        if args.workers == 0:
            _init(ordered, options)
            results = map(convert, spans)
        else:
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            pool = mp.get_context(method).Pool(args.workers, initializer=_init, initargs=(ordered, options))
            results = pool.imap(convert, spans)  # in order: the same bytes as in-process
        return write_insightface_rec(args.output, tally.items(results), num_classes=num_classes,
                                     prefix=args.prefix, presorted=True)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def _write_property(output: str, sizes: set, num_classes: int) -> None:
    """Write ``property`` (``C,H,W``) when all images share one size, else remove an earlier one."""
    property_path = os.path.join(output, "property")
    if len(sizes) == 1:
        (h, w), = sizes
        with open(property_path, "w") as f:
            f.write(f"{num_classes},{h},{w}\n")
    elif os.path.exists(property_path):  # an earlier run's: its size no longer describes the images
        os.remove(property_path)


def _copy_pairs(root: str, output: str) -> str | None:
    """Copy ``root/pairs.bin`` and its people file, when there is one, into ``output`` (each whole
    or not at all); the copy's path, or None."""
    source, target = os.path.join(root, "pairs.bin"), os.path.join(output, "pairs.bin")
    if not os.path.isfile(source) or os.path.abspath(source) == os.path.abspath(target):
        return None
    from paddle_pfc.evaluation.pair_people import people_path
    from paddle_pfc.utils.atomic import write_bytes_atomic

    for source_file, target_file in ((source, target), (people_path(source), people_path(target))):
        if os.path.isfile(source_file):
            with open(source_file, "rb") as f:
                write_bytes_atomic(target_file, f.read())
        elif os.path.exists(target_file):  # an earlier copy's: it describes another set
            os.remove(target_file)
    return target


def _report(info: dict, tally: _Tally, workers: int, elapsed: float, size) -> None:
    """Skipped images and empty classes on stderr, the conversions' line and the summary line on
    stdout."""
    if said := tally.conversions.line(size):
        print(f"im2rec: {said}")
    for reason in tally.bad:
        print(f"im2rec: skipped {reason}", file=sys.stderr)
    empty = sorted(set(range(info["num_classes"])) - tally.written)
    if empty:
        shown = ", ".join(str(c) for c in empty[:10]) + (", ..." if len(empty) > 10 else "")
        print(f"im2rec: note: {len(empty)} of {info['num_classes']} classes have no image ({shown})",
              file=sys.stderr)
    print(f"im2rec: wrote {info['num_images']} images, {info['num_classes']} classes to {info['rec']} "
          f"({len(tally.bad)} skipped) in {elapsed:.1f}s, {info['num_images'] / max(elapsed, 1e-9):.1f} images/s "
          f"with {workers} worker(s)")


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 written, 2 a bad label file or image (``im2rec: error: ...``; the output
    folder's ``.rec`` / ``.idx`` are then as before the run); a bad option is argparse's exit 2.
    Each image ``--skip-bad`` skipped, and the classes left without an image, are listed on stderr."""
    args, size = _parse(argv)
    t0 = time.time()
    try:
        ordered, skipped = _read_samples(args)
    except USER_ERRORS as e:
        return usage_failure(e, "im2rec: error")
    num_classes = args.num_classes if args.num_classes is not None else max(lab for _, lab in ordered) + 1
    progress = Progress("im2rec", len(ordered), "images", every_seconds=args.progress_every, write=print)
    tally = _Tally(skipped, progress, args.non_square)
    try:
        info = _encode_and_write(args, ordered, size, num_classes, tally)
    except USER_ERRORS as e:
        return usage_failure(e, "im2rec: error")
    progress.close()
    _write_property(args.output, tally.sizes, info["num_classes"])
    copied = _copy_pairs(args.root, args.output)
    _report(info, tally, args.workers, time.time() - t0, size)
    if copied:
        print(f"im2rec: copied the verification pairs {os.path.join(args.root, 'pairs.bin')} to {copied}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
