"""The Gantt chart's variable row heights: a server holding hundreds of placements at once (the
edge-cloud preset's unlimited cloud server) gets a row tall enough for its lanes, on both paths
that build the figure (``charts.gantt`` and ``charts.gantt_from_index``)."""

import pytest

from webapp import charts
from webapp.runstore import gantt_index

EDGE = ["edge-0", "edge-1", "edge-2"]
BUSY = 200  # placements at once on the cloud server


def placement(job: str, server: str, start: int, end: int) -> dict[str, object]:
    return {"job_id": job, "server": server, "role": "worker", "type": "w", "count": 1, "start": start, "end": end,
            "demand": {"gpu": 1.0}}  # fmt: skip


def edge_cloud_doc(busy: int = BUSY) -> dict[str, object]:
    placements = [placement(f"e{i}", EDGE[i % 3], i, i + 20) for i in range(6)]  # two lanes per edge server
    placements += [placement(f"c{i}", "cloud", i % 7, 100 + i % 5) for i in range(busy)]
    placements.append(placement("c0", "cloud", 120, 130))  # c0 is suspended on the cloud over [100, 120)
    return {"servers": [{"id": sid} for sid in [*EDGE, "cloud"]], "slot_seconds": 60, "placements": placements,
            "restarts": [{"job_id": "c1", "start": 50, "end": 60}]}  # fmt: skip


def row_bounds(fig: dict) -> dict[str, tuple[float, float]]:
    """Each server's row [top, bottom) in y units, from the separators and the axis range."""
    axis = fig["layout"]["yaxis"]
    cuts = [axis["range"][1], *sorted(s["y0"] for s in fig["layout"]["shapes"]), axis["range"][0]]
    return {sid: (cuts[i], cuts[i + 1]) for i, sid in enumerate(axis["ticktext"])}


def cloud_bars(fig: dict) -> list[tuple[float, float, float, float]]:
    """(y top, y bottom, start, end) of each bar on the cloud server."""
    (worker,) = [t for t in fig["data"] if t["name"] == "worker" and t.get("showlegend") is False]
    return [(y - w / 2, y + w / 2, b, b + x)
            for y, w, b, x, c in zip(worker["y"], worker["width"], worker["base"], worker["x"], worker["customdata"],
                                     strict=True)
            if c[8] == "cloud"]  # fmt: skip


def test_a_server_with_hundreds_of_concurrent_placements_gets_a_taller_row_of_readable_bars():
    doc = edge_cloud_doc()
    for fig in (charts.gantt(doc, "x"), charts.gantt_from_index(gantt_index(doc), "x")):
        layout = fig["layout"]
        assert layout["meta"]["view"] == "bars"
        rows = row_bounds(fig)
        size = {sid: bottom - top for sid, (top, bottom) in rows.items()}
        assert size["cloud"] >= 10 * size["edge-0"]
        assert size["edge-0"] == size["edge-1"] == size["edge-2"] == 1  # ordinary rows keep one unit
        # tick labels at the row centres
        assert layout["yaxis"]["tickvals"] == [pytest.approx(sum(rows[sid]) / 2) for sid in layout["yaxis"]["ticktext"]]
        assert layout["height"] <= charts.MAX_HEIGHT
        px_per_unit = (layout["height"] - 130) / (layout["yaxis"]["range"][0] - layout["yaxis"]["range"][1])
        bars = cloud_bars(fig)
        assert len(bars) == BUSY + 1
        top, bottom = rows["cloud"]
        for y0, y1, _, _ in bars:
            assert top <= y0 < y1 <= bottom
            assert (y1 - y0) * px_per_unit >= 4  # at least 4 pixels per bar (today: under one pixel)
        # bars that overlap in time never overlap on screen
        for i, (a0, a1, s0, e0) in enumerate(bars):
            for b0, b1, s1, e1 in bars[i + 1 :]:
                if s0 < e1 and s1 < e0:
                    assert a1 <= b0 or b1 <= a0
        # the suspension mark below the cloud's lanes stays within the cloud's row
        (susp,) = [t for t in fig["data"] if t["name"] == "suspended"]
        assert all(top < y < bottom for y in susp["y"])
    # the restart hatch lies on the restarting job's own bar, at the bar's height
    fig = charts.gantt(doc, "x")
    (hatch,) = [t for t in fig["data"] if t["name"] == "restarting (no progress)"]
    (worker,) = [t for t in fig["data"] if t["name"] == "worker" and t.get("showlegend") is False]
    bars = zip(worker["y"], worker["width"], worker["customdata"], strict=True)
    (own,) = [(y, w) for y, w, c in bars if c[0] == "c1"]
    assert (hatch["y"], hatch["width"]) == ([own[0]], [own[1]])


def test_an_ordinary_cluster_keeps_rows_of_one_height_and_a_capped_figure_shrinks_every_row():
    ordinary = edge_cloud_doc(busy=2)  # the cloud has two lanes like the edge servers
    fig = charts.gantt(ordinary, "x")
    assert fig["layout"]["yaxis"]["tickvals"] == [0, 1, 2, 3]
    assert fig["layout"]["yaxis"]["range"] == [3.5, -0.5]
    assert fig["layout"]["height"] == 130 + 4 * 48
    huge = charts.gantt(edge_cloud_doc(busy=1000), "x")  # 1,000 lanes at the per-lane minimum exceed MAX_HEIGHT
    assert huge["layout"]["height"] == charts.MAX_HEIGHT
    size = {sid: bottom - top for sid, (top, bottom) in row_bounds(huge).items()}
    assert size["cloud"] >= 50 * size["edge-0"]
