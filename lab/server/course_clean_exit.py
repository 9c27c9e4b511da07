"""A lab that is stopped (Ctrl-C, SIGTERM) ends, instead of waiting for ever for a thread.

Jupyter Server runs file operations on AnyIO's worker threads. Those are not daemon threads,
and AnyIO stops them only when the task it took for the event loop's root ends; when the server
stops its loop with that task still pending, Python's exit joins the idle workers for ever (seen:
a lab still alive minutes after SIGTERM, its main thread in threading._shutdown, an "AnyIO worker
thread" waiting on its queue). Told to stop before those joins, an idle worker returns at once
and a busy one after its call."""
import threading


def stop_anyio_workers() -> None:
    try:
        from anyio._backends._asyncio import WorkerThread
    except ImportError:  # another AnyIO: nothing known to stop
        return
    for thread in threading.enumerate():
        if isinstance(thread, WorkerThread):
            thread.stop()


def _load_jupyter_server_extension(serverapp):
    # Run where concurrent.futures stops its own workers: before the interpreter joins threads
    # (atexit handlers run only after those joins, too late).
    threading._register_atexit(stop_anyio_workers)


def _jupyter_server_extension_points():
    return [{"module": "course_clean_exit"}]
