#!/usr/bin/env python
"""Write a small sample of synthetic "own faces": an insightface image folder and a .bin of pairs.

    python tools/make_sample_faces.py --out my_faces --identities 20 --images 10

writes ``my_faces/<person>/<n>.jpg`` (``--identities`` people, ``--images`` each), ``my_faces/label.txt``
(``person/n.jpg<TAB>label``, labels ``0 … identities−1``) and ``my_faces/pairs.bin`` (insightface's
verification format: ``--pairs`` pairs of other synthetic people, half of them the same person), so
the documented commands can be tried with nothing else. The faces are
:class:`paddle_pfc.data.synthetic.SyntheticFaces`: deterministic by ``--seed``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder to create (must not exist or be empty)")
    p.add_argument("--identities", type=int, default=20, help="people in the training folder (default: 20)")
    p.add_argument("--images", type=int, default=10, help="images per person (default: 10)")
    p.add_argument("--size", type=int, default=112, help="image side in pixels (default: 112)")
    p.add_argument("--pairs", type=int, default=200,
                   help="verification pairs written to OUT/pairs.bin, from 20 other people (default: 200)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default: 0)")
    args = p.parse_args(argv)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        print(f"error: {out} exists and is not empty", file=sys.stderr)
        return 2
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.synthetic import SyntheticFaces, make_verification_set
    from paddle_pfc.evaluation.bin_set import write_bin

    faces = SyntheticFaces(args.identities, args.images, args.size, seed=args.seed)
    lines = []
    for index in range(len(faces)):
        image, label = faces[index]
        relative = f"person{label:03d}/{index % args.images:04d}.jpg"
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_bytes(encode_jpeg(image))
        lines.append(f"{relative}\t{label}")
    (out / "label.txt").write_text("\n".join(lines) + "\n")
    bins, issame = make_verification_set(20, args.pairs, args.size, seed=args.seed)
    write_bin(str(out / "pairs.bin"), bins, issame)
    print(f"wrote {len(faces)} images of {args.identities} people to {out} (label.txt) and {args.pairs} "
          f"verification pairs to {out / 'pairs.bin'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
