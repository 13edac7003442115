"""IJB-B / IJB-C 1:1 template verification in the layout of insightface's IJB release.

Layout of ``root`` (``P`` = ``ijbc`` or ``ijbb``)::

    root/meta/P_face_tid_mid.txt         "<image> <template id> <media id>" per face
    root/meta/P_template_pair_label.txt  "<template 1> <template 2> <label 0/1>" per pair
    root/meta/P_name_5pts_score.txt      "<image> x1 y1 x2 y2 x3 y3 x4 y4 x5 y5 <detector score>"
    root/loose_crop/<image>              the face images

Protocol (as insightface's ``arcface_torch/eval_ijbc.py`` with its defaults):

1. every face is aligned with its 5 landmarks to the 112×112 ArcFace template
   (:mod:`paddle_pfc.evaluation.face_align`, scaled to the model's input size) and embedded with its
   horizontal flip: ``f = emb(img) + emb(flip(img))`` (``flip=False``: ``emb(img)``);
2. ``normalize_images=False`` (insightface's "N1"): ``f`` keeps its norm (``True``: L2
   normalised); ``detector_weighting=True`` ("D1"): ``f`` is multiplied by the detector score;
3. per template: faces of one media are averaged, the media means are summed, the template
   feature is L2 normalised;
4. a pair's score is the cosine of its two template features; the ROC and TAR@FAR come from
   :mod:`paddle_pfc.evaluation.roc`.

Image order for embedding (and for sharding over ranks) is the order of ``P_face_tid_mid.txt``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from paddle_pfc.evaluation import roc

__all__ = ["IJBError", "IJBProtocol", "IJBResult", "detect_prefix", "read_protocol", "load_aligned",
           "embed_faces", "face_features", "template_features", "pair_scores", "evaluate_features",
           "shard", "default_prefix_name", "rank_part_path"]


class IJBError(ValueError):
    """Malformed IJB protocol files or images (names the file and line)."""


@dataclass(frozen=True)
class IJBProtocol:
    """The parsed protocol: per face ``images`` (file names under ``loose_crop/``), ``templates``,
    ``medias``, ``landmarks`` ``[N, 5, 2]``, detector ``scores``; per pair ``pairs`` ``[P, 2]``
    (template ids) and ``labels`` ``[P]`` (1 = same identity)."""

    root: Path
    prefix: str
    images: list[str]
    templates: np.ndarray
    medias: np.ndarray
    landmarks: np.ndarray
    scores: np.ndarray
    pairs: np.ndarray
    labels: np.ndarray

    @property
    def image_dir(self) -> Path:
        return self.root / "loose_crop"


@dataclass(frozen=True)
class IJBResult:
    """TAR at each FAR, the ROC, and the pair scores."""

    tar_at_far: dict[float, float]
    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    scores: np.ndarray
    num_faces: int
    num_templates: int
    num_pairs: int


def detect_prefix(root: str | Path) -> str:
    """``ijbc`` or ``ijbb``: the prefix of the ``meta/*_face_tid_mid.txt`` present under ``root``."""
    meta = Path(root) / "meta"
    found = [p for p in ("ijbc", "ijbb") if (meta / f"{p}_face_tid_mid.txt").is_file()]
    if not found:
        raise IJBError(f"{meta}: neither ijbc_face_tid_mid.txt nor ijbb_face_tid_mid.txt found "
                       "(expected insightface's IJB release layout: meta/, loose_crop/)")
    if len(found) > 1:
        raise IJBError(f"{meta}: both IJB-B and IJB-C files are present; pass prefix='ijbb' or 'ijbc'")
    return found[0]


def _rows(path: Path, columns: int) -> list[list[str]]:
    if not path.is_file():
        raise IJBError(f"{path}: file not found")
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != columns:
                raise IJBError(f"{path}:{number}: expected {columns} columns, got {len(parts)}: {line.strip()!r}")
            rows.append(parts + [str(number)])
    if not rows:
        raise IJBError(f"{path}: empty")
    return rows


def _number(path: Path, row: list[str], column: int, kind=int):
    try:
        value = kind(row[column])
    except ValueError:
        raise IJBError(f"{path}:{row[-1]}: column {column + 1} is not a{'n integer' if kind is int else ' number'}: "
                       f"{row[column]!r}") from None
    if kind is float and not np.isfinite(value):
        raise IJBError(f"{path}:{row[-1]}: column {column + 1} is not finite: {row[column]!r}")
    return value


def read_protocol(root: str | Path, prefix: str | None = None) -> IJBProtocol:
    """Parse the three meta files under ``root`` (see the module doc); every face of
    ``*_face_tid_mid.txt`` must have one landmark row, every pair template must have faces, and
    the pairs must hold both genuine and impostor ones."""
    root = Path(root)
    prefix = prefix or detect_prefix(root)
    meta = root / "meta"
    tid_path = meta / f"{prefix}_face_tid_mid.txt"
    pair_path = meta / f"{prefix}_template_pair_label.txt"
    lmk_path = meta / f"{prefix}_name_5pts_score.txt"
    faces = _rows(tid_path, 3)
    images = [r[0] for r in faces]
    templates = np.array([_number(tid_path, r, 1) for r in faces], np.int64)
    medias = np.array([_number(tid_path, r, 2) for r in faces], np.int64)
    seen: dict[str, int] = {}
    for r in faces:
        if r[0] in seen:
            raise IJBError(f"{tid_path}:{r[-1]}: image {r[0]!r} listed twice (first on line {seen[r[0]]})")
        seen[r[0]] = int(r[-1])
    marks: dict[str, tuple[np.ndarray, float]] = {}
    for r in _rows(lmk_path, 12):
        if r[0] in marks:
            raise IJBError(f"{lmk_path}:{r[-1]}: image {r[0]!r} listed twice")
        pts = np.array([_number(lmk_path, r, c, float) for c in range(1, 11)]).reshape(5, 2)
        marks[r[0]] = (pts, _number(lmk_path, r, 11, float))
    missing = [name for name in images if name not in marks]
    if missing:
        raise IJBError(f"{lmk_path}: no landmarks for image {missing[0]!r} (listed in {tid_path.name}; "
                       f"{len(missing)} image(s) without landmarks)")
    landmarks = np.stack([marks[name][0] for name in images])
    scores = np.array([marks[name][1] for name in images], np.float64)
    pair_rows = _rows(pair_path, 3)
    pairs = np.array([[_number(pair_path, r, 0), _number(pair_path, r, 1)] for r in pair_rows], np.int64)
    labels = np.array([_number(pair_path, r, 2) for r in pair_rows], np.int64)
    bad = np.flatnonzero((labels != 0) & (labels != 1))
    if bad.size:
        raise IJBError(f"{pair_path}:{pair_rows[bad[0]][-1]}: label must be 0 or 1, got {labels[bad[0]]}")
    known = set(templates.tolist())
    for i, (a, b) in enumerate(pairs.tolist()):
        for t in (a, b):
            if t not in known:
                raise IJBError(f"{pair_path}:{pair_rows[i][-1]}: template {t} has no face in {tid_path.name}")
    genuine = int(labels.sum())
    if genuine == 0 or genuine == labels.size:  # checked now, not after hours of embedding
        raise IJBError(f"{pair_path}: a ROC needs genuine (label 1) and impostor (label 0) pairs, got "
                       f"{genuine} genuine and {labels.size - genuine} impostor")
    return IJBProtocol(root, prefix, images, templates, medias, landmarks, scores, pairs, labels)


def shard(n: int, rank: int, world_size: int) -> tuple[int, int]:
    """``[start, stop)`` of rank ``rank``'s contiguous share of ``n`` faces."""
    base, extra = divmod(n, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def load_aligned(protocol: IJBProtocol, index: int, size: int) -> np.ndarray:
    """Face ``index`` decoded (RGB) and aligned to ``size``×``size``."""
    from paddle_pfc.data._image import read_rgb
    from paddle_pfc.evaluation.face_align import align_face

    path = protocol.image_dir / protocol.images[index]
    if not path.is_file():
        raise IJBError(f"{path}: image not found (face {index} of {protocol.prefix}_face_tid_mid.txt)")
    try:
        image = read_rgb(str(path))
    except ValueError as exc:
        raise IJBError(str(exc)) from exc
    return align_face(image, protocol.landmarks[index], size)


def embed_faces(protocol: IJBProtocol, embed_fn: Callable[[np.ndarray], np.ndarray], input_size: int,
                indices: Sequence[int] | None = None, batch_size: int = 64, flip: bool = True,
                progress=None) -> np.ndarray:
    """``[n, D]`` float32 features of faces ``indices`` (default all): ``emb(img) + emb(flip(img))``
    (or ``emb(img)``). ``embed_fn``: normalized NCHW float32 batch -> raw embeddings.
    ``progress``: a :class:`paddle_pfc.engine.progress.Progress` updated per batch."""
    from paddle_pfc.data._image import normalize_nchw

    indices = np.arange(len(protocol.images)) if indices is None else np.asarray(indices, np.int64)
    out = None
    for start in range(0, len(indices), batch_size):
        chunk = indices[start:start + batch_size]
        batch = normalize_nchw(np.stack([load_aligned(protocol, int(i), input_size) for i in chunk]))
        feats = np.asarray(embed_fn(batch), np.float32)
        if flip:
            feats = feats + np.asarray(embed_fn(np.ascontiguousarray(batch[:, :, :, ::-1])), np.float32)
        if out is None:
            out = np.empty((len(indices), feats.shape[1]), np.float32)
        out[start:start + len(chunk)] = feats
        if progress is not None:
            progress.update(len(chunk))
    if out is None:
        raise IJBError("no face to embed")
    return out


def face_features(features: np.ndarray, detector_scores: np.ndarray, normalize_images: bool = False,
                  detector_weighting: bool = True) -> np.ndarray:
    """Per-face features entering template aggregation (steps 2 of the module doc)."""
    f = np.asarray(features, np.float64)
    if normalize_images:
        f = f / np.maximum(np.linalg.norm(f, axis=1, keepdims=True), 1e-12)
    if detector_weighting:
        f = f * np.asarray(detector_scores, np.float64)[:, None]
    return f


def template_features(features: np.ndarray, templates: np.ndarray, medias: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(template ids sorted, [T, D] unit features)``: per template, mean over each media's
    faces, sum over its medias, then L2 normalisation."""
    features = np.asarray(features, np.float64)
    templates, medias = np.asarray(templates), np.asarray(medias)
    # one group per (template, media): mean; then one sum per template
    keys = np.stack([templates, medias], axis=1)
    groups, group_of = np.unique(keys, axis=0, return_inverse=True)
    group_of = group_of.reshape(-1)
    sums = np.zeros((len(groups), features.shape[1]))
    np.add.at(sums, group_of, features)
    means = sums / np.bincount(group_of, minlength=len(groups))[:, None]
    ids, template_of_group = np.unique(groups[:, 0], return_inverse=True)
    feats = np.zeros((len(ids), features.shape[1]))
    np.add.at(feats, template_of_group.reshape(-1), means)
    feats /= np.maximum(np.linalg.norm(feats, axis=1, keepdims=True), 1e-12)
    return ids, feats


def pair_scores(ids: np.ndarray, feats: np.ndarray, pairs: np.ndarray, chunk: int = 100_000) -> np.ndarray:
    """Cosine score of each template pair (``pairs``: ``[P, 2]`` template ids present in ``ids``)."""
    pairs = np.asarray(pairs, np.int64)
    rows = np.searchsorted(ids, pairs)
    rows = np.clip(rows, 0, len(ids) - 1)
    if not np.array_equal(ids[rows], pairs):
        bad = pairs[ids[rows] != pairs][0]
        raise IJBError(f"template {int(bad)} of a pair has no feature")
    out = np.empty(len(pairs))
    for s in range(0, len(pairs), chunk):
        a, b = feats[rows[s:s + chunk, 0]], feats[rows[s:s + chunk, 1]]
        out[s:s + chunk] = np.sum(a * b, axis=1)
    return out


def evaluate_features(protocol: IJBProtocol, features: np.ndarray, fars: Sequence[float] = roc.DEFAULT_FARS,
                      normalize_images: bool = False, detector_weighting: bool = True) -> IJBResult:
    """TAR@FAR and ROC from every face's flip-summed features (``[N, D]``, protocol order)."""
    if len(features) != len(protocol.images):
        raise IJBError(f"{len(features)} features for {len(protocol.images)} faces")
    f = face_features(features, protocol.scores, normalize_images, detector_weighting)
    ids, feats = template_features(f, protocol.templates, protocol.medias)
    scores = pair_scores(ids, feats, protocol.pairs)
    fpr, tpr, thresholds = roc.roc_curve(protocol.labels, scores)
    return IJBResult(roc.tar_at_far(fpr, tpr, fars), fpr, tpr, thresholds, scores, len(protocol.images),
                     len(ids), len(protocol.pairs))


def default_prefix_name(prefix: str) -> str:
    """``IJB-C`` / ``IJB-B`` for a file prefix."""
    return {"ijbc": "IJB-C", "ijbb": "IJB-B"}.get(prefix, prefix)


def rank_part_path(out_dir: str | os.PathLike, rank: int) -> Path:
    """Where rank ``rank`` writes its share of the features (``.npz``: start, stop, features)."""
    return Path(out_dir) / "ijb_parts" / f"rank{rank}.npz"
