"""Held-out identities of a labelled image list: which identities to keep out of training, and
the verification pairs (genuine and impostor) of the kept-out ones (``paddle-pfc-pairs``).

Everything is drawn from one ``numpy.random.default_rng(seed)``: the same list and seed give the
same split and the same pairs.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def group_by_identity(samples: Sequence[tuple[str, int]]) -> dict[int, list[str]]:
    """``{label: [path, ...]}`` of ``(path, label)`` samples, labels ascending, paths in list order."""
    groups: dict[int, list[str]] = {}
    for path, label in samples:
        groups.setdefault(int(label), []).append(path)
    return dict(sorted(groups.items()))


def holdout_count(num_identities: int, fraction: float | None, count: int | None) -> int:
    """How many of ``num_identities`` to hold out: ``count``, or ``round(fraction x num_identities)``
    (at least 2); ``ValueError`` unless at least 2 are held out and at least 2 remain to train on."""
    wanted = count if count is not None else max(2, round(float(fraction) * num_identities))
    if wanted < 2 or num_identities - wanted < 2:
        raise ValueError(f"holding out {wanted} of {num_identities} identities leaves "
                         f"{num_identities - wanted} to train on: both sides need at least 2")
    return wanted


def count_for_test(num_identities: int, num_heldout: int, count: int) -> int:
    """``count`` further identities held out for a test set; ``ValueError`` unless it is 0 or at
    least 2 and at least 2 identities remain to train on beside the ``num_heldout`` ones."""
    if count and (count < 2 or num_identities - num_heldout - count < 2):
        raise ValueError(f"holding out {num_heldout} identities for selection and {count} for the test leaves "
                         f"{num_identities - num_heldout - count} of {num_identities} to train on: the test set "
                         "needs at least 2 and training at least 2")
    return count


def pair_identities(groups: dict[int, list[str]]) -> list[int]:
    """The labels of the identities with at least 2 images (a genuine pair needs two); ``ValueError``
    when fewer than 2 have."""
    eligible = [label for label, paths in groups.items() if len(paths) >= 2]
    if len(eligible) < 2:
        raise ValueError(f"only {len(eligible)} identities have 2 or more images: pairs need at least 2 such "
                         "identities (a genuine pair needs two images)")
    return eligible


def split_identities(groups: dict[int, list[str]], num_heldout: int, seed: int,
                     num_test: int = 0) -> tuple[list[int], list[int], list[int]]:
    """``(train_labels, heldout_labels, test_labels)``, each ascending: ``num_heldout`` then
    ``num_test`` further identities drawn at random among those with at least 2 images (a genuine
    pair needs two); ``ValueError`` when fewer such identities exist."""
    eligible = [label for label, paths in groups.items() if len(paths) >= 2]
    if len(eligible) < num_heldout + num_test:
        raise ValueError(f"{num_heldout + num_test} identities to hold out, but only {len(eligible)} have 2 or more "
                         "images (a genuine pair needs two)")
    rng = np.random.default_rng(seed)
    drawn = [int(v) for v in rng.choice(eligible, size=num_heldout + num_test, replace=False)]
    heldout, test = sorted(drawn[:num_heldout]), sorted(drawn[num_heldout:])
    chosen = set(drawn)
    return [label for label in groups if label not in chosen], heldout, test


def verification_pairs(groups: dict[int, list[str]], heldout: Sequence[int], max_genuine: int,
                       seed: int) -> list[tuple[str, str, bool]]:
    """Shuffled ``(path_a, path_b, issame)`` pairs of the ``heldout`` identities: every genuine
    pair (two images of one identity), at most ``max_genuine`` of them drawn at random, and as many
    impostor pairs (images of two different identities), each unordered pair once (fewer only when
    the identities do not make that many)."""
    rng = np.random.default_rng(seed + 1)
    genuine = [(paths[i], paths[j]) for label in heldout for paths in (groups[label],)
               for i in range(len(paths)) for j in range(i + 1, len(paths))]
    if len(genuine) > max_genuine:
        genuine = [genuine[i] for i in sorted(rng.choice(len(genuine), size=max_genuine, replace=False))]
    impostor = _impostor_pairs(groups, heldout, len(genuine), rng)
    pairs = [(a, b, True) for a, b in genuine] + [(a, b, False) for a, b in impostor]
    return [pairs[i] for i in rng.permutation(len(pairs))]


def _impostor_pairs(groups: dict[int, list[str]], heldout: Sequence[int], count: int,
                    rng: np.random.Generator) -> list[tuple[str, str]]:
    """``count`` distinct unordered pairs of images of two different ``heldout`` identities (all of
    them when there are fewer)."""
    images = [(path, label) for label in heldout for path in groups[label]]
    sizes = [len(groups[label]) for label in heldout]
    possible = (sum(sizes) ** 2 - sum(n * n for n in sizes)) // 2
    if possible <= 4 * count:  # few: list them all and draw
        every = [(i, j) for i in range(len(images)) for j in range(i + 1, len(images))
                 if images[i][1] != images[j][1]]
        chosen = [every[k] for k in sorted(rng.choice(len(every), size=min(count, len(every)), replace=False))]
    else:  # many: draw until enough distinct ones
        seen: set[tuple[int, int]] = set()
        chosen = []
        while len(chosen) < count:
            i, j = (int(v) for v in rng.integers(0, len(images), size=2))
            key = (min(i, j), max(i, j))
            if images[i][1] != images[j][1] and key not in seen:
                seen.add(key)
                chosen.append((i, j))
    return [(images[i][0], images[j][0]) for i, j in chosen]
