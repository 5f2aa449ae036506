"""Record one production fit the way prof-measure measures it, as a forecast_metadata row.

prof-harvest sizes a new run from a completed run's warehouse rows, but only from the columns
those rows hold: with wall time alone, every memory and core axis of the harvested profile is
null. Wrap each fit of a production task in this context manager and write the row it returns
next to the forecast:

    import prof_record

    with prof_record.fit(ts_id, "ets", family="statistical", n_obs=len(y), run_id=RUN,
                         sink=insert_into_forecast_metadata):
        model = ExponentialSmoothing(y).fit()

`sink` is called with the row (one dict, the columns below) when the block ends, also when it
raised, so a failed fit leaves its row too; without a sink, read `rec.row` after the block.

Columns (the names prof-harvest reads; units in the names; None is SQL NULL = not measured):

    run_id, ts_id, model_type, family, n_obs  as given
    fit_seconds        wall clock of the block (monotonic); None when the block raised
    cpu_seconds        user + system CPU of this process (all its threads) during the block
    process_rss_bytes  the process's resident-set high-water mark during the block (VmHWM,
                       reset before the block): what a slot must hold
    peak_rss_bytes     process_rss_bytes minus the resident set before the block: the memory
                       this fit added; None when the high-water mark could not be reset
    peak_gpu_bytes     peak device memory of this process, sampled through NVML every 10 ms;
                       None where NVML is absent (not measured, never 0)
    intraop_threads    the thread cap of the BLAS/OpenMP pools (their *_NUM_THREADS variables,
                       when those that are set agree); None = no cap known
    rss_method         "proc": how memory and CPU were read (this process only; prof-measure
                       writes cgroup-v2 or cgroup-v1 where it read the fit's whole process tree),
                       so prof-diff can tell a change of method from a change of the model
    host               $PROF_HOST, else the host name
    finished_at        RFC 3339 UTC time stamp of the end of the block
    error              None, or "ExceptionType: first line of the message" when the block
                       raised (the exception is re-raised: the task fails as it would have)

These are prof-measure's definitions for a warm worker (rss_method "proc"): the high-water
reset through /proc/self/clear_refs, the process CPU clock, the monotonic clock. One fit at a
time per process: the high-water mark and the CPU clock belong to the whole process, so a
thread pool fitting several series at once in one process cannot be told apart per fit.
Descendant processes (joblib/loky, multiprocessing) are not counted: measure those with
prof-measure, which reads the memory cgroup.
"""

import ctypes
import datetime
import os
import socket
import threading
import time

__all__ = ["fit", "FitRecord", "THREAD_VARIABLES"]

# The pool variables prof-measure --threads sets, in its order (the same list as
# thread_pool_variables() in lib/prof/measure/spawn.cpp; a unit test compares the two).
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
    "BLIS_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "POLARS_MAX_THREADS",
    "RAYON_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "NUMBA_NUM_THREADS",
)


def _status_bytes(key):
    """A 'kB' line of /proc/self/status in bytes, or None."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(key.encode() + b":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_high_water():
    """Resets VmHWM to the current RSS (clear_refs "5", Linux 4.0+); False when refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _thread_cap(environ):
    values = {environ[v] for v in THREAD_VARIABLES if environ.get(v, "").strip()}
    if len(values) != 1:
        return None
    try:
        n = int(values.pop())
    except ValueError:
        return None
    return n if n > 0 else None


def _host(environ):
    return environ.get("PROF_HOST") or socket.gethostname()


class _NvmlPeak:
    """Samples this process's device memory through NVML while a fit runs."""

    class _ProcessInfo(ctypes.Structure):
        _fields_ = [
            ("pid", ctypes.c_uint),
            ("usedGpuMemory", ctypes.c_ulonglong),
            ("gpuInstanceId", ctypes.c_uint),
            ("computeInstanceId", ctypes.c_uint),
        ]

    def __init__(self, interval_s=0.01):
        self.interval_s = interval_s
        self.peak = None
        self._lib = None
        self._devices = []
        self._stop = threading.Event()
        self._thread = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            count = ctypes.c_uint(0)
            if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
                return
            for i in range(count.value):
                handle = ctypes.c_void_p()
                if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) == 0:
                    self._devices.append(handle)
            self._query = getattr(lib, "nvmlDeviceGetComputeRunningProcesses_v3", None) or getattr(
                lib, "nvmlDeviceGetComputeRunningProcesses_v2"
            )
            self._lib = lib if self._devices else None
        except (OSError, AttributeError):
            self._lib = None

    @property
    def available(self):
        return self._lib is not None

    def _sample(self):
        pid, total, seen = os.getpid(), 0, False
        for handle in self._devices:
            n = ctypes.c_uint(64)
            info = (self._ProcessInfo * 64)()
            if self._query(handle, ctypes.byref(n), info) != 0:
                continue
            seen = True
            for i in range(min(n.value, 64)):
                if info[i].pid == pid:
                    total += info[i].usedGpuMemory
        if seen:
            self.peak = max(self.peak or 0, total)

    def _loop(self):
        while not self._stop.wait(self.interval_s):
            self._sample()

    def start(self):
        if self.available:
            self._sample()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def stop(self):
        if self._thread:
            self._stop.set()
            self._thread.join()
            self._sample()
        if self._lib is not None:
            self._lib.nvmlShutdown()


class FitRecord:
    """The measurement of one block; `row` is the forecast_metadata row once the block ends."""

    def __init__(self, ts_id, model_type, family=None, n_obs=None, run_id=None, sink=None, environ=None):
        self.environ = os.environ if environ is None else environ
        self.sink = sink
        self.row = {
            "run_id": run_id,
            "ts_id": ts_id,
            "model_type": model_type,
            "family": family,
            "n_obs": n_obs,
            "fit_seconds": None,
            "cpu_seconds": None,
            "process_rss_bytes": None,
            "peak_rss_bytes": None,
            "peak_gpu_bytes": None,
            "intraop_threads": _thread_cap(self.environ),
            "rss_method": "proc",
            "host": _host(self.environ),
            "finished_at": None,
            "error": None,
        }

    def __enter__(self):
        self._gpu = _NvmlPeak()
        self._rss_before = _status_bytes("VmRSS")
        self._reset = _reset_high_water()
        self._gpu.start()
        self._cpu0 = time.process_time_ns()
        self._t0 = time.perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        t1 = time.perf_counter_ns()
        cpu1 = time.process_time_ns()
        hwm = _status_bytes("VmHWM")
        self._gpu.stop()
        row = self.row
        row["finished_at"] = (
            datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        )
        row["cpu_seconds"] = (cpu1 - self._cpu0) / 1e9
        row["process_rss_bytes"] = hwm
        if hwm is not None and self._rss_before is not None and self._reset:
            row["peak_rss_bytes"] = max(0, hwm - self._rss_before)
        row["peak_gpu_bytes"] = self._gpu.peak if self._gpu.available else None
        if exc_type is None:
            row["fit_seconds"] = (t1 - self._t0) / 1e9
        else:
            lines = str(exc).strip().splitlines()
            row["error"] = f"{exc_type.__name__}: {lines[0] if lines else ''}".rstrip(": ")
        if self.sink is not None:
            self.sink(row)
        return False  # an exception propagates: the task fails as it would have


def fit(ts_id, model_type, family=None, n_obs=None, run_id=None, sink=None):
    """A context manager measuring one fit; its `row` is the forecast_metadata row, passed to
    sink(row) when the block ends (also when it raised)."""
    return FitRecord(ts_id, model_type, family=family, n_obs=n_obs, run_id=run_id, sink=sink)
