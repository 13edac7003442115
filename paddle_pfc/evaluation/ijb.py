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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paddle_pfc.evaluation import roc
from paddle_pfc.utils.atomic import atomic_write
from paddle_pfc.utils.errors import InputDataError

__all__ = ["IJBError", "IJBProtocol", "IJBResult", "detect_prefix", "read_protocol", "missing_images",
           "check_images", "load_aligned",
           "embed_faces", "face_features", "template_features", "pair_scores", "evaluate_features",
           "shard", "default_prefix_name", "rank_part_path", "PartTag", "write_part", "read_part", "merge_parts"]


class IJBError(InputDataError):
    """Malformed IJB protocol files or images (names the file and line)."""


@dataclass(frozen=True)
class IJBProtocol:
    """The parsed protocol: per face ``images`` (numpy string array of file names under ``loose_crop/``),
    ``templates``, ``medias`` (int64), ``landmarks`` ``[N, 5, 2]``, detector ``scores`` (float64);
    per pair ``pairs`` ``[P, 2]`` (int64 template ids) and ``labels`` ``[P]`` (int8, 1 = same
    identity)."""

    root: Path
    prefix: str
    images: np.ndarray
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


_MAX_LOOKUP_ID = 50_000_000  # template ids up to this are checked with a lookup table


def _line_of_row(path: Path, row: int) -> int:
    """1-based line number of the ``row``-th (0-based) non-blank line of ``path``."""
    with open(path, encoding="utf-8") as f:
        seen = -1
        for number, line in enumerate(f, 1):
            if line.strip():
                seen += 1
                if seen == row:
                    return number
    return 0


def _diagnose(path: Path, kinds: Sequence[type]) -> None:
    """Find the first malformed line of ``path`` (``kinds``: one type per column) and raise an
    :class:`IJBError` naming it. Only run after the fast reader failed."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != len(kinds):
                raise IJBError(f"{path}:{number}: expected {len(kinds)} columns, got {len(parts)}: {line.strip()!r}")
            for column, (kind, text) in enumerate(zip(kinds, parts)):
                if kind is str:
                    continue
                try:
                    value = kind(text)
                except ValueError:
                    word = "an integer" if kind is int else "a number"
                    raise IJBError(f"{path}:{number}: column {column + 1} is not {word}: {text!r}") from None
                if kind is float and not np.isfinite(value):
                    raise IJBError(f"{path}:{number}: column {column + 1} is not finite: {text!r}")


def _read_table(path: Path, kinds: Sequence[type]):
    """``path`` read as whitespace-separated columns of ``kinds`` (``str``; ``int`` -> int32, or
    int64 when a value needs it; ``float`` -> float64) into a pandas DataFrame, blank lines skipped;
    a malformed line is an :class:`IJBError` naming the file and line."""
    import pandas as pd

    if not path.is_file():
        raise IJBError(f"{path}: file not found")
    names = list(range(len(kinds)))
    attempts = [(" ", np.int32), (r"\s+", np.int32), (r"\s+", np.int64)]  # the release: one space
    for sep, int_type in attempts:
        dtypes = {i: {str: str, int: int_type, float: np.float64}[k] for i, k in enumerate(kinds)}
        try:
            table = pd.read_csv(path, sep=sep, header=None, names=names, dtype=dtypes, engine="c",
                                skip_blank_lines=True, na_filter=False, quoting=3)
            break
        except pd.errors.EmptyDataError:
            raise IJBError(f"{path}: empty") from None
        except (ValueError, OverflowError, pd.errors.ParserError) as exc:
            error = exc
    else:
        _diagnose(path, kinds)
        raise IJBError(f"{path}: cannot be read ({error})") from None
    if len(table) == 0:
        raise IJBError(f"{path}: empty")
    for column, kind in enumerate(kinds):
        if kind is float:
            bad = np.flatnonzero(~np.isfinite(table[column].to_numpy()))
            if bad.size:
                raise IJBError(f"{path}:{_line_of_row(path, int(bad[0]))}: column {column + 1} is not finite: "
                               f"{str(table[column].iloc[int(bad[0])])!r}")
    return table


def _unknown_templates(pairs: np.ndarray, templates: np.ndarray) -> np.ndarray:
    """Flat indices into ``pairs`` of the ids that are not in ``templates``."""
    known = np.unique(templates)
    flat = pairs.reshape(-1)
    if known[0] >= 0 and known[-1] <= _MAX_LOOKUP_ID and flat.min() >= 0 and flat.max() <= known[-1]:
        present = np.zeros(int(known[-1]) + 1, bool)
        present[known] = True
        ok = present[flat]
    else:
        at = np.clip(np.searchsorted(known, flat), 0, len(known) - 1)
        ok = known[at] == flat
    return np.flatnonzero(~ok)


def _read_faces(tid_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(names, images, templates, medias)`` of ``*_face_tid_mid.txt`` (names as objects, images
    as str); IJBError naming the line of an image listed twice."""
    import pandas as pd

    faces = _read_table(tid_path, (str, int, int))
    names = faces[0]
    twice = np.flatnonzero(pd.Index(names.to_numpy(dtype=object)).duplicated())
    if twice.size:
        name = names.iloc[int(twice[0])]
        first = int(np.flatnonzero((names == name).to_numpy())[0])
        raise IJBError(f"{tid_path}:{_line_of_row(tid_path, int(twice[0]))}: image {name!r} listed twice "
                       f"(first on line {_line_of_row(tid_path, first)})")
    return (names.to_numpy(dtype=object), names.to_numpy(dtype=str), faces[1].to_numpy(np.int64),
            faces[2].to_numpy(np.int64))


def _read_landmarks(lmk_path: Path, names: np.ndarray, tid_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(landmarks [F,5,2], detector scores [F])`` of ``*_name_5pts_score.txt`` in the order of
    ``names``; IJBError on an image listed twice or a face without landmarks."""
    import pandas as pd

    marks = _read_table(lmk_path, (str,) + (float,) * 11)
    mark_names = pd.Index(marks[0].to_numpy(dtype=object))
    twice = np.flatnonzero(mark_names.duplicated())
    if twice.size:
        raise IJBError(f"{lmk_path}:{_line_of_row(lmk_path, int(twice[0]))}: image "
                       f"{marks[0].iloc[int(twice[0])]!r} listed twice")
    row_of = mark_names.get_indexer(names)
    missing = np.flatnonzero(row_of < 0)
    if missing.size:
        raise IJBError(f"{lmk_path}: no landmarks for image {str(names[missing[0]])!r} (listed in {tid_path.name}; "
                       f"{missing.size} image(s) without landmarks)")
    values = marks.iloc[:, 1:].to_numpy(np.float64)
    del marks
    return (np.ascontiguousarray(values[row_of, :10].reshape(-1, 5, 2)),
            np.ascontiguousarray(values[row_of, 10]))


def _read_pairs(pair_path: Path, templates: np.ndarray, tid_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs [P,2], labels [P] int8)`` of ``*_template_pair_label.txt``; IJBError on a label not
    0/1, a template without faces, or pairs all genuine or all impostor."""
    table = _read_table(pair_path, (int, int, int))
    pairs = np.empty((len(table), 2), np.int64)
    pairs[:, 0] = table[0].to_numpy()
    pairs[:, 1] = table[1].to_numpy()
    labels = table[2].to_numpy()
    del table
    bad = np.flatnonzero((labels != 0) & (labels != 1))
    if bad.size:
        raise IJBError(f"{pair_path}:{_line_of_row(pair_path, int(bad[0]))}: label must be 0 or 1, "
                       f"got {labels[bad[0]]}")
    unknown = _unknown_templates(pairs, templates)
    if unknown.size:
        row = int(unknown[0]) // 2
        raise IJBError(f"{pair_path}:{_line_of_row(pair_path, row)}: template {int(pairs.reshape(-1)[unknown[0]])} "
                       f"has no face in {tid_path.name}")
    genuine = int(np.count_nonzero(labels))
    if genuine == 0 or genuine == labels.size:  # checked now, not after hours of embedding
        raise IJBError(f"{pair_path}: a ROC needs genuine (label 1) and impostor (label 0) pairs, got "
                       f"{genuine} genuine and {labels.size - genuine} impostor")
    return pairs, labels.astype(np.int8, copy=False)


def read_protocol(root: str | Path, prefix: str | None = None) -> IJBProtocol:
    """Parse the three meta files under ``root`` (see the module doc); every face of
    ``*_face_tid_mid.txt`` must have one landmark row, every pair template must have faces, and
    the pairs must hold both genuine and impostor ones. Vectorized (pandas' C reader, integer
    arrays); images are not looked at here (:func:`missing_images`)."""
    root = Path(root)
    prefix = prefix or detect_prefix(root)
    meta = root / "meta"
    tid_path = meta / f"{prefix}_face_tid_mid.txt"
    names, images, templates, medias = _read_faces(tid_path)
    landmarks, scores = _read_landmarks(meta / f"{prefix}_name_5pts_score.txt", names, tid_path)
    del names
    pairs, labels = _read_pairs(meta / f"{prefix}_template_pair_label.txt", templates, tid_path)
    return IJBProtocol(root, prefix, images, templates, medias, landmarks, scores, pairs, labels)


def missing_images(protocol: IJBProtocol) -> np.ndarray:
    """Indices of the faces whose image is not a file under ``loose_crop/`` (one directory listing,
    then a per-file check only for names with a folder part)."""
    folder = protocol.image_dir
    if not folder.is_dir():
        return np.arange(len(protocol.images))
    with os.scandir(folder) as entries:
        files = np.array([e.name for e in entries if e.is_file()], dtype=str)
    present = np.isin(protocol.images, files) if files.size else np.zeros(len(protocol.images), bool)
    nested = np.flatnonzero(~present & (np.char.find(protocol.images, "/") >= 0))
    for i in nested:
        present[i] = (folder / protocol.images[i]).is_file()
    return np.flatnonzero(~present)


def check_images(protocol: IJBProtocol, report: str | os.PathLike | None = None, show: int = 10) -> None:
    """Raise an :class:`IJBError` listing the count and the first ``show`` missing images when any
    face's image is missing (all names go to ``report`` when given)."""
    missing = missing_images(protocol)
    if not missing.size:
        return
    names = protocol.images[missing]
    where = ""
    if report is not None:
        Path(report).parent.mkdir(parents=True, exist_ok=True)
        Path(report).write_text("\n".join(names.tolist()) + "\n", encoding="utf-8")
        where = f"; all of them listed in {report}"
    more = f", ... ({missing.size - show} more)" if missing.size > show else ""
    raise IJBError(f"{protocol.image_dir}: {missing.size} of {len(protocol.images)} face images not found "
                   f"(listed in {protocol.prefix}_face_tid_mid.txt): {', '.join(names[:show].tolist())}{more}"
                   f"{where}")


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
                progress=None, preprocess: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """``[n, D]`` float32 features of faces ``indices`` (default all): ``emb(img) + emb(flip(img))``
    (or ``emb(img)``). ``preprocess``: aligned uint8 RGB ``[n, H, W, 3]`` -> the model's float32
    NCHW input (an exported model's: as its ``export.json`` says; default the training
    normalization ``(x - 127.5) / 128``); ``embed_fn``: that input -> raw embeddings.
    ``progress``: a :class:`paddle_pfc.utils.progress.Progress` updated per batch."""
    if preprocess is None:
        from paddle_pfc.data._image import normalize_nchw as preprocess

    indices = np.arange(len(protocol.images)) if indices is None else np.asarray(indices, np.int64)
    out = None
    for start in range(0, len(indices), batch_size):
        chunk = indices[start:start + batch_size]
        batch = preprocess(np.stack([load_aligned(protocol, int(i), input_size) for i in chunk]))
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
    """Where rank ``rank`` writes its share of the features (see :func:`write_part`)."""
    return Path(out_dir) / "ijb_parts" / f"rank{rank}.npz"


@dataclass(frozen=True)
class PartTag:
    """What ties a rank's part to one run: ``run_id`` (shared by the ranks of one launch),
    ``model`` (fingerprint of the model's files and its input normalization), ``settings``
    (protocol and embedding options), ``world`` (number of ranks)."""

    run_id: str
    model: str
    settings: str
    world: int


_TAG_FIELDS = ("run_id", "model", "settings")


def write_part(path: str | os.PathLike, features: np.ndarray, start: int, stop: int, rank: int,
               tag: PartTag) -> None:
    """Rank ``rank``'s features of faces ``[start, stop)`` with its :class:`PartTag`, as an
    ``.npz`` of plain arrays (read back without pickle), written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as handle:
        np.savez(handle, features=np.asarray(features, np.float32), start=np.int64(start), stop=np.int64(stop),
                 rank=np.int64(rank), world=np.int64(tag.world), run_id=np.str_(tag.run_id),
                 model=np.str_(tag.model), settings=np.str_(tag.settings))


def read_part(path: str | os.PathLike) -> dict:
    """A part written by :func:`write_part` (``allow_pickle=False``); a file without a tag (an
    older format) reads with empty tag fields. ``IJBError`` naming the file when unreadable."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "features" not in z.files or "start" not in z.files:
                raise IJBError(f"{path}: not an IJB feature part (keys {sorted(z.files)})")
            part = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as exc:
        raise IJBError(f"{path}: unreadable feature part ({exc})") from None
    out = {"features": part["features"], "start": int(part["start"]), "stop": int(part.get("stop", -1)),
           "rank": int(part.get("rank", -1)), "world": int(part.get("world", -1))}
    for key in _TAG_FIELDS:
        out[key] = str(part[key]) if key in part else ""
    return out


def merge_parts(out_dir: str | os.PathLike, tag: PartTag, num_faces: int, timeout: float,
                poll_seconds: float = 0.5) -> np.ndarray:
    """Every rank's part of this run (same run id, model and settings; the rank's own share),
    concatenated in face order. A part of another run is waited on (its rank may still be
    embedding) and refused after ``timeout`` seconds naming it; a part of this run with another
    model, settings or share is refused at once; a missing part is a ``TimeoutError``."""
    import time

    paths = [rank_part_path(out_dir, r) for r in range(tag.world)]
    accepted: dict[int, np.ndarray] = {}
    stale: dict[int, dict] = {}
    deadline = time.monotonic() + timeout
    while True:
        for r, path in enumerate(paths):
            if r in accepted or not path.exists():
                continue
            part = read_part(path)
            if part["run_id"] != tag.run_id:
                stale[r] = part
                continue
            stale.pop(r, None)
            want = shard(num_faces, r, tag.world)
            for key, expected in (("model", tag.model), ("settings", tag.settings)):
                if part[key] != expected:
                    raise IJBError(f"{path}: written by this run with another {key} ({part[key]!r}, rank 0 has "
                                   f"{expected!r}); every rank must embed with the same model and options")
            got = (part["rank"], part["world"], part["start"], part["stop"], len(part["features"]))
            if got != (r, tag.world, *want, want[1] - want[0]):
                raise IJBError(f"{path}: holds rank {got[0]} of {got[1]}, faces [{got[2]}, {got[3]}) "
                               f"({got[4]} features); rank {r} of {tag.world} embeds faces [{want[0]}, {want[1]})")
            accepted[r] = part["features"]
        if len(accepted) == tag.world:
            return np.concatenate([accepted[r] for r in range(tag.world)])
        if time.monotonic() > deadline:
            if stale:
                r, part = min(stale.items())
                raise IJBError(f"{paths[r]}: a stale part of another run (run id {part['run_id'] or 'none'}, "
                               f"model {part['model'] or 'unknown'}; this run is {tag.run_id}, model {tag.model}), "
                               f"not replaced within {timeout:.0f} s: did rank {r} fail? see its log")
            r = min(set(range(tag.world)) - set(accepted))
            raise TimeoutError(f"rank 0 waited {timeout:.0f}s for {paths[r]} (did that rank fail? see its log)")
        time.sleep(poll_seconds)
