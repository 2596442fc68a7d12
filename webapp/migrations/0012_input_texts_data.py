"""Every experiment's input texts moved into ``InputText`` rows, one per distinct text (by SHA-256),
and referenced; back again on reversal. Experiments are read a few at a time (a trace may be tens
of megabytes)."""

import hashlib
from typing import Any

from django.db import migrations

KINDS = ("cluster", "trace", "history")
BATCH = 20


def to_inputs(apps: Any, schema_editor: Any) -> None:
    Experiment = apps.get_model("webapp", "Experiment")
    InputText = apps.get_model("webapp", "InputText")
    pks = list(Experiment.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        for exp in Experiment.objects.filter(pk__in=pks[start : start + BATCH]):
            for kind in KINDS:
                text = getattr(exp, f"{kind}_text")
                if kind == "history" and not text:
                    continue
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                if not InputText.objects.filter(pk=digest).exists():
                    InputText.objects.create(digest=digest, text=text, size=len(text.encode("utf-8")))
                setattr(exp, f"{kind}_input_id", digest)
            exp.save(update_fields=[f"{kind}_input" for kind in KINDS])


def to_texts(apps: Any, schema_editor: Any) -> None:
    Experiment = apps.get_model("webapp", "Experiment")
    InputText = apps.get_model("webapp", "InputText")
    pks = list(Experiment.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        for exp in Experiment.objects.filter(pk__in=pks[start : start + BATCH]):
            for kind in KINDS:
                digest = getattr(exp, f"{kind}_input_id")
                setattr(exp, f"{kind}_text", InputText.objects.get(pk=digest).text if digest else "")
            exp.save(update_fields=[f"{kind}_text" for kind in KINDS])


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0011_input_texts"),
    ]

    operations = [migrations.RunPython(to_inputs, to_texts)]
