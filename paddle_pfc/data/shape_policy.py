"""The policy names for how a non-square image becomes the square model input (no cv2 import:
the config schema reads them). The operations are in :mod:`paddle_pfc.data._image`."""
from __future__ import annotations

#: ``pad``: padded on both sides of its short direction with copies of its border row / column;
#: ``crop``: its centre square; ``stretch``: resized without keeping its aspect ratio. The default
#: is chosen by held-out accuracy on real non-square faces (docs/photos.md)
NON_SQUARE = ("pad", "crop", "stretch")
DEFAULT_NON_SQUARE = "stretch"


def checked_non_square(non_square: str) -> str:
    """``non_square`` when it is one of :data:`NON_SQUARE`, else ``ValueError`` naming them."""
    if non_square not in NON_SQUARE:
        raise ValueError(f"non_square must be one of {', '.join(NON_SQUARE)}; got {non_square!r}")
    return non_square


def recorded_non_square(record: object) -> str | None:
    """The policy a record names under ``non_square`` (an ``export.json``, a training config's
    ``data`` section), or None where it names none of :data:`NON_SQUARE` or is not a mapping."""
    found = record.get("non_square") if isinstance(record, dict) else None
    return found if found in NON_SQUARE else None
