"""Small SVG bar charts for the benchmarks' results in ``docs/benchmarks/``.

Written by hand rather than with a plotting library: the benchmarks run from the test
extras alone, and a grouped bar chart is a few rectangles and labels. The output is
deterministic for the same figures, so a regenerated chart changes only when they do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

WIDTH, HEIGHT = 640, 320
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 16, 36, 64
COLOURS = ("#3b6ea5", "#e3a33b", "#5a9e6f", "#b5545c")


def _ticks(bottom: float, top: float) -> list[float]:
    span = top - bottom
    step = 1.0
    while span / step < 3:
        step /= 10
    while span / step > 6:
        step *= 2
    ticks, value = [], bottom
    while not ticks or ticks[-1] < top - 1e-9:
        ticks.append(round(value, 6))
        value += step
    return ticks


def bar_chart(
    path: Path,
    *,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    y_label: str,
    reference: float | None = None,
    reference_label: str = "",
    y_min: float = 0.0,
) -> Path:
    """Write a grouped bar chart: one group per category, one bar per series.

    ``reference`` draws a dashed horizontal line (a target, such as 0.95 of the cap);
    ``y_min`` starts the axis above zero where the differences are small (rates near 1).
    """
    values = [v for vs in series.values() for v in vs] + ([reference] if reference else [])
    top = max(values) if values and max(values) > y_min else y_min + 1.0
    top = y_min + (top - y_min) * 1.1
    ticks = _ticks(y_min, top)
    top = max(top, ticks[-1])
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM

    def y(value: float) -> float:
        return MARGIN_TOP + plot_h * (1 - (max(value, y_min) - y_min) / (top - y_min))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
        f'<text x="14" y="{MARGIN_TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {MARGIN_TOP + plot_h / 2})">{escape(y_label)}</text>',
    ]
    for tick in ticks:
        out.append(
            f'<line x1="{MARGIN_LEFT}" x2="{WIDTH - MARGIN_RIGHT}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}" stroke="#ddd"/>'
            f'<text x="{MARGIN_LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>'
        )
    group_w = plot_w / max(len(categories), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)
    for c, category in enumerate(categories):
        x0 = MARGIN_LEFT + c * group_w + group_w * 0.1
        for s, (name, vs) in enumerate(series.items()):
            value = vs[c]
            x = x0 + s * bar_w
            out.append(
                f'<rect x="{x:.1f}" y="{y(value):.1f}" width="{bar_w - 2:.1f}" '
                f'height="{y(0) - y(value):.1f}" fill="{COLOURS[s % len(COLOURS)]}">'
                f"<title>{escape(name)} {escape(category)}: {value:g}</title></rect>"
            )
        out.append(
            f'<text x="{x0 + group_w * 0.4:.1f}" y="{HEIGHT - MARGIN_BOTTOM + 16}" '
            f'text-anchor="middle">{escape(category)}</text>'
        )
    if reference is not None:
        out.append(
            f'<line x1="{MARGIN_LEFT}" x2="{WIDTH - MARGIN_RIGHT}" y1="{y(reference):.1f}" '
            f'y2="{y(reference):.1f}" stroke="#b5545c" stroke-dasharray="6 4"/>'
            f'<text x="{WIDTH - MARGIN_RIGHT}" y="{y(reference) - 4:.1f}" text-anchor="end" '
            f'fill="#b5545c">{escape(reference_label)}</text>'
        )
    legend_y = HEIGHT - 18
    for s, name in enumerate(series):
        x = MARGIN_LEFT + s * 150
        out.append(
            f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" '
            f'fill="{COLOURS[s % len(COLOURS)]}"/>'
            f'<text x="{x + 14}" y="{legend_y}">{escape(name)}</text>'
        )
    out.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
