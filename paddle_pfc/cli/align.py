"""Aligned 112x112 face crops of photos: faces found by a face detector, or five landmarks given.

Usage (from the repo root)::

    python tools/align.py --detector scrfd_500m_bnkps.onnx --images photos/ a.jpg --output aligned/
    python tools/align.py --landmarks points.txt --images photos/ --output aligned/
    python tools/align.py --detector scrfd_500m_bnkps.onnx --images photos/ --output my_faces/
        # photos/ of one sub-folder per person: my_faces/<person>/<image name>.jpg

``--detector``: an SCRFD ONNX model with landmarks (insightface's ``scrfd_*_bnkps.onnx``, not
shipped here; paddle_pfc.evaluation.face_detect). ``--landmarks FILE``: lines
``image x1 y1 ... x5 y5`` (paddle_pfc.data.photos). Each face is warped onto the ArcFace template
(paddle_pfc.evaluation.face_align) and written as ``OUTPUT/<image name>.jpg`` (``<folder>_<image
name>.jpg`` when names repeat; ``<person>/<image name>.jpg`` for a folder of one sub-folder per
person, the layout paddle-pfc-pairs reads; a photo's best face; ``--all-faces``: every face,
``<image name>_<k>.jpg``, best score first), and the five points of each photo's best face, in
the photo's pixels, go to ``OUTPUT/landmarks.txt`` (the
``--landmarks`` format of paddle-pfc-im2rec and paddle-pfc-infer). A photo without a face is
listed and skipped. The crops are what paddle-pfc-im2rec, -validate and -infer expect.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--detector", metavar="ONNX", help="SCRFD face detector with landmarks (*_bnkps.onnx)")
    src.add_argument("--landmarks", metavar="FILE", help="five points per image (lines: image x1 y1 ... x5 y5)")
    p.add_argument("--images", nargs="+", required=True, help="image files and/or folders")
    p.add_argument("--output", required=True, help="folder of the aligned crops and landmarks.txt")
    p.add_argument("--size", type=int, default=112, help="side of the crops (the template is scaled)")
    p.add_argument("--all-faces", action="store_true", help="every face of a photo (default: its best one)")
    p.add_argument("--min-score", type=float, default=0.5, help="detector score a face needs")
    p.add_argument("--detector-size", type=int, default=640,
                   help="largest side the detector sees (larger photos are shrunk; a multiple of 32)")
    args = p.parse_args(argv)
    if args.size < 16:
        p.error("--size must be >= 16")
    if args.detector_size < 32 or args.detector_size % 32:
        p.error("--detector-size must be a positive multiple of 32")
    if not 0.0 <= args.min_score <= 1.0:
        p.error("--min-score must be in [0, 1]")
    from paddle_pfc.cli._outputs import check_output_dir

    check_output_dir(p, "--output", args.output)
    return args


def _faces(args: argparse.Namespace, detector, points: dict | None, path: str, rgb) -> list:
    """The five points of each face of ``path`` to write (best first)."""
    if points is not None:
        found = points.get(os.path.realpath(path))
        return [] if found is None else [found]
    faces = detector.detect(rgb)
    return [face.landmarks for face in (faces if args.all_faces else faces[:1])]


def _unique_names(paths: list[str]) -> list[str]:
    """An output name per image: its file name without extension; ``<folder>_<name>`` when names
    repeat (``s1/1.pgm``, ``s2/1.pgm``: ``s1_1``, ``s2_1``), then a number if still needed."""
    stems = [os.path.splitext(os.path.basename(path))[0] for path in paths]
    if len(set(stems)) < len(stems):
        stems = [f"{os.path.basename(os.path.dirname(os.path.abspath(path)))}_{stem}"
                 for path, stem in zip(paths, stems)]
    names, seen = [], {}
    for stem in stems:
        seen[stem] = seen.get(stem, 0) + 1
        names.append(stem if seen[stem] == 1 else f"{stem}~{seen[stem]}")
    return names


def sources(images: list[str]) -> tuple[list[str], list[str]]:
    """``(image paths, output names without extension)`` of ``--images``: a folder of one
    sub-folder per person gives ``<person>/<name>`` (the output mirrors its sub-folders), the other
    images :func:`_unique_names`."""
    from paddle_pfc.deploy.inference import expand_image_paths, person_folders

    paths, names, plain = [], [], []
    for item in images:
        people = person_folders(item) if os.path.isdir(item) else {}
        for person, files in people.items():
            paths.extend(files)
            names.extend(os.path.join(person, name) for name in _unique_names(files))
        if not people:
            plain.append(item)
    if plain:
        files = expand_image_paths(plain)
        paths.extend(files)
        names.extend(_unique_names(files))
    return paths, names


def align_all(args: argparse.Namespace, paths: list[str], names: list[str]) -> tuple[int, int, list[str]]:
    """Write the crops (``OUTPUT/<name>.jpg``) and landmarks.txt; ``(images with a face, crops
    written, images without)``."""
    import cv2

    from paddle_pfc.data.photos import read_landmarks
    from paddle_pfc.deploy.inference import read_image
    from paddle_pfc.evaluation.face_align import align_face

    detector, points = None, None
    if args.detector:
        from paddle_pfc.evaluation.face_detect import FaceDetector

        detector = FaceDetector(args.detector, (args.detector_size, args.detector_size), args.min_score)
    else:
        points = read_landmarks(args.landmarks)
    os.makedirs(args.output, exist_ok=True)
    with_face, written, without = 0, 0, []
    lines = []
    for path, name in zip(paths, names):
        rgb = read_image(path)
        faces = _faces(args, detector, points, path, rgb)
        if not faces:
            without.append(path)
            continue
        with_face += 1
        for k, landmarks in enumerate(faces):
            out = os.path.join(args.output, f"{name}_{k}.jpg" if args.all_faces else f"{name}.jpg")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            crop = align_face(rgb, landmarks, args.size)
            if not cv2.imwrite(out, cv2.cvtColor(crop, cv2.COLOR_RGB2BGR)):
                raise OSError(f"{out}: cannot write the crop")
            if k == 0:  # one line per image: the --landmarks format
                lines.append(f"{os.path.abspath(path)} " + " ".join(f"{v:.2f}" for v in landmarks.ravel()))
            written += 1
    with open(os.path.join(args.output, "landmarks.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))
    return with_face, written, without


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 aligned (photos without a face listed), 2 a missing or unreadable detector,
    landmarks file or image (``error: ...``)."""
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        paths, names = sources(args.images)
        with_face, written, without = align_all(args, paths, names)
    except (*USER_ERRORS, OSError) as e:
        return usage_failure(e)
    for path in without:
        print(f"no face: {path}" + ("" if args.detector else " (no line of --landmarks names it)"))
    people = len({os.path.dirname(name) for name in names} - {""})
    folders = f", {people} folder(s), one per person" if people else ""
    print(f"aligned {written} face(s) of {with_face} of {len(paths)} image(s) to {args.output}/{folders} "
          f"({args.size}x{args.size}; points in {os.path.join(args.output, 'landmarks.txt')}) in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
