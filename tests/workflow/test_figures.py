"""The report figures' convention (mvl.workflow.figures): a Figure built without pyplot, saved atomically."""

from __future__ import annotations

from mvl.workflow import report as R
from mvl.workflow.figures import new_figure, save_figure

from .test_report import _sweep


def test_save_figure_atomic(tmp_path):
    fig = R.accuracy_figure(_sweep(lcs=(1, 5), ucs=(5,), splits=(0, 1)), "toy")
    save_figure(fig, tmp_path / "f" / "a.png", tmp_path / "f" / "a.pdf")
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["a.pdf", "a.pdf.sha256", "a.png", "a.png.sha256"]
    assert (tmp_path / "f" / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "f" / "a.pdf").read_bytes()[:4] == b"%PDF"


def test_new_figure_gives_a_grid_of_axes_of_the_requested_size():
    fig, axes = new_figure(2, 3, 6.0, 4.0, sharey=True)
    assert axes.shape == (2, 3) and tuple(fig.get_size_inches()) == (6.0, 4.0)
    assert axes[0, 0].get_shared_y_axes().joined(axes[0, 0], axes[1, 2])


def test_save_figure_skips_a_missing_path_and_keeps_artists_outside_the_axes(tmp_path):
    fig, axes = new_figure(1, 1, 3.0, 2.0, layout=None)
    axes[0, 0].plot([0, 1], [0, 1], label="a line")
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0))  # below the figure
    save_figure(fig, tmp_path / "plain.png", None, dpi=50)
    save_figure(fig, tmp_path / "tight.png", dpi=50, bbox_inches="tight")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".png") == ["plain.png", "tight.png"]
    from matplotlib.image import imread

    assert imread(tmp_path / "tight.png").shape[0] > imread(tmp_path / "plain.png").shape[0]


def test_a_truncated_figure_is_found_by_its_sidecar_like_a_table(tmp_path):
    """Each figure has its checksum sidecar (sha256sum format): a truncated PNG or PDF no longer matches it, and the
    workflow's start-up check (verify_outputs) deletes it, so that its report is recomputed; the intact one stays."""
    import hashlib

    from mvl.workflow import io

    fig = R.accuracy_figure(_sweep(lcs=(1, 5), ucs=(5,), splits=(0, 1)), "toy")
    png, pdf = tmp_path / "figures" / "a.png", tmp_path / "figures" / "a.pdf"
    save_figure(fig, png, pdf)
    for p in (png, pdf):
        assert io.sidecar_path(p).read_text() == f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
        assert io.verify_file(p) is True
    png.write_bytes(png.read_bytes()[: png.stat().st_size // 2])
    assert io.verify_file(png) is False and io.verify_file(pdf) is True
    assert io.verify_outputs(tmp_path) == [png]
    assert not png.exists() and not io.sidecar_path(png).exists() and pdf.exists()
