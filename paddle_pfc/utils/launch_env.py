"""What ``paddle.distributed.launch`` tells a rank through its environment, and whether the user
asked for Paddle's full output (``PADDLE_PFC_VERBOSE``)."""
from __future__ import annotations

import os

VERBOSE_ENV = "PADDLE_PFC_VERBOSE"


def verbose() -> bool:
    """True when ``PADDLE_PFC_VERBOSE`` asks for Paddle's full logs and full tracebacks."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def env_int(*names: str, default: int) -> int:
    """The first of the environment variables ``names`` that is set and not empty, as an int;
    ``default`` when none is."""
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return int(value)
    return default


def local_world_size() -> int:
    """The number of ranks on this node (``PADDLE_LOCAL_SIZE`` from the launcher; 1 when started
    by plain ``python``)."""
    return max(1, env_int("PADDLE_LOCAL_SIZE", default=1))
