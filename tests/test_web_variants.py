"""One algorithm several times with different parameters in one experiment: the form's "Also run"
lines (parsed, refused line by line, swept, through the API), the labels that tell the runs apart,
and the preset examples that include a paper's baseline variants."""

import pytest
from django.test import Client
from django.urls import reverse

from scheduling import registry
from tests.webhelpers import upload_data
from webapp.labels import run_label, run_labels
from webapp.models import ApiToken, Experiment, Run
from webapp.runspecs import MAX_RUNS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")
DRF = registry.get("drf").parse_params({})  # drf's defaults: fixed is True (the DRF of record)
TICKED = {"drf__fixed": "on"}  # drf's checkbox as the page sends it: ticked, its default


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


def post_done(client, data, capture):
    """Post the form with the runs simulated inline; the new experiment."""
    with capture(execute=True):
        response = client.post(NEW, data)
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    return Experiment.objects.get()


def refused(client, data):
    """Post the form expecting a refusal that stores nothing; the form's errors."""
    before = (Experiment.objects.count(), Run.objects.count())
    response = client.post(NEW, data)
    assert response.status_code == 200
    assert (Experiment.objects.count(), Run.objects.count()) == before
    return response.context["form"].errors


def table_labels(page):
    """The run labels of the summary table (its row headers), in order."""
    rows = page.split('<table class="table metrics sortable" id="metrics">')[1].split("</table>")[0]
    return [cell.split('data-sort="')[1].split('"')[0] for cell in rows.split('<th scope="row"')[1:]]


def test_a_line_adds_a_second_drf_run_with_its_parameters_and_the_labels_tell_them_apart(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["fifo", "drf"], extra_runs="drf fixed=false\n", **TICKED)
    exp = post_done(client, data, django_capture_on_commit_callbacks)
    runs = list(exp.runs.all())
    assert [(r.algorithm, r.params) for r in runs] == [
        ("fifo", registry.get("fifo").parse_params({})),
        ("drf", DRF),
        ("drf", {**DRF, "fixed": False}),
    ]
    assert {r.status for r in runs} == {"done"}
    page = client.get(exp.get_absolute_url()).content.decode()
    assert table_labels(page) == ["fifo", "drf", "drf fixed=false"]
    jct = client.get(exp.get_absolute_url() + "?tab=jct").content.decode()
    assert f'<option value="{runs[2].pk}">drf fixed=false</option>' in jct
    assert '"name": "drf fixed=false"' in jct  # a trace of the compare charts
    runs_table = page.split('<table class="table runs">')[1].split("</table>")[0]
    assert [c.split("</strong>")[0] for c in runs_table.split("<td><strong>")[1:]] == ["fifo", "drf", "drf fixed=false"]
    listing = client.get(reverse("home")).content.decode()
    assert [b.split(">")[1].split("<")[0] for b in listing.split('<span class="badge done"')[1:]] == [
        "fifo",
        "drf",
        "drf fixed=false",
    ]


def test_lines_alone_choose_the_runs_and_blank_lines_are_skipped(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=[], extra_runs="\n  drf  workers_max=2 \n\ndrf\n")
    exp = post_done(client, data, django_capture_on_commit_callbacks)
    assert [(r.algorithm, r.params) for r in exp.runs.all()] == [("drf", {**DRF, "workers_max": 2}), ("drf", DRF)]
    labels = [run_label(r, exp) for r in exp.runs.all()]
    assert labels == ["drf workers_max=2", "drf"]


def test_without_a_ticked_algorithm_or_a_line_the_form_asks_for_one(client, tiny_cluster, tiny_trace):
    errors = refused(client, upload_data(tiny_cluster, tiny_trace, algorithms=[], extra_runs="  \n"))
    assert errors["algorithms"] == ["Pick at least one algorithm."]


@pytest.mark.parametrize(
    "line, message",
    [
        ("drff fixed=true", "line 2: unknown algorithm 'drff' (known: fifo, srtf, tiresias, drf,"),
        (
            "drf colour=red",
            "line 2: drf colour: unknown parameter for drf (parameters: workers_min, workers_max, ps, fixed)",
        ),
        ("drf fixed=maybe", "line 2: drf fixed: 'maybe' is not a bool"),
        ("drf workers_max=0", "line 2: drf workers_max: 0 is below the minimum 1"),
        ("drf workers_max=2.5", "line 2: drf workers_max: '2.5' is not a int"),
        ("drf workers_max=inf", "line 2: drf workers_max: 'inf' is not a finite number"),
        ("drf workers_max=1e400", "line 2: drf workers_max: '1e400' is not a finite number"),
        ("drf fixed", "line 2: drf: 'fixed' is not KEY=VALUE"),
        ("drf =true", "line 2: drf: '=true' is not KEY=VALUE"),
        ("drf fixed=", "line 2: drf: 'fixed=' is not KEY=VALUE"),
        ("drf fixed=true fixed=false", "line 2: drf: fixed is given twice"),
    ],
)
def test_a_bad_line_is_refused_with_its_number_and_problem_and_nothing_is_stored(
    client, tiny_cluster, tiny_trace, line, message
):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["drf"], extra_runs=f"fifo backfill=true\n{line}\n")
    errors = refused(client, data)
    assert len(errors["extra_runs"]) == 1
    assert errors["extra_runs"][0].startswith(message)


def test_every_bad_line_is_reported(client, tiny_cluster, tiny_trace):
    data = upload_data(tiny_cluster, tiny_trace, extra_runs="nope\nfifo backfill=true\nfifo ps=x")
    errors = refused(client, data)
    assert [e.split(":")[0] for e in errors["extra_runs"]] == ["line 1", "line 3"]
    assert "line 3: fifo ps: 'x' is not a int" in errors["extra_runs"]


@pytest.mark.parametrize(
    "algorithms, lines, message",
    [
        (["drf"], "drf fixed=true", "line 1: drf with these parameters is already chosen"),
        (["drf"], "drf workers_min=1 workers_max=30", "line 1: drf with these parameters is already chosen"),
        ([], "drf fixed=true\nsrtf\ndrf fixed=yes", "line 3: drf with these parameters is already chosen"),
    ],
)
def test_a_line_repeating_a_chosen_run_is_refused(client, tiny_cluster, tiny_trace, algorithms, lines, message):
    data = upload_data(tiny_cluster, tiny_trace, algorithms=algorithms, extra_runs=lines, **TICKED)
    errors = refused(client, data)
    assert errors["extra_runs"] == [message]


def test_a_line_the_inputs_do_not_support_is_refused_on_the_lines_by_number(client, tiny_cluster, tiny_trace):
    why = registry.get("oasis").unsupported(_tiny_instance(tiny_cluster, tiny_trace))
    errors = refused(client, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"], extra_runs="oasis"))
    assert errors["extra_runs"] == [f"line 1: {why}"]
    assert "algorithms" not in errors
    lines = "fifo backfill=true\noasis\ndrf\noasis scale_moves=U"
    errors = refused(client, upload_data(tiny_cluster, tiny_trace, algorithms=["fifo"], extra_runs=lines))
    assert errors["extra_runs"] == [f"lines 2, 4: {why}"]


def _tiny_instance(cluster, trace):
    from scheduling import loaders
    from scheduling.model import Instance

    parsed = loaders.parse_cluster(cluster, "cluster.json")
    return Instance(parsed, loaders.parse_trace(trace, parsed, "trace.csv", "csv"))


def test_a_sweep_sweeps_every_line_like_a_ticked_algorithm(
    client, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks
):
    data = upload_data(
        tiny_cluster,
        tiny_trace,
        algorithms=["drf"],
        extra_runs="drf fixed=false",
        mode="sweep",
        sweep_param="workers_max",
        sweep_values="1, 2",
        **TICKED,
    )
    exp = post_done(client, data, django_capture_on_commit_callbacks)
    assert exp.sweep == {"param": "workers_max", "values": [1, 2]}
    assert [(r.params["fixed"], r.params["workers_max"]) for r in exp.runs.all()] == [
        (True, 1),
        (True, 2),
        (False, 1),
        (False, 2),
    ]
    page = client.get(exp.get_absolute_url()).content.decode()
    assert table_labels(page) == [
        "drf workers_max=1",
        "drf workers_max=2",
        "drf fixed=false workers_max=1",
        "drf fixed=false workers_max=2",
    ]
    listing = client.get(reverse("home")).content.decode()
    assert '<span class="badge done" title="done 2">drf ×2</span>' in listing
    assert '<span class="badge done" title="done 2">drf fixed=false ×2</span>' in listing
    response = client.get(exp.get_absolute_url())
    lines = {(t["name"], tuple(t["x"])) for f in response.context["figures"] for t in f["figure"]["data"]}
    assert lines == {("drf", (1, 2)), ("drf fixed=false", (1, 2))}  # one line per variant, in every chart


def test_in_a_sweep_a_line_differing_only_in_the_swept_parameter_is_a_repeat(client, tiny_cluster, tiny_trace):
    data = upload_data(
        tiny_cluster,
        tiny_trace,
        algorithms=["drf"],
        extra_runs="drf workers_max=7",
        mode="sweep",
        sweep_param="workers_max",
        sweep_values="1, 2",
        **TICKED,
    )
    errors = refused(client, data)
    assert errors["extra_runs"] == ["line 1: drf with these parameters is already chosen"]


def test_lines_count_towards_the_run_limit_of_a_sweep(client, tiny_cluster, tiny_trace):
    values = "1:41:1"  # 41 values x 3 runs = 123 > MAX_RUNS
    data = upload_data(
        tiny_cluster,
        tiny_trace,
        algorithms=["fifo", "drf"],
        extra_runs="drf fixed=true",
        mode="sweep",
        sweep_param="workers_max",
        sweep_values=values,
    )
    errors = refused(client, data)
    assert errors["__all__"] == [f"123 runs: an experiment may have at most {MAX_RUNS}"]


def test_more_lines_than_runs_allowed_are_refused_at_once(client, tiny_cluster, tiny_trace):
    lines = "\n".join(f"fifo workers_max={n}" for n in range(1, MAX_RUNS + 2))
    errors = refused(client, upload_data(tiny_cluster, tiny_trace, extra_runs=lines))
    assert errors["extra_runs"] == [f"{MAX_RUNS + 1} lines: an experiment may have at most {MAX_RUNS} runs"]


def test_the_api_creates_an_experiment_with_extra_runs(user, tiny_cluster, tiny_trace):
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    data = upload_data(tiny_cluster, tiny_trace, algorithms=["drf"], extra_runs="drf fixed=false\nfifo workers_max=4")
    response = api.post("/api/experiments/", data)
    assert response.status_code == 201, response.content
    runs = [(r["algorithm"], r["params"]) for r in response.json()["runs"]]
    assert runs == [
        ("drf", DRF),
        ("drf", {**DRF, "fixed": False}),
        ("fifo", registry.get("fifo").parse_params({"workers_max": 4})),
    ]
    bad = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, extra_runs="drf fixed=maybe"))
    assert bad.status_code == 400
    assert bad.json()["fields"] == {"extra_runs": ["line 1: drf fixed: 'maybe' is not a bool"]}
    assert Experiment.objects.count() == 1


def test_labels_name_the_parameters_that_differ_and_fall_back_to_the_id(user):
    exp = Experiment.objects.create(owner=user, name="x", cluster_text="{}", trace_text="")
    params = [
        ("drf", DRF),
        ("drf", {**DRF, "fixed": False}),
        ("drf", {**DRF, "fixed": False, "workers_max": 4}),
        ("drf", {**DRF, "fixed": False, "workers_max": 4}),  # the same again: told apart by id
        ("zhou", registry.get("zhou").parse_params({"F": "0.5"})),
        ("zhou", registry.get("zhou").parse_params({"tie": "loop"})),
        ("zhou", registry.get("zhou").parse_params({"F": "0.001"})),
        ("zhou", registry.get("zhou").parse_params({"F": "0.004"})),
        ("zhou", registry.get("zhou").parse_params({"T": "1000"})),
        ("fifo", registry.get("fifo").parse_params({"workers_max": 2})),
    ]
    runs = [Run.objects.create(experiment=exp, algorithm=a, params=p, seed=0) for a, p in params]
    exp = Experiment.objects.prefetch_related("runs").get(pk=exp.pk)
    assert [run_label(r, exp) for r in runs] == [
        "drf",
        "drf fixed=false",
        f"drf fixed=false workers_max=4 #{runs[2].pk}",
        f"drf fixed=false workers_max=4 #{runs[3].pk}",
        "zhou F=0.5",
        "zhou tie=loop",
        "zhou F=0.001",  # values as an "Also run" line writes them, not rounded for a table
        "zhou F=0.004",
        "zhou T=1000",
        "fifo",  # the only fifo run: named by its algorithm whatever its parameters
    ]


def test_the_zhou_presets_include_the_re_dividing_drf_and_other_presets_do_not():
    from webapp.management.commands.load_examples import example

    for preset in ("zhou-ps", "zhou-allreduce"):
        drf = [params for name, params in example(preset).runs if name == "drf"]
        assert drf == [DRF, {**DRF, "fixed": False}], preset
    assert [params for name, params in example("demo").runs if name == "drf"] == [DRF]


def test_the_zhou_batch_preset_runs_fig_8s_pair_at_tau_64_beside_the_defaults():
    from webapp.management.commands.load_examples import example

    runs = example("zhou-batch").runs
    maxweight = [(p["tau"], p["order"]) for name, p in runs if name == "zhou-maxweight"]
    assert maxweight == [(300, "arrival"), (64, "arrival"), (64, "weight")]
    assert [p["tau"] for name, p in runs if name == "jain-greedy"] == [300, 64]


def test_the_one_click_zhou_preset_creates_both_drf_runs(client):
    response = client.post(reverse("experiment-preset"), {"preset": "zhou-ps"})  # runs not dispatched here
    exp = Experiment.objects.get()
    assert response.url == exp.get_absolute_url()
    drf = [r for r in exp.runs.all() if r.algorithm == "drf"]
    assert [r.params["fixed"] for r in drf] == [True, False]
    assert [run_label(r, exp) for r in drf] == ["drf", "drf fixed=false"]
    assert "drf fixed=false" in client.get(NEW).content.decode()  # the one-click help names the variant


def test_the_labels_of_a_120_run_sweep_take_one_query_and_match_each_runs_label(user, django_assert_num_queries):
    exp = Experiment.objects.create(
        owner=user,
        name="x",
        cluster_text="{}",
        trace_text="",
        kind=Experiment.Kind.SWEEP,
        sweep={"param": "workers_max", "values": list(range(1, 61))},
    )
    for fixed in (True, False):
        for value in range(1, 61):
            Run.objects.create(experiment=exp, algorithm="drf", params={**DRF, "fixed": fixed, "workers_max": value})
    exp = Experiment.objects.get(pk=exp.pk)  # runs not prefetched
    with django_assert_num_queries(1):
        labels = run_labels(exp)
    runs = list(exp.runs.all())
    assert len(labels) == MAX_RUNS and [labels[r.pk] for r in runs[58:62]] == [
        "drf workers_max=59",
        "drf workers_max=60",
        "drf fixed=false workers_max=1",
        "drf fixed=false workers_max=2",
    ]
    assert labels == {r.pk: run_label(r, exp) for r in runs}


@pytest.mark.parametrize(("value", "stored"), [("on", True), ("true", True), ("no", False), ("maybe", None)])
def test_a_boolean_parameter_field_takes_the_registry_values_and_refuses_others(
    client, user, tiny_cluster, tiny_trace, django_capture_on_commit_callbacks, value, stored
):
    data = upload_data(tiny_cluster, tiny_trace, fifo__backfill=value)
    if stored is None:
        assert refused(client, data)["fifo__backfill"] == ["fifo: 'maybe' is not a bool"]
        api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
        response = api.post("/api/experiments/", upload_data(tiny_cluster, tiny_trace, fifo__backfill=value))
        assert response.status_code == 400
        assert response.json()["fields"] == {"fifo__backfill": ["fifo: 'maybe' is not a bool"]}
        return
    exp = post_done(client, data, django_capture_on_commit_callbacks)
    assert exp.runs.get().params["backfill"] is stored


def test_a_list_badge_of_several_runs_shows_the_status_that_needs_attention_and_the_counts(client, user):
    exp = Experiment.objects.create(owner=user, name="x", cluster_text="{}", trace_text="", kind="sweep")
    exp.sweep = {"param": "workers_max", "values": [1, 2, 3]}
    exp.save()
    fifo = registry.get("fifo").parse_params({})
    for value, status, error in ((1, "done", ""), (2, "failed", "boom"), (3, "running", "")):
        Run.objects.create(experiment=exp, algorithm="fifo", params={**fifo, "workers_max": value}, status=status,
                           error=error)  # fmt: skip
    listing = client.get(reverse("home")).content.decode()
    assert '<span class="badge failed" title="done 1, failed 1, running 1: boom">fifo ×3</span>' in listing
