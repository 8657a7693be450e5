"""``wiki_digest`` through Dagster, and its webhook: a past day materialized from the history
(runs put on that day by the engine's clock), the sensor that follows a real ingest_job run and a
run of the UI's __ASSET_JOB (a day of two runs posting once), and delivery to a local HTTP
receiver (the expected Block Kit message, 500 then 200 retried, a receiver that stays down failing
the step with the files intact), with the planted webhook URL in no log, metadata or wiki file."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import dagster as dg
import pytest
from conftest import Workspace, summarizer_for

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.definitions import build_defs
from wiki_assets.defs.digest import DIGEST_SENSOR, DigestResource
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine import ROOT_COLLECTION, Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.digest.webhook import DeliveryFailed, post
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimServer

DAY1, DAY2 = date(2026, 11, 29), date(2026, 11, 30)
WEBHOOK_ENV = "TEST_DIGEST_WEBHOOK"
WIKI_URL = "https://wiki.example.com/team"


class Receiver:
    """A Slack-style incoming webhook on loopback: answers each POST with the next of
    ``statuses`` (the last one repeats) and keeps every body."""

    def __init__(self, statuses: list[int], headers: dict[str, str] | None = None) -> None:
        self.statuses, self.headers = statuses, headers or {}
        self.bodies: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", 0))
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                index = min(len(receiver.bodies), len(receiver.statuses)) - 1
                self.send_response(receiver.statuses[index])
                for name, value in receiver.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass  # the server's own access log would print the path (the secret)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A URL shaped like Slack's, whose path is the secret.
        self.url = (
            f"http://127.0.0.1:{self.server.server_port}/services/T0/B0/secret-{uuid.uuid4().hex}"
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def at(day: date, hour: int = 10) -> Callable[[], float]:
    moment = datetime(day.year, day.month, day.day, hour, tzinfo=UTC).timestamp()
    return lambda: moment


def ingest_on(workspace: Workspace, sim: SimServer, clock: Callable[[], float]) -> None:
    """A real ingest of the whole workspace, its history's events put on ``clock``'s day."""
    folders = sorted(p.name for p in workspace.synced.iterdir() if p.is_dir())
    collections = [ROOT_COLLECTION, *folders]  # the files at the top are a collection too
    report = ingest(
        corpus=Corpus(workspace.synced, collections), wiki_root=workspace.wiki,
        fleet=Fleet([Endpoint(name="sim", base_url=sim.base_url, model=sim.sim.model)]),
        dials=Dials(flush_seconds=0.2), clock=clock,
    )  # fmt: skip
    assert not report.failed
    index_wiki(workspace.wiki)


def materialize_day(
    workspace: Workspace, instance: dg.DagsterInstance, day: date, digest: DigestResource
) -> dg.ExecuteInProcessResult:
    defs = build_defs(workspace.corpus, digest=digest)
    job = defs.resolve_job_def("wiki_digest_job")
    return job.execute_in_process(
        instance=instance, partition_key=day.isoformat(), raise_on_error=False
    )


def digest_files(workspace: Workspace, day: date) -> tuple[str, dict[str, Any]]:
    stem = workspace.wiki / "digest" / day.isoformat()
    markdown = stem.with_suffix(".md").read_text(encoding="utf-8")
    return markdown, json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))


def materialization(instance: dg.DagsterInstance, day: date) -> dict[str, Any]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=dg.AssetKey("wiki_digest"), asset_partitions=[day.isoformat()]
        ),
        limit=1,
    ).records
    assert records, day
    event = records[0].asset_materialization
    assert event is not None
    return {key: value.value for key, value in event.metadata.items()}


@pytest.fixture
def two_days(workspace: Workspace, sim: SimServer) -> Workspace:
    """The sample corpus ingested on day 1; on day 2 one document changed, one deleted, one
    added."""
    ingest_on(workspace, sim, at(DAY1))
    changed = workspace.synced / "people" / "leave-policy.md"
    changed.write_text(
        changed.read_text(encoding="utf-8") + "\n\nParental leave is now 20 weeks.\n"
    )
    (workspace.synced / "operations" / "vendor-and-datacenter-contacts.txt").unlink()
    (workspace.synced / "product" / "pricing-faq.md").write_text(
        "# Pricing FAQ\n\n" + "Plans are billed monthly; annual plans get two months free. " * 8
    )
    ingest_on(workspace, sim, at(DAY2))
    return workspace


def test_a_past_day_is_materialized_from_the_history(
    two_days: Workspace, instance: dg.DagsterInstance
) -> None:
    workspace = two_days
    result = materialize_day(workspace, instance, DAY2, DigestResource())
    assert result.success
    _, data = digest_files(workspace, DAY2)
    assert [item["page"] for item in data["added"]] == ["product/pricing-faq.md"]
    assert [item["page"] for item in data["changed"]] == ["people/leave-policy.md"]
    assert [item["page"] for item in data["removed"]] == [
        "operations/vendor-and-datacenter-contacts.txt.md"
    ]
    metadata = materialization(instance, DAY2)
    assert {key: metadata[key] for key in data["counts"]} == data["counts"]
    assert metadata["path"] == "digest/2026-11-30.md" and metadata["delivered"] is False
    # The day before, backfilled afterwards: every page of the first ingest was added then.
    result = materialize_day(workspace, instance, DAY1, DigestResource())
    assert result.success
    _, first = digest_files(workspace, DAY1)
    # (Every document of day 1: today's but the one added on day 2, and the one deleted then.)
    assert first["counts"]["added"] == len(workspace.documents()) - 1 + 1
    assert first["changed"] == [] and first["removed"] == []


def test_the_sensor_requests_the_digest_of_the_day_an_ingest_job_run_finished(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    outcome = sync_then_ingest(
        instance, workspace.corpus, summarizer_for(sim), IngestConfig(flush_seconds=0.2)
    )
    assert outcome.success and outcome.run_id
    run = instance.get_run_by_id(outcome.run_id)
    assert run is not None and run.job_name == "ingest_job"
    defs = build_defs(workspace.corpus, summarizer_for(sim), digest=DigestResource(timezone="UTC"))
    sensor = defs.resolve_sensor_def(DIGEST_SENSOR)
    success = next(
        record.event_log_entry.dagster_event
        for record in instance.get_records_for_run(outcome.run_id).records
        if record.event_log_entry.dagster_event_type == dg.DagsterEventType.RUN_SUCCESS
    )
    context = dg.build_run_status_sensor_context(
        sensor_name=DIGEST_SENSOR, dagster_instance=instance, dagster_run=run,
        dagster_event=success,
    )  # fmt: skip
    request = sensor(context)  # type: ignore[operator]
    assert isinstance(request, dg.RunRequest)
    record = instance.get_run_record_by_id(outcome.run_id)
    assert record is not None and record.end_time is not None
    today = datetime.fromtimestamp(record.end_time, UTC).date()
    assert request.partition_key == today.isoformat()
    # While another ingest_job run is under way (a parallel run of the same tick), it waits for
    # that run's end instead.
    instance.add_run(
        dg.DagsterRun(
            job_name="ingest_job", run_id=str(uuid.uuid4()), status=dg.DagsterRunStatus.STARTED
        )
    )
    assert isinstance(sensor(context), dg.SkipReason)  # type: ignore[operator]
    # The requested partition's digest lists the pages that run wrote.
    assert materialize_day(workspace, instance, today, DigestResource()).success
    _, data = digest_files(workspace, today)
    assert data["counts"]["added"] == len(workspace.documents())


def test_a_run_of_many_days_writes_the_days_that_changed_and_posts_none(
    two_days: Workspace, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What "Materialize all" asks of the digest, every day since its start (each lies downstream
    of wiki_index): one run over the range, with a webhook set, writes the two days that saw an
    ingest and no file for the quiet days around them, and posts nothing."""
    first, last = DAY1 - timedelta(days=3), DAY2 + timedelta(days=2)
    with Receiver([200]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        defs = build_defs(two_days.corpus, digest=DigestResource(webhook_url_env=WEBHOOK_ENV))
        result = defs.resolve_job_def("wiki_digest_job").execute_in_process(
            instance=instance,
            tags={
                "dagster/asset_partition_range_start": first.isoformat(),
                "dagster/asset_partition_range_end": last.isoformat(),
            },
        )
    assert result.success and receiver.bodies == []
    written = sorted(path.name for path in (two_days.wiki / "digest").iterdir())
    assert written == [f"{day}.{kind}" for day in (DAY1, DAY2) for kind in ("json", "md")]
    _, data = digest_files(two_days, DAY2)
    assert materialization(instance, DAY2)["added"] == data["counts"]["added"] == 1
    assert materialization(instance, DAY2)["delivered"] is False
    # A day materialized alone afterwards is posted as ever.
    with Receiver([200]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        digest = DigestResource(webhook_url_env=WEBHOOK_ENV)
        assert materialize_day(two_days, instance, DAY2, digest).success
    assert len(receiver.bodies) == 1


def test_the_receiver_gets_the_day_as_block_kit_with_links(
    two_days: Workspace, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Receiver([200]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        digest = DigestResource(webhook_url_env=WEBHOOK_ENV, wiki_url=WIKI_URL)
        assert materialize_day(two_days, instance, DAY2, digest).success
    [message] = receiver.bodies
    assert message["text"].startswith("Wiki digest 2026-11-30: 1 added, 1 changed, 1 removed")
    blocks = message["blocks"]
    assert blocks[0] == {
        "type": "header", "text": {"type": "plain_text", "text": "Wiki digest 2026-11-30"}
    }  # fmt: skip
    assert blocks[1]["text"]["type"] == "mrkdwn"
    lines = blocks[2]["text"]["text"].split("\n")
    _, data = digest_files(two_days, DAY2)
    added, changed = data["added"][0], data["changed"][0]
    assert lines[0] == f"• Added: <{WIKI_URL}/product/pricing-faq.md|{added['title']}>"
    assert lines[1] == f"• Changed: <{WIKI_URL}/people/leave-policy.md|{changed['title']}>"
    assert lines[2].startswith("• Removed: ") and "<" not in lines[2]  # gone: named, not linked
    assert materialization(instance, DAY2)["delivered"] is True


def test_a_receiver_answering_500_then_200_is_retried(
    two_days: Workspace, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Receiver([500, 200]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        digest = DigestResource(webhook_url_env=WEBHOOK_ENV)
        assert materialize_day(two_days, instance, DAY2, digest).success
    assert len(receiver.bodies) == 2 and receiver.bodies[0] == receiver.bodies[1]
    assert materialization(instance, DAY2)["delivery_attempts"] == 2


def test_a_receiver_that_stays_down_fails_the_step_with_the_files_intact_and_no_url_anywhere(
    two_days: Workspace,
    instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Receiver([503]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        digest = DigestResource(webhook_url_env=WEBHOOK_ENV, webhook_attempts=2)
        result = materialize_day(two_days, instance, DAY2, digest)
    assert not result.success and len(receiver.bodies) == 2
    failure = next(event for event in result.all_events if event.is_step_failure)
    message = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "digest written to digest/2026-11-30.md, not posted" in message
    assert (
        f"webhook {WEBHOOK_ENV} did not take the digest after 2 attempts: last HTTP 503" in message
    )
    # The files were written before the post, and are whole.
    markdown, data = digest_files(two_days, DAY2)
    assert data["counts"]["added"] == 1 and "## Changed (1)" in markdown
    # The URL (or its secret path) is in no log, event, metadata or file of the wiki.
    secret = receiver.url.rsplit("/", 1)[1]
    logged = [
        json.dumps(dg.serialize_value(record.event_log_entry))  # type: ignore[arg-type]
        for record in instance.get_records_for_run(result.run_id).records
    ]
    output = capfd.readouterr()
    for text in [*logged, output.out, output.err, caplog.text]:
        assert secret not in text
    assert logged and any("did not take the digest" in text for text in logged)
    for path in two_days.wiki.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert instance.fetch_materializations(dg.AssetKey("wiki_digest"), limit=1).records == []


def test_a_variable_that_is_not_set_fails_with_its_name(
    two_days: Workspace, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WEBHOOK_ENV, raising=False)
    result = materialize_day(two_days, instance, DAY2, DigestResource(webhook_url_env=WEBHOOK_ENV))
    assert not result.success
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert f"{WEBHOOK_ENV} is not set" in failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert (two_days.wiki / "digest" / "2026-11-30.json").is_file()


def test_post_backs_off_honours_retry_after_and_does_not_retry_a_refusal() -> None:
    slept: list[float] = []
    with Receiver([429, 502, 200], {"Retry-After": "3"}) as receiver:
        delivery = post(receiver.url, {"text": "hi"}, named=WEBHOOK_ENV, sleep=slept.append)
    assert delivery.attempts == 3 and delivery.status == 200
    assert slept == [3.0, 3.0]  # Retry-After over the backoff's 1 s and 2 s
    slept.clear()
    with Receiver([500, 500, 200]) as receiver:
        assert post(receiver.url, {}, named=WEBHOOK_ENV, sleep=slept.append).attempts == 3
    assert slept == [1.0, 2.0]
    with Receiver([404]) as receiver, pytest.raises(DeliveryFailed) as refused:
        post(receiver.url, {}, named=WEBHOOK_ENV, sleep=slept.append)
    assert len(receiver.bodies) == 1 and "HTTP 404 (not retried)" in str(refused.value)
    assert receiver.url not in str(refused.value)
    with Receiver([200]) as receiver:
        dead = receiver.url
    with pytest.raises(DeliveryFailed) as down:
        post(dead, {}, named=WEBHOOK_ENV, attempts=2, sleep=slept.append)
    assert "after 2 attempts: last no answer" in str(down.value) and dead not in str(down.value)
    # A mistyped value is still a secret: the error names the variable, never what it holds.
    for mistyped in ("hooks.example.com/services/T0/B0/secret", "http://127.0.0.1:9/a secret\n"):
        with pytest.raises(DeliveryFailed) as bad:
            post(mistyped, {}, named=WEBHOOK_ENV, sleep=slept.append)
        assert WEBHOOK_ENV in str(bad.value) and "secret" not in str(bad.value)


def test_a_digest_follows_a_run_of_the_asset_job_and_a_day_of_two_runs_posts_once(
    workspace: Workspace,
    instance: dg.DagsterInstance,
    sim: SimServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A materialization from an asset's page runs as Dagster's __ASSET_JOB: the sensor, evaluated
    as the daemon evaluates it (its cursor over the instance's run events), requests the day's
    digest after it, passes over runs that write no pages (the digest's own), and the day's second
    digest rewrites the files without posting again."""
    from wiki_assets.defs.sync import sync

    summarizer = summarizer_for(sim)
    sync(instance, workspace.corpus, summarizer)  # registers the collections
    with Receiver([200]) as receiver:
        monkeypatch.setenv(WEBHOOK_ENV, receiver.url)
        digest = DigestResource(timezone="UTC", webhook_url_env=WEBHOOK_ENV)
        defs = build_defs(workspace.corpus, summarizer, digest=digest)
        sensor = defs.resolve_sensor_def(DIGEST_SENSOR)
        cursor = sensor.evaluate_tick(
            dg.build_sensor_context(instance=instance, definitions=defs)
        ).cursor
        assert cursor is not None  # the first tick starts from the events there are

        def tick() -> dg.RunRequest | str:
            nonlocal cursor
            result = sensor.evaluate_tick(
                dg.build_sensor_context(instance, cursor=cursor, definitions=defs)
            )
            cursor = result.cursor
            if result.run_requests:
                (request,) = result.run_requests
                return request
            return result.skip_message or ""

        def pages_from_the_ui(partition: str) -> str:
            job = defs.resolve_implicit_global_asset_job_def()
            result = job.execute_in_process(
                instance=instance,
                asset_selection=[dg.AssetKey("wiki_pages")],
                partition_key=partition,
                run_config={"ops": {"wiki_pages": {"config": {"flush_seconds": 0.2}}}},
            )
            assert result.success and result.dagster_run.job_name == "__ASSET_JOB"
            return result.run_id

        def digest_of(request: dg.RunRequest) -> dg.ExecuteInProcessResult:
            result = defs.resolve_job_def("wiki_digest_job").execute_in_process(
                instance=instance, partition_key=request.partition_key
            )
            assert result.success
            return result

        first = pages_from_the_ui("people")
        request = tick()
        assert isinstance(request, dg.RunRequest), request
        record = instance.get_run_record_by_id(first)
        assert record is not None and record.end_time is not None
        today = datetime.fromtimestamp(record.end_time, UTC).date()
        assert request.partition_key == today.isoformat()
        posting = digest_of(request)
        assert len(receiver.bodies) == 1
        assert materialization(instance, today)["posted_in_run"] == posting.run_id
        assert tick() == f"run {posting.run_id} materialized no wiki_pages"

        pages_from_the_ui("engineering")  # the same day, later
        again = tick()
        assert isinstance(again, dg.RunRequest) and again.partition_key == today.isoformat()
        digest_of(again)
        assert len(receiver.bodies) == 1, "posted once a day"
    _, data = digest_files(workspace, today)  # the files have both runs' pages
    people = [d for d in workspace.documents() if d.startswith(("people/", "engineering/"))]
    assert data["counts"]["added"] == len(people)
    metadata = materialization(instance, today)
    assert metadata["delivered"] is True and metadata["posted_in_run"] == posting.run_id
    assert "delivery_attempts" not in metadata
