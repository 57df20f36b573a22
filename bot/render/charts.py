"""Charts: a reply's :class:`~bot.models.Chart` (data) -> PNG bytes.

matplotlib is an optional extra (``pip install 'ai-trend-notifier[charts]'``): it is
imported only when a chart is drawn, so start-up and the commands that draw nothing never
pay for it, and without it every reply is its text alone. It draws with the Agg backend
(no display, no GUI toolkit) through the object-oriented API, never ``pyplot``'s global
figures.

Labels in Korean need a font with Hangul: the first installed one of :data:`HANGUL_FONTS`
(or any whose name says CJK or Korean and that has the glyphs). Where there is none, a
label with characters no font can draw is shown ASCII-safe instead (a panel's title falls
back to its English title, a tag to its escaped form such as ``\\uac15\\ud654``): a missing
glyph never fails a chart, nor draws an empty box.

A chart is only ever an addition to a reply's text: :func:`picture` never raises, and
logs one line when a chart cannot be drawn.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import io
import logging
import threading
import warnings
from collections.abc import Iterable
from typing import Any

from bot.models import Chart, ChartPanel

log = logging.getLogger("bot.charts")

DPI = 100
WIDTH_INCHES = 6.4  # 640 px: a phone shows it whole, a desktop client at its natural size
PANEL_HEIGHT_INCHES = 2.8
BAR_HEIGHT_INCHES = 0.28  # a horizontal bar chart grows with its labels
LEGEND_HEIGHT_INCHES = 0.3  # a panel of several lines names them in a row below it
LIKED_COLOUR = "#2e7d32"
DISLIKED_COLOUR = "#c62828"
SERIES_COLOUR = "#1565c0"
# Several lines on one panel: told apart by the colour-blind too (Okabe-Ito).
LINE_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00")
MAX_TICKS = 8  # date labels on a panel's x axis: more would overlap at 640 px
# Fonts with Hangul, the most common first (Linux packages, then Windows and macOS).
HANGUL_FONTS = (
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Source Han Sans KR",
    "NanumGothic",
    "NanumBarunGothic",
    "Malgun Gothic",
    "Apple SD Gothic Neo",
    "AppleGothic",
    "UnDotum",
    "Baekmuk Gulim",
)
_HANGUL_PROBE = 0xAC00  # 가
_BASE_FONT = "DejaVu Sans"  # matplotlib ships it: always there

# matplotlib's font settings are process-wide; one chart is drawn at a time.
_drawing = threading.Lock()
_reported_missing = False


def available() -> bool:
    """Whether charts can be drawn here: matplotlib is installed (it is not imported)."""
    return _matplotlib_installed()


@functools.cache
def _matplotlib_installed() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


async def picture(chart: Chart) -> bytes | None:
    """The PNG of ``chart``, drawn in a worker thread; None when it cannot be drawn (no
    matplotlib: said once a process, at INFO; a failure: one WARNING line each time)."""
    global _reported_missing
    if not available():
        if not _reported_missing:
            _reported_missing = True
            log.info("charts: matplotlib is not installed; replies are sent as text alone")
        return None
    try:
        return await asyncio.to_thread(render_png, chart)
    except Exception as exc:
        log.warning("charts: could not draw a chart: %s: %s", type(exc).__name__, exc)
        return None


def render_png(chart: Chart) -> bytes:
    """Draw ``chart``: one plot a panel, stacked, in one PNG.

    Raises:
        ImportError: matplotlib is not installed.
        ValueError: the chart has no panel with data.
    """
    panels = [panel for panel in chart.panels if panel.labels and (panel.values or panel.series)]
    if not panels:
        raise ValueError("a chart with no data")
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with _drawing:
        families, covered = _fonts()
        heights = [_panel_height(panel) for panel in panels]
        # A glyph that a font lacks after all would be a warning and an empty box, not an
        # error; warnings are never the way a chart fails.
        with (
            # Labels are tags and titles, never TeX: a "$" in one is drawn as a dollar sign.
            rc_context(
                {"font.family": "sans-serif", "font.sans-serif": families, "text.parse_math": False}
            ),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            figure = Figure(figsize=(WIDTH_INCHES, sum(heights)), dpi=DPI, layout="constrained")
            FigureCanvasAgg(figure)
            grid = figure.add_gridspec(len(panels), 1, height_ratios=heights)
            for row, panel in enumerate(panels):
                axes = figure.add_subplot(grid[row, 0])
                title = panel.title
                if not _drawable(title, covered) and panel.fallback_title:
                    title = panel.fallback_title
                title = _safe(title, covered)
                axes.set_title(title, loc="left", fontsize=11)
                labels = [_safe(label, covered) for label in panel.labels]
                if panel.kind == "bars":
                    _bars(axes, labels, panel.values)
                elif panel.kind == "lines":
                    named = [(_safe(s.name, covered), s.values) for s in panel.series]
                    _lines(axes, labels, named)
                else:
                    _line(axes, labels, panel.values)
                for side in ("top", "right"):
                    axes.spines[side].set_visible(False)
            out = io.BytesIO()
            figure.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _panel_height(panel: ChartPanel) -> float:
    if panel.kind == "bars":
        return max(PANEL_HEIGHT_INCHES * 0.6, 0.9 + BAR_HEIGHT_INCHES * len(panel.labels))
    if panel.kind == "lines":
        return PANEL_HEIGHT_INCHES + LEGEND_HEIGHT_INCHES
    return PANEL_HEIGHT_INCHES


def _bars(axes: Any, labels: list[str], values: Iterable[float]) -> None:
    """Horizontal bars, the first label on top; negative values to the left, in red."""
    numbers = list(values)
    colours = [LIKED_COLOUR if v >= 0 else DISLIKED_COLOUR for v in numbers]
    positions = list(range(len(numbers)))
    axes.barh(positions, numbers, color=colours)
    axes.set_yticks(positions, labels)
    axes.invert_yaxis()
    if any(v < 0 for v in numbers):
        axes.axvline(0, color="#555555", linewidth=0.8)
    axes.grid(axis="x", alpha=0.3)


def _line(axes: Any, labels: list[str], values: Iterable[float]) -> None:
    """A series over time: a point a label, every other label shown when there are many."""
    numbers = list(values)
    positions = list(range(len(numbers)))
    axes.plot(positions, numbers, marker="o", color=SERIES_COLOUR)
    axes.fill_between(positions, numbers, alpha=0.15, color=SERIES_COLOUR)
    step = 1 if len(labels) <= 8 else 2
    axes.set_xticks(positions[::step], labels[::step])
    axes.set_ylim(bottom=0)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.grid(axis="y", alpha=0.3)


def _lines(axes: Any, labels: list[str], series: list[tuple[str, tuple[float, ...]]]) -> None:
    """Several series over the same labels, one colour each, named in a legend; about
    :data:`MAX_TICKS` labels shown however many there are."""
    positions = list(range(len(labels)))
    for index, (name, values) in enumerate(series):
        colour = LINE_COLOURS[index % len(LINE_COLOURS)]
        axes.plot(positions, list(values), marker=".", color=colour, label=name)
    step = max(1, -(-len(labels) // MAX_TICKS))
    axes.set_xticks(positions[::step], labels[::step])
    axes.set_ylim(bottom=0)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.grid(axis="y", alpha=0.3)
    # Under the dates, not over the lines.
    axes.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        fontsize=8,
        frameon=False,
        ncols=min(len(series), len(LINE_COLOURS)),
    )


def _drawable(text: str, covered: frozenset[int]) -> bool:
    return all(ord(ch) in covered or ch.isspace() for ch in text)


def _safe(text: str, covered: frozenset[int]) -> str:
    """``text`` as drawn: itself when the fonts have every character; else ASCII-safe."""
    if _drawable(text, covered):
        return text
    return "".join(ch if ord(ch) in covered else ascii(ch)[1:-1] for ch in text)


@functools.cache
def _fonts() -> tuple[list[str], frozenset[int]]:
    """The font families to draw with (a Hangul one after the base font, when installed)
    and the characters they cover together."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    base = font_manager.findfont(_BASE_FONT, fallback_to_default=True)
    covered = set(FT2Font(base).get_charmap())
    families = [_BASE_FONT]
    hangul = _hangul_font(font_manager)
    if hangul is not None:
        name, path = hangul
        families.append(name)
        covered.update(FT2Font(path).get_charmap())
    else:
        log.info("charts: no font with Hangul is installed; Korean labels are drawn ASCII-safe")
    return families, frozenset(covered)


def _hangul_font(font_manager: Any) -> tuple[str, str] | None:
    """The first installed font of :data:`HANGUL_FONTS`, or else any CJK or Korean one,
    that has Hangul glyphs: its family name and file."""
    from matplotlib.ft2font import FT2Font

    by_name: dict[str, str] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, entry.fname)
    named = [name for name in HANGUL_FONTS if name in by_name]
    others = sorted(
        name
        for name in by_name
        if name not in HANGUL_FONTS and any(k in name for k in ("CJK", "KR", "Korean", "Nanum"))
    )
    for name in named + others:
        try:
            if _HANGUL_PROBE in FT2Font(by_name[name]).get_charmap():
                return name, by_name[name]
        except (OSError, RuntimeError):  # a font file that cannot be read is no candidate
            continue
    return None


__all__ = ["available", "picture", "render_png"]
