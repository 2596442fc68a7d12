"""Chart and table assembly from result documents (DESIGN section 4) only: no models, no queries.

Figures are plain Plotly JSON dicts ({"data", "layout"}) drawn by the local plotly.js. One module per
kind of chart: ``tables`` (metrics and summary tables), ``placements`` (the Gantt chart and its
aggregate heat map), ``compare`` (comparisons across runs), ``timeline`` (events over time),
``sweeps``, ``prices``; ``style`` holds the shared palettes and figure frame. The names below are
re-exported so callers use ``charts.<name>``.
"""

from webapp.charts.compare import (
    BAR_METRICS,
    jct_box,
    jct_cdf,
    jct_scatter,
    jcts,
    log_axis,
    metric_bars,
    timeliness,
    utilization,
)
from webapp.charts.placements import (
    AGGREGATE_BINS,
    LABEL_BARS,
    LANE_PX,
    MAX_BARS,
    MAX_HEIGHT,
    MAX_IDLE_ROWS,
    OUTLINE_BARS,
    ROLES,
    ROW_PX,
    ROW_SPAN,
    Columns,
    Rows,
    aggregate_columns,
    assign_lanes,
    clock,
    filter_placements,
    gantt,
    gantt_aggregate,
    gantt_from_index,
    job_colour,
    row_layout,
)
from webapp.charts.prices import price_lines
from webapp.charts.style import JOB_PALETTE, PALETTE
from webapp.charts.sweeps import sweep_charts
from webapp.charts.tables import (
    HIGHER_BETTER,
    LOWER_BETTER,
    METRIC_COLUMNS,
    format_params,
    format_value,
    metric_columns,
    metrics_row,
    sort_key,
    summary_table,
)
from webapp.charts.timeline import events_over_time, suspensions

__all__ = [
    "AGGREGATE_BINS",
    "BAR_METRICS",
    "HIGHER_BETTER",
    "JOB_PALETTE",
    "LABEL_BARS",
    "LANE_PX",
    "LOWER_BETTER",
    "MAX_BARS",
    "MAX_HEIGHT",
    "MAX_IDLE_ROWS",
    "METRIC_COLUMNS",
    "OUTLINE_BARS",
    "PALETTE",
    "ROLES",
    "ROW_PX",
    "ROW_SPAN",
    "Columns",
    "Rows",
    "aggregate_columns",
    "assign_lanes",
    "clock",
    "events_over_time",
    "filter_placements",
    "format_params",
    "format_value",
    "gantt",
    "gantt_aggregate",
    "gantt_from_index",
    "jct_box",
    "jct_cdf",
    "jct_scatter",
    "jcts",
    "job_colour",
    "log_axis",
    "metric_bars",
    "metric_columns",
    "metrics_row",
    "price_lines",
    "row_layout",
    "sort_key",
    "summary_table",
    "suspensions",
    "sweep_charts",
    "timeliness",
    "utilization",
]
