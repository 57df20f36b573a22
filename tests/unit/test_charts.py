"""bot.render.charts: a chart's data -> PNG; Korean labels never fail a chart."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.models import Chart, ChartPanel
from bot.render import charts

pytest.importorskip("matplotlib", reason="charts need the charts extra (matplotlib)")

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG) and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def weights(labels: tuple[str, ...], values: tuple[float, ...]) -> Chart:
    return Chart(
        alt="alt",
        panels=(ChartPanel("bars", "가중치", labels, values, fallback_title="Weights"),),
    )


@pytest.mark.parametrize(
    ("panels", "height"),
    [
        ((ChartPanel("line", "Sends", ("05-01", "05-02"), (1.0, 3.0)),), 280),
        (
            (
                ChartPanel(
                    "line", "Sends", tuple(f"05-{d:02d}" for d in range(1, 15)), (0.0,) * 14
                ),
                ChartPanel("bars", "Tags", ("rl", "reasoning"), (3.0, 1.0)),
            ),
            280 + 168,
        ),
    ],
)
def test_a_chart_is_a_png_a_panel_under_another(
    panels: tuple[ChartPanel, ...], height: int
) -> None:
    assert png_size(charts.render_png(Chart("alt", panels))) == (640, height)


def test_korean_labels_and_negative_weights_draw_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = charts.render_png(weights(("강화학습", "rl", "로봇"), (2.0, 1.0, -1.5)))
    assert data.startswith(PNG)


@pytest.mark.parametrize(
    ("text", "covered", "shown"),
    [
        ("rl", frozenset(map(ord, "rl")), "rl"),
        ("강화 rl", frozenset(map(ord, "rl")), "\\uac15\\ud654 rl"),
        ("강화", frozenset(map(ord, "강화")), "강화"),
    ],
)
def test_a_label_the_fonts_cannot_draw_is_ascii_safe(
    text: str, covered: frozenset[int], shown: str
) -> None:
    assert charts._safe(text, covered) == shown


def test_a_chart_with_no_data_is_refused() -> None:
    with pytest.raises(ValueError, match="no data"):
        charts.render_png(Chart("alt", (ChartPanel("bars", "Tags", (), ()),)))


async def test_picture_never_raises_and_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="bot.charts"):
        assert await charts.picture(Chart("alt", ())) is None
    assert [r.levelno for r in caplog.records if r.name == "bot.charts"] == [logging.WARNING]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.text(min_size=1, max_size=64).filter(str.strip),
            st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        ),
        min_size=1,
        max_size=10,
    )
)
@example([("$$", 1.0), ("$x^2$ \\frac", -2.0)])  # TeX syntax in a tag is drawn as text
def test_any_labels_and_weights_draw(found: list[tuple[str, float]]) -> None:
    labels, values = zip(*found, strict=True)
    assert charts.render_png(weights(tuple(labels), tuple(values))).startswith(PNG)


def test_importing_the_bot_does_not_import_matplotlib() -> None:
    code = (
        "import sys, bot.render.charts, bot.channels.telegram.channel, bot.channels.slack.channel,"
        " bot.__main__;"
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_with_a_hangul_font_installed_korean_labels_are_drawn_as_hangul() -> None:
    from matplotlib import font_manager

    if charts._hangul_font(font_manager) is None:
        pytest.skip("no font with Hangul is installed here (.ci/run installs fonts-nanum)")
    _, covered = charts._fonts()
    assert charts._safe("강화학습 rl", covered) == "강화학습 rl"
