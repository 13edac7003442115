"""Face embeddings from an exported model (Paddle Inference, or onnxruntime for ``.onnx``).

``FaceEmbedder(model, device="cpu", batch_size=64).embed(images)`` returns
L2-normalized float32 embeddings ``[n, D]`` (cosine similarity = dot product).

``model``: a directory written by :func:`paddle_pfc.deploy.export.export_backbone`
(``model.json`` -- or ``model.pdmodel`` for float16 exports -- + ``model.pdiparams``
+ ``export.json``; a directory holding only
``model.onnx`` is run with onnxruntime), or a path to a ``.onnx`` file (its
``export.json`` is read from the same directory when present).

``images`` may be:

* a file path, a folder path (its image files, non-recursive, sorted by name;
  see :func:`expand_image_paths`), or a list mixing paths and arrays;
* a list of HWC ``uint8`` RGB arrays (or a single one), or a ``uint8`` NHWC batch;
* a float ``[n, 3, H, W]`` array: ALREADY normalized model input, used as is
  (must have the model's ``H, W``; nothing is resized; values far outside the normalized
  range, e.g. raw 0..255 pixels, or not finite, are a ``ValueError``).

Decoded / array images are converted to 3-channel RGB (grayscale is repeated
over 3 channels, alpha is dropped), brought to the model's input size by the policy of every
command (:mod:`paddle_pfc.data.photos`: made square by ``non_square=`` -- stretched, padded with
their border or centre-cropped --, then resized; counted in ``FaceEmbedder.conversions``,
whose ``line()`` says it once -- a face-recognition model expects ALIGNED crops and a plain
resize is no alignment) and normalized as ``export.json`` says (``(x - 127.5) / 128``).

Errors: a missing model file -> ``FileNotFoundError`` naming it; a corrupted
one -> ``ValueError`` naming it; a missing image -> ``FileNotFoundError``, an
undecodable one -> ``ValueError``, both naming the file.

Loading and running the model is :class:`paddle_pfc.deploy.predictor.EmbeddingModel` (the file
format: :mod:`paddle_pfc.deploy.model_format`); this module does not import the export side.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np

from paddle_pfc.data._image import decode_rgb
from paddle_pfc.data.photos import Conversions
from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, checked_non_square, recorded_non_square
from paddle_pfc.deploy.model_format import PathLike
from paddle_pfc.deploy.predictor import EmbeddingModel

__all__ = ["FaceEmbedder", "IMAGE_EXTENSIONS", "expand_image_paths", "l2_normalize", "person_folders", "read_image"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm")


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def expand_image_paths(paths: PathLike | Sequence[PathLike]) -> list[str]:
    """Files as given, folders replaced by their image files (extensions
    ``IMAGE_EXTENSIONS``, case-insensitive, non-recursive, sorted by name).
    ``FileNotFoundError`` for a path that does not exist, ``ValueError`` for a folder with no image."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            files = _image_files(p)
            if not files:
                raise ValueError(f"{p}: folder contains no image files ({', '.join(IMAGE_EXTENSIONS)})")
            out.extend(files)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: image file or folder not found")
    return out


def _image_files(folder: str) -> list[str]:
    """The image files directly in ``folder`` (``IMAGE_EXTENSIONS``, case-insensitive), sorted by name."""
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.lower().endswith(IMAGE_EXTENSIONS) and os.path.isfile(os.path.join(folder, f))]


def person_folders(folder: PathLike) -> dict[str, list[str]]:
    """A folder of one sub-folder per person: ``{sub-folder name: its image files}``, both sorted
    by name, the sub-folders without an image left out; empty when ``folder`` holds image files
    itself or none of its sub-folders does."""
    folder = os.fspath(folder)
    if _image_files(folder):
        return {}
    subs = (name for name in sorted(os.listdir(folder)) if os.path.isdir(os.path.join(folder, name)))
    return {name: files for name in subs for files in (_image_files(os.path.join(folder, name)),) if files}


def read_image(path: PathLike) -> np.ndarray:
    """Decode an image file to RGB ``uint8 [H, W, 3]`` (grayscale -> 3 channels, alpha dropped)."""
    path = os.fspath(path)
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: image file not found") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read image file ({e})") from e
    return decode_rgb(data, path)


def _as_rgb(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.dtype != np.uint8:
        raise ValueError(f"{name}: expected a uint8 HWC RGB image, got dtype {arr.dtype} "
                         "(pass a float [n, 3, H, W] array for already normalized input)")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected an image [H, W], [H, W, 1], [H, W, 3] or [H, W, 4], "
                         f"got shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    elif arr.shape[2] == 4:
        arr = arr[:, :, :3]
    return arr


class FaceEmbedder(EmbeddingModel):
    """Embeds faces with an exported model; see the module docstring.

    Constructor, attributes and :meth:`forward` (raw embeddings of a normalized NCHW batch, an
    ``embed_fn`` for :mod:`paddle_pfc.evaluation.validation`) are
    :class:`paddle_pfc.deploy.predictor.EmbeddingModel`'s; this class adds images, made square
    by ``non_square`` (``pad`` | ``crop`` | ``stretch``, :mod:`paddle_pfc.data.photos`; None: the
    policy the model was trained with, as its ``export.json`` records it, else ``stretch``).
    """

    def __init__(self, model: PathLike, *args, non_square: str | None = None, **kwargs) -> None:
        if non_square is not None:
            checked_non_square(non_square)  # a bad policy fails before the model loads
        super().__init__(model, *args, **kwargs)
        self._conversions = Conversions(non_square or recorded_non_square(self.meta) or DEFAULT_NON_SQUARE)

    @property
    def non_square(self) -> str:
        """The policy that makes this embedder's images square."""
        return self._conversions.non_square

    @property
    def conversions(self) -> Conversions:
        """What the images embedded so far needed (grey, not square, resized) and the policy that
        converts them: see :mod:`paddle_pfc.data.photos`."""
        return self._conversions

    def _normalize(self, rgb_batch: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(rgb_batch.transpose(0, 3, 1, 2)).astype(np.float32)
        x -= self._mean
        x *= 1.0 / self._std
        return x

    def _items(self, images) -> list[tuple[str, object]]:
        """(name, path-or-array) per image."""
        if isinstance(images, (str, os.PathLike)):
            return [(p, p) for p in expand_image_paths(images)]
        if isinstance(images, np.ndarray):
            if images.ndim == 4:
                return [(f"images[{i}]", images[i]) for i in range(images.shape[0])]
            return [("images", images)]
        if not isinstance(images, Iterable):
            raise TypeError(f"images: expected paths, a folder, arrays or an NCHW array, "
                            f"got {type(images).__name__}")
        items = []
        for i, item in enumerate(images):
            if isinstance(item, (str, os.PathLike)):
                items.extend((p, p) for p in expand_image_paths(item))
            elif isinstance(item, np.ndarray):
                items.append((f"images[{i}]", item))
            else:
                raise TypeError(f"images[{i}]: expected a path or a uint8 HWC array, got "
                                f"{type(item).__name__}")
        return items

    def preprocess(self, images) -> np.ndarray:
        """Model input (float32 ``[n, 3, H, W]``, normalized) for ``images`` (see module doc)."""
        if isinstance(images, np.ndarray) and images.ndim == 4 and images.dtype.kind == "f":
            h, w = self.input_size
            if images.shape[1:] != (3, h, w):
                raise ValueError(f"float NCHW input must be [n, 3, {h}, {w}] (already normalized; "
                                 f"not resized), got shape {images.shape}")
            self._check_normalized(images)
            return np.ascontiguousarray(images, dtype=np.float32)
        items = self._items(images)
        if not items:
            h, w = self.input_size
            return np.zeros((0, 3, h, w), np.float32)
        return self._preprocess_items(items)

    def _check_normalized(self, x: np.ndarray) -> None:
        """Float input must lie in the normalized range of pixels 0..255 (with 25 % to spare for
        augmented input): raw pixel values (0..255) would give a wrong embedding without error."""
        ends = (np.array([0.0, 255.0], np.float64)[:, None] - np.ravel(self._mean)) / np.ravel(self._std)
        low, high = float(ends.min()), float(ends.max())
        spare = 0.25 * (high - low)
        x_min, x_max = (float(x.min()), float(x.max())) if x.size else (low, high)
        if not (np.isfinite(x_min) and np.isfinite(x_max)) or x_min < low - spare or x_max > high + spare:
            raise ValueError(f"float NCHW input ranges over [{x_min:g}, {x_max:g}], but normalized input lies in "
                             f"[{low:.3g}, {high:.3g}]: pass uint8 HWC images (normalized here), or normalize "
                             "as the model's export.json says (raw 0..255 pixels give a wrong embedding)")

    def _preprocess_items(self, items) -> np.ndarray:
        h, w = self.input_size
        rgb = np.empty((len(items), h, w, 3), np.uint8)
        for i, (name, item) in enumerate(items):
            img = read_image(item) if isinstance(item, (str, os.PathLike)) else _as_rgb(item, name)
            rgb[i] = self.conversions.fit(img, (h, w), name)
        return self._normalize(rgb)

    def embed(self, images, normalize: bool = True, flip: bool = False) -> np.ndarray:
        """Embeddings ``[n, D]`` float32 of ``images`` (order kept; folders sorted by name).

        ``normalize``: L2-normalize the rows (default).  ``flip``: use
        ``emb(x) + emb(flipped x)`` as in validation (twice the compute).
        """
        if isinstance(images, np.ndarray) and images.ndim == 4 and images.dtype.kind == "f":
            chunks = [self.preprocess(images)]
        else:
            items = self._items(images)
            chunks = [self._preprocess_items(items[i:i + self.batch_size])
                      for i in range(0, len(items), self.batch_size)]
        outs = []
        for x in chunks:
            if x.shape[0] == 0:
                continue
            e = self.forward(x)
            if flip:
                e = e + self.forward(np.ascontiguousarray(x[:, :, :, ::-1]))
            outs.append(e)
        if not outs:
            return np.zeros((0, self.embedding_size or 0), np.float32)
        emb = np.concatenate(outs, axis=0)
        return l2_normalize(emb) if normalize else emb
