"""Experiments (one cluster + one trace) and their runs (one algorithm with its parameters each).

Inputs are stored as text once they have fully validated. A run's result document is stored as a
gzip-compressed JSON file referenced from the row (DESIGN section 8: large payloads live in files);
its metrics are copied into the row so that tables never open the file.
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse


class Experiment(models.Model):
    class Source(models.TextChoices):
        UPLOAD = "upload", "uploaded files"
        PRESET = "preset", "preset"

    name = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    preset = models.CharField(max_length=100, blank=True)  # preset name when source is "preset"
    preset_options = models.JSONField(default=dict, blank=True)  # {"jobs", "seed", "size"} given to the preset
    cluster_name = models.CharField(max_length=255, default="cluster.json")
    cluster_text = models.TextField()  # cluster spec, JSON
    trace_name = models.CharField(max_length=255)  # its extension selects CSV or JSON
    trace_text = models.TextField()

    class Meta:
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("experiment", args=[self.pk])


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    FINISHED = (Status.DONE, Status.FAILED)

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="runs")
    algorithm = models.CharField(max_length=100)
    params = models.JSONField(default=dict, blank=True)  # parsed values, by parameter name
    seed = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)  # the message shown when the run failed
    metrics = models.JSONField(null=True, blank=True)  # the result's "metrics" object
    result = models.FileField(upload_to="results/", blank=True)  # gzip JSON result document
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        indexes = (models.Index(fields=("status", "started"), name="run_status_started"),)  # lost-run sweep

    def __str__(self) -> str:
        return f"{self.algorithm} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED
