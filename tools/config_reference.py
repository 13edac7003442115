#!/usr/bin/env python
"""Write ``docs/configuration.md``: every config key with its type, default, allowed values and
meaning, generated from the schema (the section dataclasses of ``paddle_pfc.engine.config.schema``), so
the reference cannot drift.

    python tools/config_reference.py            # rewrite docs/configuration.md
    python tools/config_reference.py --check    # exit 1 if the file is out of date
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paddle_pfc.cli.entry import run
from paddle_pfc.engine.config import SCHEMA, Field

TARGET = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
HEADER = """# Configuration reference

Generated from the section dataclasses in `paddle_pfc/engine/config/schema.py` by
`python tools/config_reference.py` (a test fails when this file is out of date). Configs are YAML
files passed with `-c FILE` and `-o section.key=value` overrides; a file may start from another with `_base_: FILE`
(the shipped recipes are deltas over `configs/base.yaml`). Every key is checked before
anything runs: an unknown key (with a "did you mean"), a wrong type or an impossible value is
an error naming the dotted key.
"""


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def _row(key: str, field: Field) -> str:
    default = "*required*" if field.required else f"`{_value(field.default)}`"
    kind = field.kind + (" or null" if field.nullable else "")
    choices = field.allowed()
    allowed = ", ".join(f"`{c}`" for c in choices) if choices else field.check.text if field.check else ""
    return f"| `{key}` | {kind} | {default} | {allowed} | {field.doc} |"


def render() -> str:
    """The whole reference as Markdown."""
    parts = [HEADER]
    for section, fields in SCHEMA.items():
        parts.append(f"\n## `{section}`\n\n| key | type | default | allowed | meaning |\n|---|---|---|---|---|")
        parts.extend(_row(f"{section}.{key}", field) for key, field in fields.items())
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/configuration.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python tools/config_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    run(main)
