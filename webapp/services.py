"""What the views call, gathered in one namespace: each name lives in the module of its concern and
is re-exported here (nothing in webapp/ below the views imports this module).

- ``webapp.access``: fetching objects for a user (``get_experiment(pk, user)``, ``get_run``, ...);
- ``webapp.sharing``: share links (``get_shared(token)``, ``share``, ``share_url``, ``revoke``);
- ``webapp.experiments``: ``create_experiment``, ``cancel``, ``rerun``, ``delete_experiment``;
- ``webapp.dispatch``, ``webapp.recovery``: sending runs to the workers, ``recover_runs``;
- ``webapp.results_io``: stored results and their indexes;
- ``webapp.runstatus``, ``webapp.pages``: the status payload and the experiment page per tab;
- ``webapp.exports``: CSV, zip and the API's description;
- ``webapp.inputs``: ``Inputs``, ``Submission``, ``preview``.

A test that replaces one of these names replaces it in its own module (``webapp.results_io``, ...),
where its callers look it up.
"""

from __future__ import annotations

from webapp.access import (
    User,
    get_dataset,
    get_experiment,
    get_run,
    list_experiments,
    user_for_token,
    visible_experiments,
)
from webapp.dispatch import dispatch, enqueue
from webapp.experiments import NAME_LENGTH, cancel, create_experiment, delete_experiment, rerun
from webapp.exports import (
    JOB_COLUMNS,
    PLACEMENT_COLUMNS,
    RAW_INPUTS_NOTE,
    _safe,
    describe,
    experiment_zip,
    jobs_csv,
    placements_csv,
)
from webapp.inputs import Inputs, Submission, preview
from webapp.pages import TABS, experiment_page, history_notes, repetition_bands, same_variants
from webapp.recovery import expire_lost_runs, recover_runs
from webapp.results_io import (
    RESULT_CHUNK,
    load_chart_doc,
    load_gantt_index,
    load_result,
    result_bytes,
    result_chunks,
    stored_name,
)
from webapp.runstatus import queue_positions, status, waiting_long
from webapp.security import csv_cell
from webapp.sharing import (
    LOOPBACK_HOSTS,
    SHARE_EXPIRY_DAYS,
    ShareUnavailable,
    get_shared,
    live_share_links,
    revoke,
    share,
    share_url,
)

__all__ = [
    "JOB_COLUMNS",
    "LOOPBACK_HOSTS",
    "NAME_LENGTH",
    "PLACEMENT_COLUMNS",
    "RAW_INPUTS_NOTE",
    "RESULT_CHUNK",
    "SHARE_EXPIRY_DAYS",
    "TABS",
    "Inputs",
    "ShareUnavailable",
    "Submission",
    "User",
    "_safe",
    "cancel",
    "create_experiment",
    "csv_cell",
    "delete_experiment",
    "describe",
    "dispatch",
    "enqueue",
    "experiment_page",
    "experiment_zip",
    "expire_lost_runs",
    "get_dataset",
    "get_experiment",
    "get_run",
    "get_shared",
    "history_notes",
    "jobs_csv",
    "list_experiments",
    "live_share_links",
    "load_chart_doc",
    "load_gantt_index",
    "load_result",
    "placements_csv",
    "preview",
    "queue_positions",
    "recover_runs",
    "repetition_bands",
    "rerun",
    "result_bytes",
    "result_chunks",
    "revoke",
    "same_variants",
    "share",
    "share_url",
    "status",
    "stored_name",
    "user_for_token",
    "visible_experiments",
    "waiting_long",
]
