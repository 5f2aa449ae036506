"""The demo's warm worker: statsmodels theta, sarimax, holtwinters and naive fits on real
series loaded by name from statsmodels.datasets (the panel in testdata/inputs/panel.jsonl).

Each fit's in-process wall time is appended to $PROF_DEMO_INPROC (JSON lines) so the demo
can check prof-measure's readings against what the worker itself measured.
"""

import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import statsmodels.api as sm  # noqa: E402
from statsmodels.tsa.forecasting.theta import ThetaModel  # noqa: E402
from statsmodels.tsa.holtwinters import ExponentialSmoothing  # noqa: E402
from statsmodels.tsa.statespace.sarimax import SARIMAX  # noqa: E402

import prof_worker  # noqa: E402

warnings.simplefilter("ignore")


def _load_panel():
    """ts_id -> (values, period), built the way panel.jsonl describes each series."""
    ds = sm.datasets
    series = {}
    co2 = ds.co2.load_pandas().data["co2"].interpolate()
    series["co2_weekly"] = (co2.to_numpy(), 52)
    series["co2_monthly"] = (co2.resample("MS").mean().to_numpy(), 12)
    series["sunspots"] = (ds.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(), 1)
    series["nile"] = (ds.nile.load_pandas().data["volume"].to_numpy(dtype=float), 1)
    elnino = ds.elnino.load_pandas().data
    months = [c for c in elnino.columns if c != "YEAR"]
    series["elnino_monthly"] = (elnino[months].to_numpy().ravel(), 12)
    for _, row in elnino.iterrows():
        series[f"elnino_{int(row['YEAR'])}"] = (row[months].to_numpy(dtype=float), 1)
    macro = ds.macrodata.load_pandas().data
    for col in ["realgdp", "realcons", "realinv", "realgovt", "realdpi", "cpi", "m1", "tbilrate", "unemp",
                "pop", "infl", "realint"]:
        series[f"macro_{col}"] = (macro[col].to_numpy(dtype=float), 4)
    ii = ds.interest_inflation.load_pandas().data
    for col in ["Dp", "R"]:
        series[f"interest_inflation_{col}"] = (ii[col].to_numpy(dtype=float), 4)
    dd = ds.danish_data.load_pandas().data
    for col in ["lrm", "lry", "lpy", "ibo", "ide"]:
        series[f"danish_{col}"] = (dd[col].to_numpy(dtype=float), 4)
    return series


SERIES = _load_panel()
INPROC = os.environ.get("PROF_DEMO_INPROC")
TIMINGS = []  # written once at the end, so the bookkeeping never lands inside a measured fit


def _seasonal(period, n):
    return period > 1 and n >= 2 * period


def fit_model(model_type, y, period):
    n = len(y)
    if model_type == "theta":
        ThetaModel(y, period=max(period, 1), deseasonalize=_seasonal(period, n)).fit()
    elif model_type == "sarimax":
        seasonal = (1, 0, 0, period) if _seasonal(period, n) and period <= 12 else (0, 0, 0, 0)
        SARIMAX(y, order=(1, 1, 1), seasonal_order=seasonal).fit(disp=False)
    elif model_type == "holtwinters":
        ExponentialSmoothing(y, trend="add", seasonal="add" if _seasonal(period, n) else None,
                             seasonal_periods=period if _seasonal(period, n) else None).fit()
    elif model_type == "naive":
        np.repeat(y.iloc[-1], 12)
    else:
        raise ValueError(f"unknown model_type {model_type!r}")


def fit(cell):
    if cell["ts_id"] not in SERIES:
        raise KeyError(f"no series {cell['ts_id']!r} in statsmodels.datasets")
    y, period = SERIES[cell["ts_id"]]
    t0 = time.perf_counter()
    fit_model(cell["model_type"], pd.Series(y), period)
    if cell.get("phase", "sample") == "sample":  # warm-up and replay runs are not in the profile either
        TIMINGS.append({"ts_id": cell["ts_id"], "model_type": cell["model_type"], "inproc_s": time.perf_counter() - t0})


if __name__ == "__main__":
    prof_worker.serve(fit)
    if INPROC:
        with open(INPROC, "a", encoding="utf-8") as f:
            for t in TIMINGS:
                f.write(json.dumps(t) + "\n")
