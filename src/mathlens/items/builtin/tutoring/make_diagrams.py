"""Draw the diagrams of the built-in tutoring items (run once; the PNGs are committed).

    python src/mathlens/items/builtin/tutoring/make_diagrams.py

Every figure is small (about 320 x 240 pixels, a few kilobytes) and uses only matplotlib, so the
set can be redrawn on any machine. Each item in `tutoring.yaml` also carries a text description of
its diagram for models that cannot read images.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers; must be set before pyplot is imported
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.patches import Arc, Ellipse, Polygon, Rectangle, Wedge

HERE = Path(__file__).resolve().parent
SIZE = (4.0, 3.0)
DPI = 80


def _bare(ax: Axes) -> None:
    ax.set_aspect("equal")
    ax.axis("off")


def bar_chart(ax: Axes) -> None:
    """Books read by four students (grade 4 data item)."""
    names = ["Ana", "Ben", "Cleo", "Dev"]
    books = [9, 4, 7, 6]
    ax.bar(names, books, color="#6a8fbf")
    ax.set_ylim(0, 10)
    ax.set_yticks(range(0, 11, 1))
    ax.set_ylabel("Books read")
    ax.set_title("Books read in March")
    ax.grid(axis="y", linewidth=0.4)


def rectangle(ax: Axes) -> None:
    """A 7 cm by 4 cm rectangle (grade 4 area item)."""
    ax.add_patch(Rectangle((0, 0), 7, 4, fill=False, linewidth=2))
    ax.text(3.5, -0.6, "7 cm", ha="center")
    ax.text(7.3, 2, "4 cm", va="center")
    ax.set_xlim(-0.5, 8.5)
    ax.set_ylim(-1.2, 4.6)
    _bare(ax)


def fraction_circle(ax: Axes) -> None:
    """A circle cut into 8 equal parts with 3 shaded (grade 4 fraction item)."""
    for k in range(8):
        ax.add_patch(Wedge((0, 0), 1, 45 * k, 45 * (k + 1), facecolor="#f2b134" if k < 3 else "white",
                           edgecolor="black"))
    ax.set_xlim(-1.2, 1.2)
    ax.set_ylim(-1.2, 1.2)
    _bare(ax)


def number_line(ax: Axes) -> None:
    """A number line from 0 to 1 in tenths with point P at 0.7 (grade 4 decimals item)."""
    ax.plot([0, 1], [0, 0], color="black")
    for k in range(11):
        ax.plot([k / 10, k / 10], [-0.03, 0.03], color="black")
    ax.text(0, -0.1, "0", ha="center")
    ax.text(1, -0.1, "1", ha="center")
    ax.plot([0.7], [0], "o", color="#c0392b")
    ax.text(0.7, 0.07, "P", ha="center")
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(-0.2, 0.2)
    ax.axis("off")


def clock(ax: Axes) -> None:
    """An analog clock showing 3:15 (grade 4 elapsed-time item)."""
    ax.add_patch(plt.Circle((0, 0), 1, fill=False, linewidth=2))
    for h in range(1, 13):
        a = math.radians(90 - 30 * h)
        ax.text(0.82 * math.cos(a), 0.82 * math.sin(a), str(h), ha="center", va="center", fontsize=8)
    hour = math.radians(90 - 30 * 3.25)
    minute = math.radians(90 - 6 * 15)
    ax.plot([0, 0.45 * math.cos(hour)], [0, 0.45 * math.sin(hour)], color="black", linewidth=3)
    ax.plot([0, 0.7 * math.cos(minute)], [0, 0.7 * math.sin(minute)], color="black", linewidth=1.5)
    ax.set_xlim(-1.1, 1.1)
    ax.set_ylim(-1.1, 1.1)
    _bare(ax)


def line_graph(ax: Axes) -> None:
    """The line through (0, 2) and (4, 10) on a grid (grade 8 slope item)."""
    ax.plot([0, 4], [2, 10], color="#2e86c1", linewidth=2)
    ax.plot([0, 4], [2, 10], "o", color="black")
    ax.annotate("(0, 2)", (0, 2), textcoords="offset points", xytext=(6, -10))
    ax.annotate("(4, 10)", (4, 10), textcoords="offset points", xytext=(-40, 4))
    ax.set_xlim(-1, 5)
    ax.set_ylim(0, 12)
    ax.set_xticks(range(-1, 6))
    ax.set_yticks(range(0, 13, 2))
    ax.grid(linewidth=0.4)
    ax.set_xlabel("x")
    ax.set_ylabel("y")


def right_triangle(ax: Axes) -> None:
    """A right triangle with legs 6 and 8 (grade 8 Pythagorean item)."""
    ax.add_patch(Polygon([(0, 0), (8, 0), (0, 6)], closed=True, fill=False, linewidth=2))
    ax.add_patch(Rectangle((0, 0), 0.6, 0.6, fill=False))
    ax.text(4, -0.8, "8", ha="center")
    ax.text(-0.7, 3, "6", va="center")
    ax.text(4.4, 3.4, "?", fontsize=12)
    ax.set_xlim(-1.5, 9)
    ax.set_ylim(-1.5, 7)
    _bare(ax)


def scatter(ax: Axes) -> None:
    """Hours studied against test score for ten students (grade 8 association item)."""
    hours = [1, 2, 2, 3, 4, 4, 5, 6, 7, 8]
    scores = [52, 55, 61, 60, 68, 72, 74, 79, 85, 90]
    ax.scatter(hours, scores, color="#7d3c98")
    ax.set_xlabel("Hours studied")
    ax.set_ylabel("Test score")
    ax.set_xlim(0, 9)
    ax.set_ylim(40, 100)
    ax.grid(linewidth=0.4)


def parallel_lines(ax: Axes) -> None:
    """Two parallel lines cut by a transversal; one angle is 65 degrees (grade 8 angles item)."""
    ax.plot([-3, 3], [1, 1], color="black")
    ax.plot([-3, 3], [-1, -1], color="black")
    slope_deg = 65.0
    dx = 2 / math.tan(math.radians(slope_deg))
    ax.plot([-dx, dx], [-2, 2], color="#c0392b")
    # where the transversal meets y = 1 and y = -1
    top = (dx / 2, 1.0)
    bottom = (-dx / 2, -1.0)
    ax.add_patch(Arc(top, 0.6, 0.6, theta1=0, theta2=slope_deg))
    ax.text(top[0] + 0.4, top[1] + 0.15, "65°", fontsize=9)
    ax.add_patch(Arc(bottom, 0.6, 0.6, theta1=slope_deg, theta2=180))
    ax.text(bottom[0] - 0.6, bottom[1] + 0.2, "x", fontsize=11)
    ax.text(2.6, 1.15, "m", fontsize=9)
    ax.text(2.6, -0.85, "n", fontsize=9)
    ax.set_xlim(-3.2, 3.2)
    ax.set_ylim(-2.2, 2.2)
    _bare(ax)


def cylinder(ax: Axes) -> None:
    """A cylinder with radius 3 cm and height 5 cm (grade 8 volume item)."""
    ax.add_patch(Ellipse((0, 5), 6, 1.4, fill=False, linewidth=1.5))
    ax.add_patch(Arc((0, 0), 6, 1.4, theta1=180, theta2=360, linewidth=1.5))
    ax.add_patch(Arc((0, 0), 6, 1.4, theta1=0, theta2=180, linestyle="--", linewidth=1))
    ax.plot([-3, -3], [0, 5], color="black")
    ax.plot([3, 3], [0, 5], color="black")
    ax.plot([0, 3], [5, 5], color="black", linewidth=1)
    ax.text(1.5, 5.2, "3 cm", ha="center", fontsize=9)
    ax.text(3.3, 2.5, "5 cm", va="center", fontsize=9)
    ax.set_xlim(-4, 5)
    ax.set_ylim(-1.2, 6.2)
    _bare(ax)


DIAGRAMS: dict[str, Callable[[Axes], None]] = {
    "g4_bar_chart.png": bar_chart,
    "g4_rectangle.png": rectangle,
    "g4_fraction_circle.png": fraction_circle,
    "g4_number_line.png": number_line,
    "g4_clock.png": clock,
    "g8_line_graph.png": line_graph,
    "g8_right_triangle.png": right_triangle,
    "g8_scatter.png": scatter,
    "g8_parallel_lines.png": parallel_lines,
    "g8_cylinder.png": cylinder,
}


def main(out_dir: Path = HERE) -> list[Path]:
    """Draw every diagram into `out_dir` and return the written paths."""
    written = []
    for name, draw in DIAGRAMS.items():
        fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
        draw(ax)
        fig.tight_layout()
        path = out_dir / name
        fig.savefig(path, dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main():
        print(p.name, p.stat().st_size)
