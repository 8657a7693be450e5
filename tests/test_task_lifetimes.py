"""Every task and thread a run starts ends with it: the dispatcher's workers, the renewal of
the fleet-wide worker leases they hold, and each request (cancelled with its worker, and waited
for); the link candidates helper's reader and its start beside the plan; the simulation's watch
over idle models; the reader of a child server's output. Each is checked on a run that is
stopped or cancelled, against what is left running afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import pytest

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.dispatch import Dispatcher, Job, Lane, Prepared, Recorded, workers_for
from wiki_assets.engine.dispatch.judges import JudgeQueue, PageToJudge
from wiki_assets.engine.documents.corpus import SourceDocument
from wiki_assets.engine.ingestion.candidates import plan_beside_helper
from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES
from wiki_assets.engine.llm import child_server as child_servers
from wiki_assets.engine.llm.child_server import child_server, free_port
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.engine.prompting.results import Notes, Summary
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.service import HELPER_MODULE, CandidatesService
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.request import JudgeRequest
from wiki_assets.simulator import SimModel, SimServer
from wiki_assets.virtual_time import check, clock, generate, runner


class HangingModel:
    """A model whose every request waits forever; it counts the requests that were cancelled."""

    max_tokens = 64

    def __init__(self, *, stubborn: bool = False) -> None:
        self.sent = 0
        self.judged = 0
        self.cancelled = 0
        self.stubborn = stubborn  # its end, once begun, is not cut short by another cancel

    async def summarize(self, request: PageRequest) -> Summary:
        self.sent += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await self._closing()  # ends a moment after it is cancelled, like a connection
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")

    async def _closing(self) -> None:
        loop = asyncio.get_running_loop()
        closed = loop.time() + 0.01
        while loop.time() < closed:
            try:
                await asyncio.sleep(closed - loop.time())
            except asyncio.CancelledError:
                if not self.stubborn:
                    raise

    async def notes(self, path: str, text: str, part: int, parts: int, language: str) -> Notes:
        raise AssertionError("no long documents here")

    async def judge(self, text: str, sentences: Sequence[str]) -> Judgement:
        self.judged += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await self._closing()
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        pass


class Leases:
    """Fleet-wide worker leases that are always free; counts the renewals."""

    ttl_s = 0.03

    def __init__(self) -> None:
        self.renewals = 0

    def try_acquire(self, model: str, limit: int) -> int:
        return 0

    def release(self, model: str, number: int) -> None:
        pass

    def renew(self) -> int:
        self.renewals += 1
        return 1


class Work:
    async def prepare(self, job: Job) -> Prepared:
        return Prepared(job.doc.path, "text", "English", 10, [])

    async def record(self, job: Job, lane: Lane, summary: Summary) -> Recorded:
        raise AssertionError("no answer comes")

    def gathered(self, job: Job, notes: list[str]) -> Prepared:
        raise AssertionError("no long documents here")

    def fail(self, job: Job, reason: str) -> None:
        raise AssertionError(reason)

    def held_back(self) -> bool:
        return False

    async def judged(
        self, judging: Any, judge: Lane, judgement: Any, holds: Any
    ) -> tuple[str, ...]:
        raise AssertionError("no page to judge here")


def dispatcher_on(
    model: HangingModel | None, leases: Leases, base_url: str = "http://127.0.0.1:9/v1"
) -> Dispatcher:
    """Five documents for one model's three workers: ``model``, or else the real client of the
    server at ``base_url``."""
    dials = Dials(workers_per_model=3, claim_size=1)
    endpoint = Endpoint(name="m", base_url=base_url, model="m", max_in_flight=3)
    workers = workers_for(endpoint, dials)
    client = model or ModelClient(endpoint, 64, on_overload=workers.on_overload)
    lane = Lane(0, endpoint, client, workers)
    jobs = [Job(SourceDocument(f"c/{i}.md", "c", 10, "h"), f"c/{i}.md") for i in range(5)]
    return Dispatcher(
        [lane],
        iter(jobs),
        Work(),
        dials,
        expected=lambda: len(jobs),
        leases=leases,  # type: ignore[arg-type]
    )


def others() -> set[asyncio.Task[object]]:
    """The tasks still there, besides the one asking."""
    current = asyncio.current_task()
    return {task for task in asyncio.all_tasks() if task is not current}


def test_a_stopped_run_leaves_no_task_behind() -> None:
    model, leases = HangingModel(), Leases()

    async def run() -> set[asyncio.Task[object]]:
        dispatcher = dispatcher_on(model, leases)
        asyncio.get_running_loop().call_later(0.1, dispatcher.stop, "stopped by the test")
        await dispatcher.run()
        return others()

    assert asyncio.run(run()) == set()
    assert model.sent == 3 and model.cancelled == 3  # each request ended before its worker
    assert leases.renewals >= 2  # renewed while the workers worked


def test_a_cancelled_run_waits_for_its_requests_to_end() -> None:
    """A worker cancelled (its task group ends on an error, or the run's task is cancelled)
    cancels its request and waits for it to end before it ends itself."""
    model, leases = HangingModel(), Leases()

    async def run() -> set[asyncio.Task[object]]:
        dispatching = asyncio.create_task(dispatcher_on(model, leases).run())
        await asyncio.sleep(0.1)
        dispatching.cancel()
        await asyncio.wait((dispatching,))
        return others()

    assert asyncio.run(run()) == set()
    assert model.sent == 3 and model.cancelled == 3


def test_a_worker_cancelled_again_leaves_no_request_behind() -> None:
    """A worker cancelled a second time while it waits for its cancelled request to end (its
    caller gave up waiting) ends before the request does: the run waits for the request (and
    lets it end as cancelled once, its cleanup not cut short) before it returns."""
    model, leases = HangingModel(stubborn=True), Leases()

    async def run() -> set[asyncio.Task[object]]:
        dispatching = asyncio.create_task(dispatcher_on(model, leases).run())
        await asyncio.sleep(0.1)
        workers = [task for task in others() if task.get_coro().__qualname__ == "Worker.run"]
        assert len(workers) == 3 and model.sent == 3
        for _ in range(2):  # the second cancel finds each worker waiting for its request
            for worker in workers:
                worker.cancel()
            await asyncio.sleep(0.001)
        await asyncio.wait((dispatching,))
        return others()

    assert asyncio.run(run()) == set()
    assert model.cancelled == 3


def test_a_judge_cancelled_again_leaves_no_request_behind() -> None:
    """A worker cancelled a second time while it waits for its cancelled judge's request to end
    ends before the request does: the request stays out, and the run's end waits for it."""
    model = HangingModel(stubborn=True)

    async def until_cancelled(ready: Callable[[], bool]) -> None:
        await asyncio.Event().wait()  # the dispatcher's wait: no work comes back meanwhile

    async def run() -> tuple[int, set[asyncio.Task[object]]]:
        lane = dispatcher_on(model, Leases()).lanes[0]
        judges = JudgeQueue(
            apply=Work().judged, retry=lambda job, flags: None, budget=1, wait=until_cancelled
        )
        doc = SourceDocument("c/0.md", "c", 10, "h")
        request = JudgeRequest(("A sentence.",), targets=(0,), truths=(None,))
        judging = PageToJudge(request, "text", 1, Job(doc, doc.path), None)
        worker = asyncio.create_task(judges.judge(judging, lane, lambda: False))
        await asyncio.sleep(0.001)
        assert model.judged == 1
        for _ in range(2):  # the second cancel finds the worker waiting for its request
            worker.cancel()
            await asyncio.sleep(0.001)
        assert worker.done()
        still_out = len(judges.out)
        await judges.wait_out()
        return still_out, others()

    still_out, left = asyncio.run(run())
    assert still_out == 1  # its worker ended first
    assert left == set()
    assert model.cancelled == 1  # ended as cancelled once, its cleanup not cut short


def test_a_cancelled_run_over_http_leaves_no_request_behind() -> None:
    """The same over HTTP, with the run's own client: requests that hang on the simulated
    server are cancelled with the run, and each has ended when the run's task has."""
    leases = Leases()
    with SimServer(SimModel(model="m", hang_rate=1.0)) as server:

        async def run() -> set[asyncio.Task[object]]:
            dispatcher = dispatcher_on(None, leases, server.base_url)
            dispatching = asyncio.create_task(dispatcher.run())
            while server.stats.hung < 3:  # every worker's request is on the server
                await asyncio.sleep(0.01)
            dispatching.cancel()
            await asyncio.wait((dispatching,))
            left = others()
            await dispatcher.lanes[0].client.close()
            return left

        assert asyncio.run(run()) == set()
        assert server.stats.requests == 3 and server.stats.answered == 0


# ---------------------------------------------------------------- the link candidates helper


def small_index(root: Path) -> tuple[Path, list[str]]:
    """An index of three short notes, for a helper to answer from."""
    db = root / "related.sqlite"
    paths = [f"notes/n{i}.md" for i in range(3)]
    with RelatedIndex(db) as index:
        index.update_many(
            (path, f"Note {i}", f"# Note {i}\n\nTea, maps and topic {i}.\n", f"h{i}")
            for i, path in enumerate(paths)
        )
    return db, paths


def helpers_on(db: Path) -> list[int]:
    """The link candidates helper processes still running on the index at ``db``."""
    running = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if HELPER_MODULE.encode() in words and str(db.resolve()).encode() in words:
                running.append(int(cmdline.parent.name))
    return running


def test_a_cancelled_close_ends_the_helper_and_its_reader(tmp_path: Path) -> None:
    """Closing the helper, cancelled while the helper finishes: the helper is killed, and the
    task that reads its answers (started by ``start``, not by the constructor) has ended when
    the cancellation is raised."""
    db, paths = small_index(tmp_path)

    async def run() -> tuple[bool, set[asyncio.Task[object]], set[asyncio.Task[object]]]:
        service = await CandidatesService.start(db, RELATED_CANDIDATES, paths)
        assert await service.candidates(paths[0]) is not None  # up and answering
        reading = others()
        closing = asyncio.create_task(service.close())
        await asyncio.sleep(0)  # close has closed the helper's input; it waits for its exit
        closing.cancel()
        await asyncio.wait((closing,))
        return closing.cancelled(), reading, others()

    cancelled, reading, left = asyncio.run(run())
    assert len(reading) == 1  # its reader, while it served
    assert cancelled and left == set()
    assert helpers_on(db) == []


def test_a_cancelled_plan_waits_for_its_thread_and_starts_no_helper_after(tmp_path: Path) -> None:
    """The run is cancelled while its plan (on a thread) is still at work, and the plan asks for
    the helper after that. The cancelled call waits for the plan's thread, then cancels the
    helper's start or closes the helper: no plan still at work when it ends, no task, no
    helper process."""
    db, _ = small_index(tmp_path)
    release, planned = threading.Event(), threading.Event()

    def make_plan(helper_wanted: Callable[[], None]) -> Any:
        release.wait(10)
        helper_wanted()
        planned.set()
        return object()

    async def run() -> tuple[bool, list[bool], set[asyncio.Task[object]]]:
        ended_with_plan: list[bool] = []
        planning = asyncio.create_task(plan_beside_helper(make_plan, db, Lines()))
        planning.add_done_callback(lambda _: ended_with_plan.append(planned.is_set()))
        await asyncio.sleep(0.05)  # the plan is at work
        planning.cancel()
        await asyncio.sleep(0.05)
        release.set()  # the plan asks for the helper, and ends
        await asyncio.sleep(0.2)  # (long enough for a helper's start to be under way)
        await asyncio.wait((planning,))
        return planning.cancelled(), ended_with_plan, others()

    cancelled, ended_with_plan, left = asyncio.run(run())
    assert cancelled and ended_with_plan == [True]
    assert left == set()
    assert helpers_on(db) == []


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    warning = error = info


# ---------------------------------------------------------------- the simulation


@pytest.mark.parametrize("cancel_after_s", [None, 3.0])
def test_a_simulated_run_ends_its_idle_watch_with_it(
    monkeypatch: pytest.MonkeyPatch, cancel_after_s: float | None
) -> None:
    """The simulation's run on its virtual clock, to its end or cancelled mid-way: its watch
    over idle models has ended when the run does. (The real virtual clock runs the run, seen
    from the task that awaits it.)"""
    left: list[set[asyncio.Task[object]]] = []

    def seen_from_around(main: Coroutine[Any, Any, None]) -> None:
        async def around() -> None:
            outside = asyncio.current_task()

            async def run_and_look() -> None:
                try:
                    await main
                finally:  # the instant the run ends
                    left.append(others() - {outside})

            running = asyncio.create_task(run_and_look())
            if cancel_after_s is not None:
                await asyncio.sleep(cancel_after_s)
                assert not running.done()
                running.cancel()
            await asyncio.wait((running,))

        clock.run_virtual(around())

    monkeypatch.setattr(runner, "run_virtual", seen_from_around)
    outcome = runner.run(generate(0, 40))  # 40 documents on 4 models: about 9 virtual seconds
    assert left == [set()]
    if cancel_after_s is None:
        assert check(outcome) == [] and outcome.makespan_s > 5  # the run is as it was
    else:
        assert outcome.makespan_s == cancel_after_s and outcome.report.count < 40


# ---------------------------------------------------------------- a child server's output


def simulator_command(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "wiki_assets.simulator",
        "--port",
        str(port),
        "--preset",
        "instant",
    ]


def alive_since(before: set[threading.Thread]) -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread not in before}


@pytest.mark.parametrize("fails", [False, True])
def test_a_stopped_child_server_leaves_no_thread_behind(fails: bool) -> None:
    """The with block of a child server ends, or fails: the child is stopped, then the reader of
    its output joined."""
    before = set(threading.enumerate())
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1/models"
    with contextlib.suppress(ValueError):
        with child_server(simulator_command(port), url, "simulated server", 60) as server:
            assert server.reader in alive_since(before)
            if fails:
                raise ValueError("the block fails")
    assert server.process.returncode is not None
    assert alive_since(before) == set()


def test_a_child_server_ends_on_sigterm_where_its_parent_ignores_it() -> None:
    """A process that ignores SIGTERM (started in the background, then a Dagster run in it)
    does not pass that on to the servers it starts: each ends on the SIGTERM that stops it, not
    on the SIGKILL STOP_WAIT_S later."""
    script = (
        "import signal\n"
        "import sys\n"
        "from wiki_assets.engine.llm.child_server import child_server, free_port\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "port = free_port()\n"
        "command = [sys.executable, '-m', 'http.server', str(port), '--bind', '127.0.0.1']\n"
        "with child_server(command, f'http://127.0.0.1:{port}/', 'server', 60) as server:\n"
        "    pass\n"
        "print(server.process.returncode)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == [str(-signal.SIGTERM)], done.stderr


class Interrupted(Exception):
    pass


def interrupt(signum: int, frame: object) -> None:
    raise Interrupted


def test_a_stop_cut_short_still_kills_the_child_and_joins_its_reader() -> None:
    """Interrupted (as by Ctrl-C) while it waits for a child that ignores SIGTERM to exit, the
    stop kills the child at once and joins the reader of its output before the interrupt goes
    on."""
    before = set(threading.enumerate())
    port = free_port()
    stubborn = f'trap "" TERM; exec "{sys.executable}" -m http.server {port} --bind 127.0.0.1'
    previous = signal.signal(signal.SIGALRM, interrupt)
    server = None
    try:
        with pytest.raises(Interrupted):
            with child_server(
                ["sh", "-c", stubborn], f"http://127.0.0.1:{port}/", "stubborn server", 60
            ) as server:
                signal.setitimer(signal.ITIMER_REAL, 0.5)  # while it is being stopped
        assert server.process.returncode == -signal.SIGKILL
        assert alive_since(before) == set()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if server is not None and server.process.poll() is None:  # (the old code left it)
            os.killpg(server.process.pid, signal.SIGKILL)


def test_output_held_open_after_the_stop_holds_up_the_stop_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Something the child started ignores SIGTERM and keeps its output open after the child
    is stopped: the reader is joined for a bounded time, then left to end with the output
    (closing the output under it would wait for its read, for as long as that lives)."""
    monkeypatch.setattr(child_servers, "OUTPUT_JOIN_S", 0.5)
    before = set(threading.enumerate())
    port = free_port()
    # Only the background sleep ignores SIGTERM (a subshell's trap): a SIGTERM that comes early,
    # before the server is exec'd, still ends the child at once.
    serve = f'"{sys.executable}" -m http.server {port} --bind 127.0.0.1'
    script = f'(trap "" TERM; exec sleep 60) & exec {serve}'
    url = f"http://127.0.0.1:{port}/"
    with child_server(["sh", "-c", script], url, "server", 60) as server:
        stopping = time.monotonic()
    try:
        assert time.monotonic() - stopping < 5
        assert server.process.returncode is not None
        assert alive_since(before) == {server.reader}  # the sleep holds the output open
    finally:
        os.killpg(server.process.pid, signal.SIGKILL)  # the sleep, left in the child's group
    assert server.reader is not None
    server.reader.join(5)
    assert alive_since(before) == set()
