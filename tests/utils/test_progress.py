"""paddle_pfc.utils.progress: the lines a long operation prints (rate, percentage, eta, final line)."""
import pytest

from paddle_pfc.utils.progress import Progress, format_duration


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_lines_report_rate_percentage_and_eta_at_the_period():
    clock, lines = FakeClock(), []
    with Progress("validate lfw", total=1000, unit="images", every_seconds=5, write=lines.append,
                  clock=clock) as progress:
        clock.now += 2
        progress.update(100)          # 2 s < 5 s: no line yet
        assert lines == []
        clock.now += 3
        progress.update(150)          # 250 images in 5 s: 50/s, 750 left -> 15 s
        assert lines == ["validate lfw: 250/1000 (25%) 50.0 images/s, 5.0 s elapsed, eta 00:00:15"]
        clock.now += 15
        progress.update(750)
    assert len(lines) == 3  # the period passed again at 1000, then the final line at close
    assert lines[-1] == "validate lfw: 1000/1000 (100%) 50.0 images/s, 20.0 s elapsed"


def test_unknown_total_and_disabled():
    clock, lines = FakeClock(), []
    progress = Progress("im2rec", write=lines.append, clock=clock, every_seconds=0)
    clock.now += 4
    progress.update(8)
    assert lines == ["im2rec: 8 2.0 items/s, 4.0 s elapsed"]
    silent = Progress("x", total=3, write=lines.append, clock=clock, enabled=False)
    silent.update(3)
    silent.close()
    silent.close()
    assert len(lines) == 1


def test_format_duration_and_bad_arguments():
    assert format_duration(3725.4) == "01:02:05"
    assert format_duration(90000) == "25:00:00"
    with pytest.raises(ValueError, match="total"):
        Progress("x", total=-1)
    with pytest.raises(ValueError, match="every_seconds"):
        Progress("x", every_seconds=-1)
