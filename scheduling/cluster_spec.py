"""The cluster spec (JSON; docs/formats.md, "Cluster spec"): ``load_cluster``, ``parse_cluster`` and
``cluster_from_dict``. Bandwidths are converted here, once: Gbps -> MB per slot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from scheduling import failures, gpu_types, restart_costs, status_replay
from scheduling.bounds import MAX_SERVERS
from scheduling.errors import InputError
from scheduling.model import (
    Cluster,
    Failure,
    InstanceType,
    Resource,
    Server,
    frozen_amounts,
    gbps_to_mb_per_slot,
)
from scheduling.schema import (
    CLUSTER,
    CLUSTER_FIELDS,
    REQUIRED_CLUSTER_FIELDS,
    SERVER,
    SERVER_FIELDS,
    TYPE,
    TYPE_FIELDS,
    Field,
)
from scheduling.values import (
    amounts,
    check_strings,
    first_duplicate,
    number,
    parse_json,
    read_text,
    reader_of,
    text,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


_PLAIN_KINDS = frozenset({"integer", "number", "choice", "id", "flag"})
_CLUSTER_READ = {f.name: reader_of(f) for f in CLUSTER_FIELDS if f.kind in _PLAIN_KINDS}
_SERVER_READ = {f.name: reader_of(f) for f in SERVER_FIELDS if f.kind in _PLAIN_KINDS}
_TYPE_READ = {f.name: reader_of(f) for f in TYPE_FIELDS if f.kind in _PLAIN_KINDS}
"""The readers of the spec's fields that are read by their bounds or choices (scheduling.schema)."""


def load_cluster(path: Path | str, name: str | None = None) -> Cluster:
    label = name or str(path)
    return parse_cluster(read_text(path, label), label)


def parse_cluster(content: str, label: str = "cluster.json") -> Cluster:
    doc = parse_json(content, label)
    try:
        check_strings(doc)
        return cluster_from_dict(doc)
    except InputError as exc:
        raise exc.located(label) from None


def cluster_from_dict(doc: Any) -> Cluster:
    if not isinstance(doc, Mapping):
        raise InputError("expected a JSON object with slot_seconds, resources and servers")
    for key in REQUIRED_CLUSTER_FIELDS:
        if key not in doc:
            raise InputError("missing", field=key)
    slot = _CLUSTER_READ["slot_seconds"](doc["slot_seconds"], "slot_seconds")
    resources = _resources(doc["resources"])
    names = {r.name for r in resources}
    servers = _servers(doc["servers"], names, slot)
    worker_types = _types(_given(doc, CLUSTER["worker_types"]), "worker_types", names, slot)
    ps_types = _types(_given(doc, CLUSTER["ps_types"]), "ps_types", names, slot)
    horizon = doc.get("horizon")
    network = _given(doc, CLUSTER["network"])
    if not isinstance(network, Mapping):
        raise InputError("expected an object", field="network")
    if "spread_slowdown" in network:  # speed.SPREAD_SLOWDOWN: a fraction of speed per extra server
        number(network["spread_slowdown"], "network.spread_slowdown", minimum=0, maximum=100)
    return Cluster(
        slot_seconds=slot,
        resources=resources,
        servers=servers,
        worker_types=worker_types,
        ps_types=ps_types,
        horizon=None if horizon is None else _CLUSTER_READ["horizon"](horizon, "horizon"),
        network=frozen_amounts({str(k): number(v, f"network.{k}", minimum=None) for k, v in network.items()}),
        restart_seconds=_CLUSTER_READ["restart_seconds"](_given(doc, CLUSTER["restart_seconds"]), "restart_seconds"),
        restart_costs=restart_costs.parse_table(doc["restart_costs"]) if "restart_costs" in doc else (),
        checkpoint_gbps=_CLUSTER_READ["checkpoint_gbps"](_given(doc, CLUSTER["checkpoint_gbps"]), "checkpoint_gbps"),
        gpu_speeds=gpu_types.parse_table(doc["gpu_speeds"]) if "gpu_speeds" in doc else MappingProxyType({}),
        failures=_failures(doc, servers, slot),
        checkpoint_slots=failures.checkpoint_slots(
            _CLUSTER_READ["checkpoint_seconds"](_given(doc, CLUSTER["checkpoint_seconds"]), "checkpoint_seconds"), slot
        ),
        replay_status=status_replay.flag(doc),
    )


def _given(doc: Mapping[str, Any], field: Field) -> Any:
    """The value of ``field`` in ``doc``, or the field's fallback when it is left out."""
    return doc.get(field.name, field.fallback)


def _failures(doc: Mapping[str, Any], servers: tuple[Server, ...], slot: float) -> tuple[Failure, ...]:
    """The failure trace and the failures its ``failure_model`` draws (scheduling.failures)."""
    if "failures" not in doc and "failure_model" not in doc:
        return ()
    given = failures.parse_table(doc["failures"], (s.id for s in servers)) if "failures" in doc else []
    drawn = failures.generate(doc["failure_model"], servers, slot) if "failure_model" in doc else []
    return failures.checked(given + drawn)


def _resources(value: Any) -> tuple[Resource, ...]:
    if isinstance(value, Mapping):
        items = [Resource(text(k, "resources"), str(v or "")) for k, v in value.items()]
    elif isinstance(value, list):
        items = []
        for i, r in enumerate(value):
            if isinstance(r, str):
                items.append(Resource(text(r, f"resources[{i}]")))
            elif isinstance(r, Mapping):
                items.append(Resource(text(r.get("name"), f"resources[{i}].name"), str(r.get("unit", ""))))
            else:
                raise InputError("expected a name or {name, unit}", field=f"resources[{i}]")
    else:
        raise InputError("expected a list of resources", field="resources")
    if not items:
        raise InputError("at least one resource is needed", field="resources")
    if (dup := first_duplicate(r.name for r in items)) is not None:
        raise InputError(f"duplicate resource {dup!r}", field="resources")
    return tuple(items)


def _servers(value: Any, resources: set[str], slot: float) -> tuple[Server, ...]:
    if not isinstance(value, list) or not value:
        raise InputError("expected a non-empty list of servers", field="servers")
    out: list[Server] = []
    total = 0
    for i, s in enumerate(value):
        f = f"servers[{i}]"
        if not isinstance(s, Mapping):
            raise InputError("expected an object", field=f)
        sid = _SERVER_READ["id"](s.get("id"), f"{f}.id")
        if "capacity" not in s:
            raise InputError("missing capacity", field=f"{f}.capacity")
        capacity = amounts(s["capacity"], f"{f}.capacity", resources)
        unlimited = _SERVER_READ["unlimited"](_given(s, SERVER["unlimited"]), f"{f}.unlimited")
        if not capacity and not unlimited:
            raise InputError("capacity is empty", field=f"{f}.capacity")
        count = _SERVER_READ["count"](_given(s, SERVER["count"]), f"{f}.count")
        total += count
        if total > MAX_SERVERS:
            raise InputError(f"{total:,} servers so far, more than the {MAX_SERVERS:,} accepted", field=f"{f}.count")
        nic = s.get("nic_bw_gbps")
        storage = s.get("storage_gb")
        intra = s.get("intra_bw_gbps")
        # read once for the ``count`` servers of the entry (in the order the fields were always read)
        pool = _SERVER_READ["pool"](_given(s, SERVER["pool"]), f"{f}.pool")
        site = _SERVER_READ["site"](_given(s, SERVER["site"]), f"{f}.site")
        delay = _SERVER_READ["upload_delay"](_given(s, SERVER["upload_delay"]), f"{f}.upload_delay")
        intra_bw = None if intra is None else _gbps(_SERVER_READ["intra_bw_gbps"], intra, f"{f}.intra_bw_gbps", slot)
        nic_bw = None if nic is None else _gbps(_SERVER_READ["nic_bw_gbps"], nic, f"{f}.nic_bw_gbps", slot)
        gpu_model = None if s.get("gpu_model") is None else str(s["gpu_model"])
        storage_gb = None if storage is None else _SERVER_READ["storage_gb"](storage, f"{f}.storage_gb")
        for k in range(count):
            out.append(
                Server(
                    id=sid if count == 1 else f"{sid}-{k}",
                    capacity=frozen_amounts(capacity),
                    pool=pool,
                    site=site,
                    unlimited=unlimited,
                    upload_delay=delay,
                    intra_bw=intra_bw,
                    nic_bw=nic_bw,
                    gpu_model=gpu_model,
                    storage_gb=storage_gb,
                )
            )
    if (dup := first_duplicate(s.id for s in out)) is not None:
        raise InputError(f"duplicate server id {dup!r} (after expanding count)", field="servers")
    return tuple(out)


def _types(value: Any, field: str, resources: set[str], slot: float) -> tuple[InstanceType, ...]:
    if not isinstance(value, list):
        raise InputError("expected a list", field=field)
    out = []
    for i, t in enumerate(value):
        f = f"{field}[{i}]"
        if not isinstance(t, Mapping):
            raise InputError("expected an object", field=f)
        demand = amounts(_given(t, TYPE["demand"]), f"{f}.demand", resources)
        gbps = t.get("bandwidth_gbps", demand.get("bw", 0.0))
        out.append(
            InstanceType(
                id=_TYPE_READ["id"](t.get("id"), f"{f}.id"),
                demand=frozen_amounts(demand),
                bandwidth=_gbps(_TYPE_READ["bandwidth_gbps"], gbps, f"{f}.bandwidth_gbps", slot),
            )
        )
    if (dup := first_duplicate(t.id for t in out)) is not None:
        raise InputError(f"duplicate type id {dup!r}", field=field)
    return tuple(out)


def _gbps(read: Callable[..., Any], value: Any, where: str, slot: float) -> float:
    """A bandwidth in Gbps, as MB per slot."""
    return float(gbps_to_mb_per_slot(read(value, where), slot))
