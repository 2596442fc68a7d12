"""Every experiment's input texts and every dataset's text moved into ``InputText`` rows, one per
distinct text (by SHA-256), and referenced; back again on reversal. Rows are read a few at a time
(a trace may be tens of megabytes)."""

import hashlib
from typing import Any

from django.db import migrations

KINDS = ("cluster", "trace", "history")
BATCH = 20


def intern(InputText: Any, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if not InputText.objects.filter(pk=digest).exists():
        InputText.objects.create(digest=digest, text=text, size=len(text.encode("utf-8")))
    return digest


def batches(model: Any) -> Any:
    pks = list(model.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        yield from model.objects.filter(pk__in=pks[start : start + BATCH])


def to_inputs(apps: Any, schema_editor: Any) -> None:
    InputText = apps.get_model("webapp", "InputText")
    for exp in batches(apps.get_model("webapp", "Experiment")):
        for kind in KINDS:
            text = getattr(exp, f"{kind}_text")
            setattr(exp, f"{kind}_input_id", intern(InputText, text) if text or kind != "history" else None)
        exp.save(update_fields=[f"{kind}_input" for kind in KINDS])
    for ds in batches(apps.get_model("webapp", "Dataset")):
        ds.input_id = intern(InputText, ds.text)
        ds.save(update_fields=["input"])


def to_texts(apps: Any, schema_editor: Any) -> None:
    InputText = apps.get_model("webapp", "InputText")
    for exp in batches(apps.get_model("webapp", "Experiment")):
        for kind in KINDS:
            digest = getattr(exp, f"{kind}_input_id")
            setattr(exp, f"{kind}_text", InputText.objects.get(pk=digest).text if digest else "")
        exp.save(update_fields=[f"{kind}_text" for kind in KINDS])
    for ds in batches(apps.get_model("webapp", "Dataset")):
        ds.text = InputText.objects.get(pk=ds.input_id).text
        ds.save(update_fields=["text"])


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0011_input_texts"),
    ]

    operations = [migrations.RunPython(to_inputs, to_texts)]
