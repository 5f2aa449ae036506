"""Serve prof-measure's warm-worker protocol around your own fit(cell) function.

A production worker imports its model stack once and fits many cells, so measuring one
process per cell would measure the import instead of the fit. With this module a user
profiles their own model by writing one function:

    import prof_worker

    def fit(cell):  # cell: {"ts_id", "model_type", "family", "n_obs"[, "params"]}
        model = build(cell["model_type"], load(cell["ts_id"]), **cell.get("params", {}))
        model.fit()

    prof_worker.serve(fit)

and running it under prof-measure:

    prof-sample ... | prof-measure --worker 'python3 my_worker.py' --ready | prof-aggregate

A cell carries "params" (an object) when prof-sample --params gave the model tuned
parameters: fit with them, so the fit measured is the fit that will run.

Protocol (prof-measure(1), "Warm-worker mode"): cells arrive one JSON line each on stdin; for
each, exactly one reply line goes to the descriptor named by $PROF_REPLY_FD (3):
{"ok":true} or {"ok":false,"error":"..."}. Replies never use stdout, so a library that prints
during a fit cannot corrupt the protocol (prof-measure passes stdout to its stderr).
Before the first cell, serve() sends {"ready":true} once its caller's imports are done;
prof-measure --ready waits for it, so the import never lands in the first cell's reading.
An exception raised by fit() is an ok:false reply carrying "ExceptionType: message"; the
worker lives on. KeyboardInterrupt and SystemExit are not caught.
"""

import json
import os
import sys

__all__ = ["serve"]


def _reply_stream():
    fd = int(os.environ.get("PROF_REPLY_FD", "3"))
    try:
        return os.fdopen(fd, "w", buffering=1, encoding="utf-8", closefd=False)
    except OSError as e:
        raise SystemExit(
            f"prof_worker: cannot open reply descriptor {fd} ({e}); run this under "
            "prof-measure --worker, which passes it"
        )


def serve(fit, stdin=None, ready=True):
    """Read cells from stdin until end of input; call fit(cell) for each; reply on fd 3."""
    reply = _reply_stream()

    def send(obj):
        reply.write(json.dumps(obj, separators=(",", ":")) + "\n")
        reply.flush()

    if ready:
        send({"ready": True})
    for line in stdin if stdin is not None else sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cell = json.loads(line)
        except ValueError as e:
            send({"ok": False, "error": f"bad cell line: {e}"})
            continue
        try:
            fit(cell)
        except Exception as e:  # noqa: BLE001 - every fit failure becomes a reply
            message = str(e).strip().splitlines()
            send({"ok": False, "error": f"{type(e).__name__}: {message[0] if message else ''}".rstrip(": ")})
        else:
            send({"ok": True})
