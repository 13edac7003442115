"""What a startup (PIR) program sets each parameter from: the op that computes a parameter's
initial value, read from the program itself."""
from __future__ import annotations

RANDOM_OPS = frozenset({"pd_op.gaussian", "pd_op.uniform", "pd_op.truncated_gaussian_random"})


def initialisers(startup) -> dict[str, str]:
    """``{parameter name: name of the op whose result the startup program sets it to}``."""
    found = {}
    for op in startup.global_block().ops:
        if op.name() == "builtin.set_parameter":
            found[op.attrs()["parameter_name"]] = op.operand_source(0).get_defining_op().name()
    return found
