"""The data formats training reads: one :class:`DataFormat` row each, in :data:`FORMATS`.

``data.kind`` names a row (:func:`data_format` also takes its aliases). Everything that depends on the
format asks its row: the config's choices and checks, the files a run needs before it starts and the
command that makes them, whether ``data.root`` is the data, where ``data.num_classes: null`` is
read from, and :meth:`DataFormat.open`, which makes the :class:`~paddle_pfc.data.dataset.Dataset`.

A row's ``dataset`` is ``"module:Class"`` in ``paddle_pfc.data``, imported when a dataset is opened
(this module imports no dataset, no OpenCV, no Paddle). The class is constructed by keywords:
``root`` (rows with ``under_root``), ``num_classes`` (None: the data's count), ``image_size`` and
each of the row's ``settings`` (``data.*`` keys, passed under their own names).
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paddle_pfc.utils.errors import UsageError

from .dataset import Dataset

#: What writes the held-out pairs and the training identities' label file.
PAIRS_COMMAND = "python tools/pairs.py --root YOUR_IMAGE_FOLDER"
#: What converts an image folder and its label file to ``train.rec`` / ``train.idx``.
IM2REC_COMMAND = "python tools/im2rec.py --root YOUR_IMAGE_FOLDER --label-file train_label.txt"


@dataclass(frozen=True)
class RequiredFile:
    """A file a format reads under ``data.root``: ``name`` is the file's name, or with ``setting``
    the ``data.*`` key that holds it (relative to ``data.root``); ``made_by`` completes the missing
    file's message with what makes it (``{root}`` is replaced by ``data.root``)."""

    name: str
    made_by: str
    setting: bool = False

    def missing(self, data: Mapping[str, Any]) -> str | None:
        """The message for this file when it is missing under ``data["root"]``, else None."""
        root = Path(data["root"]).expanduser()
        made_by = self.made_by.format(root=data["root"])
        if self.setting:
            path = root / data[self.name]
            return None if path.is_file() else f"data.{self.name} {path}: not found. {made_by}"
        return None if (root / self.name).is_file() else f"data.root {data['root']}: no {self.name}. {made_by}"


@dataclass(frozen=True)
class DataFormat:
    """One data format (see the module docstring for how a row's class is constructed).

    ``under_root``: the samples are image files under ``data.root`` (required, must be a folder, never
    overlapped by the output folder; images come at their stored size). ``files``: what must exist
    there before a run starts. ``classes_from``: where ``data.num_classes: null`` reads the count
    (None: the format has no count of its own). ``corrupt``: what a corrupt sample is when the format
    has no ``skip_bad`` setting. ``held_out_pairs``: it draws ``validation.synthetic_pairs``."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    dataset: str
    settings: tuple[str, ...]
    under_root: bool
    files: tuple[RequiredFile, ...] = ()
    classes_from: str | None = None
    corrupt: str = ""
    held_out_pairs: bool = False

    def dataset_class(self) -> type:
        """The row's dataset class (its module imported now)."""
        module, name = self.dataset.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)

    def construct(self, root: str | None, num_classes: int | None, image_size, **options) -> Dataset:
        """The dataset over ``root`` (rows with ``under_root``), ``options`` passed to its class."""
        if self.under_root and root is None:
            raise ValueError(f"{self.name} dataset needs root")
        if self.classes_from is None and num_classes is None:
            raise ValueError(f"{self.name} dataset needs num_classes")
        where = {"root": root} if self.under_root else {}
        return self.dataset_class()(**where, num_classes=num_classes, image_size=image_size, **options)

    def open(self, data: Mapping[str, Any], image_size) -> Dataset:
        """The dataset ``data`` (a config's ``data`` section, or a mapping with ``root``,
        ``num_classes`` and the row's settings; a setting left out takes the class's default)
        describes, its images at ``image_size``."""
        options = {key: data[key] for key in self.settings if key in data}
        return self.construct(data.get("root"), data.get("num_classes"), image_size, **options)

    def missing_input(self, data: Mapping[str, Any]) -> str | None:
        """What of ``data``'s input is missing (the first thing), naming what makes it; None when
        everything is there or ``data.root`` is not set (the config check names that)."""
        if not self.under_root or data["root"] is None:
            return None
        if not Path(data["root"]).expanduser().is_dir():
            return f"data.root {data['root']}: no such folder"
        for required in self.files:
            message = required.missing(data)
            if message is not None:
                return message
        return None


FORMATS: tuple[DataFormat, ...] = (
    DataFormat("synthetic", (), "generated identities", "synthetic:SyntheticFaces",
               ("samples_per_class", "seed"), under_root=False,
               corrupt="synthetic images are generated, none is corrupt", held_out_pairs=True),
    DataFormat("folder", ("image_folder",), "root/<class>/<img> folders", "image_folder:ImageFolderDataset",
               ("label_file", "skip_bad", "allow_outside_root", "non_square"), under_root=True,
               files=(RequiredFile("label_file", f"{PAIRS_COMMAND} writes train_label.txt (the identities it does "
                                   "not hold out for validation); -o data.label_file=label.txt trains on every "
                                   "identity", setting=True),),
               classes_from="the label file's largest label + 1"),
    DataFormat("rec", ("recordio", "mxnet"), "MXNet RecordIO (train.rec/train.idx)", "recordio:RecordDataset",
               ("non_square",), under_root=True,
               files=(RequiredFile("train.rec", f"{IM2REC_COMMAND} --output {{root}} writes it "
                                   "(docs/your_own_data.md)"),),
               classes_from="the .rec header",
               corrupt="a corrupt .rec record is an error naming its index and offset"),
)

#: ``data.kind``'s values, in the table's order.
FORMAT_NAMES: tuple[str, ...] = tuple(f.name for f in FORMATS)


class UnknownFormatError(UsageError):
    """A ``data.kind`` no row names."""


def data_format(kind: str) -> DataFormat:
    """The row named ``kind`` or one of its aliases (any case); :class:`UnknownFormatError` listing
    the names otherwise."""
    wanted = str(kind).lower()
    for row in FORMATS:
        if wanted == row.name or wanted in row.aliases:
            return row
    aliases = ", ".join(repr(a) for f in FORMATS for a in f.aliases)
    raise UnknownFormatError(f"unknown dataset kind {kind!r} (expected {either(FORMAT_NAMES)}; aliases: {aliases})")


def formats_where(attribute: str) -> tuple[str, ...]:
    """The names of the rows whose field ``attribute`` is true, in the table's order."""
    return tuple(f.name for f in FORMATS if getattr(f, attribute))


def formats_reading(setting: str) -> tuple[str, ...]:
    """The names of the rows that read the ``data.*`` key ``setting``, in the table's order."""
    return tuple(f.name for f in FORMATS if setting in f.settings)


def either(names: tuple[str, ...], quote: bool = True) -> str:
    """``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'`` (unquoted with ``quote=False``)."""
    words = [repr(n) if quote else n for n in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
