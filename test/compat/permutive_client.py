"""Runs the PermutiveAPI Python client's 16 calls (and its segmentation call) against a running audience server.

Not part of `npm test`: the client is not on npm and CI has no PyPI. Run it by hand with a checkout (or a pip
install) of the client (https://github.com/fatmambot33/PermutiveAPI, checked with 6.7.0):

    PYTHONPATH=/path/to/PermutiveAPI/src python3 test/compat/permutive_client.py URL PRIVATE_KEY

The client has Permutive's hosts written in; this script sends its requests to URL instead (the path, query and
body stay exactly as the client builds them). It exits 0 only when every call answers as the client expects.
"""

from __future__ import annotations

import sys
import traceback
import uuid
from urllib.parse import urlsplit, urlunsplit

import requests

BASE = sys.argv[1].rstrip("/")
KEY = sys.argv[2]
_target = urlsplit(BASE)
_original_request = requests.Session.request


def _to_local(self, method, url, *args, **kwargs):
    parts = urlsplit(url)
    if parts.hostname and parts.hostname.startswith("api.permutive."):
        url = urlunsplit((_target.scheme, _target.netloc, parts.path, parts.query, parts.fragment))
    return _original_request(self, method, url, *args, **kwargs)


requests.Session.request = _to_local

from PermutiveAPI import Alias, Cohort, Identity, Import, Segment  # noqa: E402
from PermutiveAPI.segmentation import Event, Segmentation  # noqa: E402
from PermutiveAPI.utils.http import post  # noqa: E402

results: list[tuple[str, bool, str]] = []


def call(name, fn):
    try:
        detail = fn()
        results.append((name, True, "" if detail is None else str(detail)))
    except Exception as error:  # noqa: BLE001: every failure is reported, then the run fails
        results.append((name, False, f"{type(error).__name__}: {error}"))
        traceback.print_exc()


suffix = uuid.uuid4().hex[:8]

# Cohorts (7 calls)
cohort = Cohort(name=f"compat {suffix}", query={"type": "and", "queries": []}, tags=["compat"])
cohort.query = {"event": "Pageview", "frequency": {"greater_than_or_equal_to": 1}}


def create_cohort():
    cohort.create(KEY)
    assert cohort.id and cohort.code, cohort
    return cohort.id


call("Cohort.create", create_cohort)
call("Cohort.get_by_id", lambda: Cohort.get_by_id(cohort.id, KEY).name)
call("Cohort.list", lambda: len(Cohort.list(KEY)))
call("Cohort.get_by_name", lambda: Cohort.get_by_name(cohort.name, KEY).id)
call("Cohort.get_by_code", lambda: Cohort.get_by_code(cohort.code, KEY).id)


def update_cohort():
    cohort.description = "updated by the Python client"
    cohort.update(KEY)
    assert Cohort.get_by_id(cohort.id, KEY).description == cohort.description


call("Cohort.update", update_cohort)

# Imports (2 calls): one made through the API first (the client itself cannot create imports).
created = post(KEY, f"{BASE}/audience-api/v1/imports", {"name": f"compat {suffix}", "code": f"c{suffix}",
                                                        "relation": "2nd", "kind": "segments", "identifiers": ["email"]})
import_id = created.json()["id"]
call("Import.list", lambda: [i.id for i in Import.list(KEY)].index(import_id))
call("Import.get_by_id", lambda: Import.get_by_id(import_id, KEY).source.type)

# Segments (6 calls)
segment = Segment(code=f"s{suffix}", name="compat segment", import_id=import_id, description="first")


def create_segment():
    segment.create(KEY)
    assert segment.id, segment
    return segment.id


call("Segment.create", create_segment)
call("Segment.get_by_id", lambda: Segment.get_by_id(import_id, segment.id, KEY).name)
call("Segment.get_by_code", lambda: Segment.get_by_code(import_id, segment.code, KEY).id)
call("Segment.list", lambda: [s.id for s in Segment.list(import_id, KEY)].index(segment.id))


def update_segment():
    segment.name = "compat segment, renamed"
    segment.update(KEY)
    assert Segment.get_by_id(import_id, segment.id, KEY).name == segment.name


call("Segment.update", update_segment)
call("Segment.delete", lambda: segment.delete(KEY))

# Identity (1 call)
user_id = requests.post(f"{BASE}/v2.0/users", params={"k": KEY}).json()["id"]
call("Identity.send", lambda: Identity(user_id=user_id,
                                       aliases=[Alias(id=f"{suffix}@example.com", tag="email", priority=0)]).send(KEY))

# Segmentation (beyond the 16: the client's stateful segmentation call, D24's route)
call("Segmentation.send", lambda: Segmentation(
    user_id=user_id, events=[Event(name="Pageview", time="2026-11-25T00:00:00Z", properties={})]).send(KEY))

# The cohort is deleted last.
call("Cohort.delete", lambda: cohort.delete(KEY))

for name, ok, detail in results:
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
passed = sum(1 for _, ok, _ in results if ok)
print(f"{passed} of {len(results)} calls passed")
sys.exit(0 if passed == len(results) else 1)
