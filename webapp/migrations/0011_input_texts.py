"""Input files stored once by digest (``InputText``), referenced from experiments and datasets: the
table and the references (filled by 0012, required and the text columns dropped by 0013)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0010_experiment_input_check"),
    ]

    operations = [
        migrations.CreateModel(
            name="InputText",
            fields=[
                ("digest", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("text", models.TextField()),
                ("size", models.PositiveBigIntegerField()),
                ("created", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.AddField(
            model_name="experiment",
            name="cluster_input",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="cluster_of",
                to="webapp.inputtext",
            ),
        ),
        migrations.AddField(
            model_name="experiment",
            name="trace_input",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="trace_of",
                to="webapp.inputtext",
            ),
        ),
        migrations.AddField(
            model_name="experiment",
            name="history_input",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="history_of",
                to="webapp.inputtext",
            ),
        ),
        migrations.AddField(
            model_name="dataset",
            name="input",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="datasets",
                to="webapp.inputtext",
            ),
        ),
    ]
