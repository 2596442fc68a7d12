"""Chart pages load the partial plotly.js bundle (cartesian trace types only) once it is vendored;
pages without charts load no plotly.js."""

import pytest
from django.core.management import call_command

from webapp.management.commands import vendor_plotly

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]


@pytest.fixture
def client(auth_client):
    return auth_client


@pytest.fixture
def partial_bundle():
    call_command("vendor_plotly", verbosity=0)
    if not vendor_plotly.partial_target().exists():
        pytest.skip("npm could not fetch the partial bundle here")
    return vendor_plotly.partial_target()


def test_the_partial_bundle_is_the_full_bundles_version_and_holds_every_trace_type_drawn(partial_bundle):
    full = vendor_plotly.plotly_js_target()
    assert vendor_plotly.bundle_version(partial_bundle) == vendor_plotly.bundle_version(full)
    text = partial_bundle.read_text(encoding="utf-8")
    for kind in ("bar", "box", "heatmap", "histogram", "scatter"):
        assert f'moduleType:"trace",name:"{kind}"' in text
    assert partial_bundle.stat().st_size < full.stat().st_size / 2


def test_chart_pages_load_the_partial_bundle_and_table_pages_none(client, done_experiment, partial_bundle):
    page = client.get(done_experiment.get_absolute_url() + "?tab=jct").content.decode()
    assert "vendor/plotly-cartesian.min.js" in page and "vendor/plotly.min.js" not in page
    page = client.get(done_experiment.get_absolute_url() + "?tab=inputs").content.decode()
    assert "plotly" not in page
