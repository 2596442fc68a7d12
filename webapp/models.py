"""Experiments (one cluster + one trace) and their runs (one algorithm with its parameters each).

Inputs are stored as text once they have fully validated, each file once (``InputText``, keyed by
its SHA-256) however many experiments use it. A run's result document is stored as a
gzip-compressed JSON file referenced from the row (DESIGN section 8: large payloads live in files);
its metrics are copied into the row so that tables never open the file.

Ownership: datasets, experiments and API tokens belong to a user. Experiments without an owner
(the examples ``load_examples`` creates, and rows from before accounts existed) are visible,
read-only, to every signed-in user.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.urls import reverse


def new_token() -> str:
    """An unguessable token (192 random bits, URL-safe): share links and API keys."""
    return secrets.token_urlsafe(24)


class Dataset(models.Model):
    """An uploaded (or imported) cluster spec or trace in a user's library."""

    # Not stored: set on the rows of datasets.mine() for the library page.
    state: str  # "" (usable), "importing" or "failed"
    error: str  # the failed background check's message

    class Kind(models.TextChoices):
        CLUSTER = "cluster", "cluster spec"
        TRACE = "trace", "trace"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="datasets")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=255)  # the file name; for traces its extension selects CSV or JSON
    # The file, stored once by its digest (``text`` reads and sets it as text).
    input = models.ForeignKey("InputText", on_delete=models.PROTECT, related_name="datasets")
    size = models.PositiveBigIntegerField(default=0)  # bytes
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def get_absolute_url(self) -> str:
        return reverse("dataset", args=[self.pk])

    # As Experiment's input texts: set (also as a constructor keyword) until ``save`` stores it.

    @property
    def text(self) -> str:
        pending: str | None = self.__dict__.get("_pending_text")
        if pending is not None:
            return pending
        return self.input.text if self.input_id is not None else ""

    @text.setter
    def text(self, value: str) -> None:
        self.__dict__["_pending_text"] = value

    def save(self, *args: Any, **kwargs: Any) -> None:
        pending = self.__dict__.pop("_pending_text", None)
        if pending is not None or self.input_id is None:
            self.input = InputText.intern(pending or "")
        super().save(*args, **kwargs)


class TraceCheck(models.Model):
    """A trace validated against a cluster spec by a background task, with the summary the dataset
    page and the experiment form read instead of loading the trace again (``workers.checks``)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    trace = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="checks")
    cluster = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=100, blank=True)  # what the task is doing, shown beside the bar
    progress = models.FloatField(default=0.0)  # 0..1
    error = models.TextField(blank=True)  # the InputError (file, line, job, field) when it failed
    error_line = models.PositiveIntegerField(null=True, blank=True)  # the trace line at fault
    summary = models.JSONField(null=True, blank=True)  # workers.checks.summarize, when done
    # A large raw GPU-job trace the task imports first (media storage path, deleted once imported),
    # with the import's options (importers.run keyword arguments: the CLI's flags).
    raw = models.CharField(max_length=255, blank=True)
    import_options = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created", "-id")
        constraints = (models.UniqueConstraint(fields=("trace", "cluster"), name="one_check_per_pair"),)

    def __str__(self) -> str:
        return f"check of {self.trace_id} against {self.cluster_id} ({self.status})"


class Experiment(models.Model):
    class Source(models.TextChoices):
        UPLOAD = "upload", "uploaded files"
        PRESET = "preset", "preset"
        LIBRARY = "library", "datasets from the library"

    class Kind(models.TextChoices):
        COMPARISON = "comparison", "comparison"
        SWEEP = "sweep", "sweep"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="experiments", null=True, blank=True
    )
    name = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.COMPARISON)
    sweep = models.JSONField(default=dict, blank=True)  # {"param": name, "values": [...]} for a sweep
    # Repetitions (webapp/repetitions.py): {"over": "seeds", "seeds": [...]} or {"over": "windows",
    # "windows": [[first arrival slot, end slot), ...], "cut": "even" | "chosen"}; {}: none.
    repetition = models.JSONField(default=dict, blank=True)
    preset = models.CharField(max_length=100, blank=True)  # preset name when source is "preset"
    preset_options = models.JSONField(default=dict, blank=True)  # {"jobs", "seed", "size"} given to the preset
    # The frozen input files, each an InputText stored once by its digest (``cluster_text``,
    # ``trace_text`` and ``history_text`` below read and set them as text).
    cluster_name = models.CharField(max_length=255, default="cluster.json")
    cluster_input = models.ForeignKey("InputText", on_delete=models.PROTECT, related_name="cluster_of")  # JSON
    trace_name = models.CharField(max_length=255)  # its extension selects CSV or JSON
    trace_input = models.ForeignKey("InputText", on_delete=models.PROTECT, related_name="trace_of")
    # A separate trace of past jobs for the algorithms that learn from one (AlgorithmSpec.history;
    # simulate --history): uploaded or from the library with the trace; blank: none (a preset
    # experiment gives those algorithms the preset's own history instead, repetitions.preset_history).
    history_name = models.CharField(max_length=255, blank=True)
    history_input = models.ForeignKey(
        "InputText", on_delete=models.PROTECT, related_name="history_of", null=True, blank=True
    )
    seed = models.PositiveBigIntegerField(default=0)  # frozen with the inputs: a rerun reproduces the runs
    # Set while runs wait for the broker (it was unreachable at submission); cleared once all are sent.
    pending_dispatch = models.BooleanField(default=False)
    # A trace too large to check in the web request is checked by a worker first (TraceCheck of the
    # uploaded files, added to the owner's datasets): the runs are sent once it passes, failed with
    # its error if it does not (webapp/inputchecks.py). None: nothing to wait for.
    input_check = models.ForeignKey(
        "TraceCheck", on_delete=models.SET_NULL, null=True, blank=True, related_name="waiting_experiments"
    )

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("experiment", args=[self.pk])

    # The input files as text. Setting one (also as a keyword of the constructor or of
    # ``objects.create``) keeps the text until ``save``, which stores it as an InputText, once per
    # digest; reading one loads its InputText row (listing pages never do).

    @property
    def cluster_text(self) -> str:
        return self._input_text("cluster")

    @cluster_text.setter
    def cluster_text(self, text: str) -> None:
        self._new_inputs()["cluster"] = text

    @property
    def trace_text(self) -> str:
        return self._input_text("trace")

    @trace_text.setter
    def trace_text(self, text: str) -> None:
        self._new_inputs()["trace"] = text

    @property
    def history_text(self) -> str:
        return self._input_text("history")

    @history_text.setter
    def history_text(self, text: str) -> None:
        self._new_inputs()["history"] = text

    def _new_inputs(self) -> dict[str, str]:
        """The input texts set since the last save, by kind."""
        pending: dict[str, str] | None = self.__dict__.get("_pending_inputs")
        if pending is None:
            pending = self.__dict__["_pending_inputs"] = {}
        return pending

    def _input_text(self, kind: str) -> str:
        pending = self.__dict__.get("_pending_inputs") or {}
        if kind in pending:
            return str(pending[kind])
        if getattr(self, f"{kind}_input_id") is None:
            return ""
        row: InputText = getattr(self, f"{kind}_input")
        return row.text

    def save(self, *args: Any, **kwargs: Any) -> None:
        pending = self._new_inputs()
        for kind in ("cluster", "trace"):  # required: an experiment without one has the empty file
            if getattr(self, f"{kind}_input_id") is None and kind not in pending:
                pending[kind] = ""
        for kind, text in pending.items():
            setattr(self, f"{kind}_input", InputText.intern(text) if text or kind != "history" else None)
        pending.clear()
        super().save(*args, **kwargs)

    def input_digests(self) -> list[str]:
        """The digests of the input files it references."""
        return [d for d in (self.cluster_input_id, self.trace_input_id, self.history_input_id) if d]


def text_digest(text: str) -> str:
    """SHA-256 (hex) of ``text`` encoded as UTF-8: an input file's key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class InputText(models.Model):
    """An input file of experiments and datasets (cluster spec, trace or history, as uploaded or
    generated), stored once however many of them use it: its key is the SHA-256 of the text. Rows
    are shared across owners and never changed; deleting an experiment or a dataset deletes those
    nothing references any more (``delete_unused``)."""

    digest = models.CharField(max_length=64, primary_key=True)  # text_digest(text)
    text = models.TextField()
    size = models.PositiveBigIntegerField()  # bytes, UTF-8
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"input {self.digest[:12]} ({self.size} bytes)"

    @classmethod
    def intern(cls, text: str) -> InputText:
        """The row holding ``text``, stored now if no row holds it yet. The row stays locked until
        the caller's transaction ends, so that ``delete_unused`` cannot delete it before the
        experiment referencing it is committed; two processes storing the same text at once store
        it once (the second finds the first's row)."""
        digest = text_digest(text)
        with transaction.atomic():
            row = cls.objects.select_for_update().only("digest", "size").filter(pk=digest).first()
            if row is not None:
                return row
            try:
                with transaction.atomic():
                    return cls.objects.create(digest=digest, text=text, size=len(text.encode("utf-8")))
            except IntegrityError:  # stored meanwhile by another process
                found: InputText = cls.objects.select_for_update().only("digest", "size").get(pk=digest)
                return found

    @classmethod
    def delete_unused(cls, digests: Iterable[str]) -> int:
        """Delete those of ``digests`` no experiment or dataset references; the number deleted. Each
        row is locked before the references are counted: one an experiment or dataset being created
        holds (``intern``) is counted after it is committed, and kept."""
        deleted = 0
        for digest in sorted(set(digests)):
            with transaction.atomic():
                if not list(cls.objects.select_for_update().filter(pk=digest).values_list("pk", flat=True)):
                    continue
                used = Experiment.objects.filter(
                    models.Q(cluster_input=digest) | models.Q(trace_input=digest) | models.Q(history_input=digest)
                )
                if not used.exists() and not Dataset.objects.filter(input=digest).exists():
                    deleted += cls.objects.filter(pk=digest).delete()[0]
        return deleted


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="runs")
    algorithm = models.CharField(max_length=100)
    params = models.JSONField(default=dict, blank=True)  # parsed values, by parameter name
    seed = models.PositiveBigIntegerField(default=0)
    # The repetition the run belongs to (index into the experiment's seeds or windows); None: none.
    repetition = models.PositiveIntegerField(null=True, blank=True)
    trace_seed = models.PositiveBigIntegerField(null=True, blank=True)  # a preset's trace seed for this run
    window = models.JSONField(null=True, blank=True)  # [start, end) arrival slots of the trace this run sees
    code = models.JSONField(null=True, blank=True)  # the result's "code": package version and commit that made it
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)  # the message shown when the run failed
    metrics = models.JSONField(null=True, blank=True)  # the result's "metrics" object
    result = models.FileField(upload_to="results/", blank=True)  # gzip JSON result document
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Execution bookkeeping (docs/architecture.md, "A run's life").
    dispatched = models.BooleanField(default=True)  # a message for it reached the broker
    dispatched_at = models.DateTimeField(null=True, blank=True)  # when a message for it last reached the broker
    attempts = models.PositiveIntegerField(default=0)  # claims so far (a lost run is re-queued once)
    heartbeat = models.DateTimeField(null=True, blank=True)  # last sign of life of the worker running it
    progress = models.FloatField(default=0.0)  # (jobs arrived + jobs ended) / (2 x jobs), 0..1
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        ordering = ("id",)
        indexes = (models.Index(fields=("status", "started"), name="run_status_started"),)  # lost-run sweep

    def __str__(self) -> str:
        return f"{self.algorithm} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ShareLink(models.Model):
    """A read-only link to an experiment: an unguessable token, revocable, opening without login."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="share_links")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    created = models.DateTimeField(auto_now_add=True)
    revoked = models.DateTimeField(null=True, blank=True)
    expires = models.DateTimeField(null=True, blank=True)  # the link stops opening then (None: never)

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return f"share link of {self.experiment_id}"


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    """A key for the JSON API (``Authorization: Token <key>``); a user may hold several. Only the
    key's SHA-256 is stored: the key itself is shown once, when it is issued."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key = models.CharField(max_length=64, unique=True)  # SHA-256 (hex) of the key
    name = models.CharField(max_length=100, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return f"API token {self.name or self.pk} of {self.user_id}"

    @classmethod
    def issue(cls, user: object, name: str = "") -> tuple[ApiToken, str]:
        """A new token and its key (the only time the key is known)."""
        key = new_token()
        return cls.objects.create(user=user, name=name, key=key_digest(key)), key


class StoredFile(models.Model):
    """A file of the database storage (``webapp.dbstorage.DatabaseStorage``, the default): results,
    chart indexes, drafts, raw uploads and reproductions, readable from every host that reaches the
    database. Its bytes are ``StoredChunk`` rows of at most ``chunk_size`` bytes each, so that a large
    result is neither one giant row nor read whole to be streamed."""

    name = models.CharField(max_length=255, unique=True)  # the storage name, e.g. "results/3/run-7.json.gz"
    size = models.PositiveBigIntegerField(default=0)  # bytes
    chunk_size = models.PositiveIntegerField()  # bytes of every chunk but the last
    modified = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class StoredChunk(models.Model):
    file = models.ForeignKey(StoredFile, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()  # 0, 1, ...: the chunk's place in the file
    data = models.BinaryField()

    class Meta:
        constraints = (models.UniqueConstraint(fields=("file", "index"), name="one_chunk_per_place"),)

    def __str__(self) -> str:
        return f"chunk {self.index} of {self.file_id}"


class ReproductionStart(models.Model):
    """A reproduction started from the page: the hourly quota counts them (a figure's stored files
    are replaced by its next run, so they cannot)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    figure = models.CharField(max_length=100)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = (models.Index(fields=("owner", "at"), name="reproduction_start_owner_at"),)

    def __str__(self) -> str:
        return f"{self.figure} started by {self.owner_id}"


class WorkerProblem(models.Model):
    """A worker that stopped taking runs because it cannot store results (disk full, read-only or
    refused storage): written by the worker (``workers.tasks``), shown on ``/healthz`` and in the
    admin. Deleting the row (once the worker's storage is mended and the worker restarted) clears it."""

    worker = models.CharField(max_length=255, unique=True)  # the Celery node name, e.g. celery@host
    problem = models.TextField()
    since = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-since",)

    def __str__(self) -> str:
        return f"{self.worker}: {self.problem}"
