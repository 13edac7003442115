"""A synthetic IJB set in insightface's release layout (loose crops of synthetic identities, their
landmarks, the protocol files), for the IJB tests and the checkpoint-safety test's entry points."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from paddle_pfc.evaluation.face_align import template_points

SIZE = 32


def similarity(angle_deg, scale, tx, ty):
    a = np.deg2rad(angle_deg)
    return np.array([[scale * np.cos(a), -scale * np.sin(a), tx], [scale * np.sin(a), scale * np.cos(a), ty]])


def build_ijb(root: Path, prefix: str = "ijbc", identities: int = 8, templates_per_id: int = 3, seed: int = 0):
    """Loose crops of synthetic identities with their landmarks; returns the ground truth."""
    from paddle_pfc.data.synthetic import SyntheticFaces

    rng = np.random.default_rng(seed)
    faces = SyntheticFaces(identities, samples_per_class=40, image_size=SIZE, seed=seed + 5)
    (root / "meta").mkdir(parents=True)
    (root / "loose_crop").mkdir()
    rows, marks, truth, template_identity = [], [], [], {}
    used = [0] * identities
    next_template, next_media = 101, 5001
    for ident in range(identities):
        for _ in range(templates_per_id):
            template = next_template
            next_template += int(rng.integers(1, 9))  # ids need not be contiguous
            template_identity[template] = ident
            for _ in range(int(rng.integers(1, 4))):  # medias of this template
                media = next_media
                next_media += 1
                for _ in range(int(rng.integers(1, 3))):  # frames of this media
                    image, label = faces[ident * 40 + used[ident]]
                    used[ident] += 1
                    m = similarity(rng.uniform(-20, 20), rng.uniform(1.2, 2.0), *rng.uniform(5, 25, 2))
                    loose = cv2.warpAffine(image, m, (96, 90), flags=cv2.INTER_LINEAR)
                    name = f"{len(rows) + 1}.png"
                    cv2.imwrite(str(root / "loose_crop" / name), cv2.cvtColor(loose, cv2.COLOR_RGB2BGR))
                    points = template_points(SIZE) @ m[:, :2].T + m[:, 2]
                    score = float(rng.uniform(0.4, 1.0))
                    rows.append(f"{name} {template} {media}")
                    marks.append(f"{name} " + " ".join(f"{v:.6f}" for v in points.reshape(-1)) + f" {score:.6f}")
                    truth.append({"name": name, "template": template, "media": media, "m": m,
                                  "score": float(f"{score:.6f}"), "points": points})
    ids = sorted(template_identity)
    pairs = [(a, b, int(template_identity[a] == template_identity[b])) for i, a in enumerate(ids) for b in ids[i + 1:]]
    (root / "meta" / f"{prefix}_face_tid_mid.txt").write_text("\n".join(rows) + "\n")
    order = rng.permutation(len(marks))  # the landmark file may list images in another order
    (root / "meta" / f"{prefix}_name_5pts_score.txt").write_text("\n".join(marks[i] for i in order) + "\n")
    (root / "meta" / f"{prefix}_template_pair_label.txt").write_text(
        "\n".join(f"{a} {b} {lab}" for a, b, lab in pairs) + "\n")
    return truth, pairs
