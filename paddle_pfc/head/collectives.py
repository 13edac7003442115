"""The head's ordered collectives: :class:`~paddle_pfc.kernels.collectives.CollectiveChain` and
:func:`~paddle_pfc.kernels.collectives.zero_depending_on` (they live with the kernels, which
order their own collectives in the same chain)."""
from paddle_pfc.kernels.collectives import CollectiveChain, zero_depending_on

__all__ = ["CollectiveChain", "zero_depending_on"]
