"""A package's names imported on first use: nothing imported before, the module's own object
after, kept in the package; unknown names refused with the package's name."""
from __future__ import annotations

import sys

import pytest


def test_names_are_imported_on_first_use_and_kept(tmp_path, monkeypatch):
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from paddle_pfc.utils.lazy import lazy_getattr\n"
        "__getattr__ = lazy_getattr(__name__, {'answer': 'lazypkg.heavy'}, globals())\n")
    (package / "heavy.py").write_text("answer = [42]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("lazypkg", "lazypkg.heavy"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import lazypkg

    assert "lazypkg.heavy" not in sys.modules and "answer" not in vars(lazypkg)
    assert lazypkg.answer == [42] and "lazypkg.heavy" in sys.modules
    assert vars(lazypkg)["answer"] is sys.modules["lazypkg.heavy"].answer
    with pytest.raises(AttributeError, match="module 'lazypkg' has no attribute 'question'"):
        lazypkg.question
