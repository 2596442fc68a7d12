"""An experiment's cluster spec and trace, and a dataset's file, are required references to
``InputText``; the text columns the rows held are dropped (0012 moved them)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0012_input_texts_data"),
    ]

    operations = [
        # (A default first, so that the columns can be added back on reversal, then filled by 0012.)
        *(
            migrations.AlterField(model_name="experiment", name=name, field=models.TextField(blank=True, default=""))
            for name in ("cluster_text", "trace_text", "history_text")
        ),
        migrations.RemoveField(model_name="experiment", name="cluster_text"),
        migrations.RemoveField(model_name="experiment", name="trace_text"),
        migrations.RemoveField(model_name="experiment", name="history_text"),
        migrations.AlterField(model_name="dataset", name="text", field=models.TextField(blank=True, default="")),
        migrations.RemoveField(model_name="dataset", name="text"),
        migrations.AlterField(
            model_name="dataset",
            name="input",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="datasets", to="webapp.inputtext"
            ),
        ),
        migrations.AlterField(
            model_name="experiment",
            name="cluster_input",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="cluster_of", to="webapp.inputtext"
            ),
        ),
        migrations.AlterField(
            model_name="experiment",
            name="trace_input",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="trace_of", to="webapp.inputtext"
            ),
        ),
    ]
