"""The fan-out benchmark's models (scripts/bench-fanout), served over prof-measure's warm-worker
protocol: scikit-learn and statsmodels fits on real series from Debian's R packages.

  gbr     GradientBoostingRegressor on lag features (one process)
  rf      RandomForestRegressor(n_jobs=2) on lag features (two threads)
  et_loky an ExtraTrees bag, two halves fitted through joblib.Parallel(backend="loky",
          n_jobs=2): two child processes, kept alive between cells as loky keeps them
  arima   statsmodels ARIMA(2,1,1)

PROF_FANOUT_PANEL names the panel (JSON Lines with ts_id, n_obs, values). PROF_FANOUT_MODELS
says how big the models are: "default" (scikit-learn's defaults: 100 trees, RandomForest and
ExtraTrees grown to full depth, so their memory grows with the series) or "small" (30 trees,
25 per ExtraTrees half; what the bench used before). Each model's library is imported at its
first cell, as a worker serving one model would: a worker's memory is its own model's.
"""
import json
import os
import sys
import warnings

import numpy as np
import prof_worker

warnings.filterwarnings("ignore")
LAGS = 24
SMALL = os.environ.get("PROF_FANOUT_MODELS", "default") == "small"
SERIES = {}
with open(os.environ["PROF_FANOUT_PANEL"], encoding="utf-8") as f:
    for line in f:
        row = json.loads(line)
        SERIES[row["ts_id"]] = np.asarray(row["values"], dtype=float)


def lagged(y):
    """The lag matrix: each row the LAGS values before the target (fewer for a short series)."""
    k = max(1, min(LAGS, len(y) // 3))
    X = np.lib.stride_tricks.sliding_window_view(y[:-1], k)
    return np.ascontiguousarray(X), y[k:]


def fit_half(X, y, seed):
    from sklearn.ensemble import ExtraTreesRegressor
    return ExtraTreesRegressor(n_estimators=25 if SMALL else 50, random_state=seed).fit(X, y)


def fit(cell):
    y = SERIES[cell["ts_id"]]
    model = cell["model_type"]
    if model == "arima":
        from statsmodels.tsa.arima.model import ARIMA
        ARIMA(y, order=(2, 1, 1)).fit()
        return
    X, t = lagged(y)
    if model == "gbr":
        from sklearn.ensemble import GradientBoostingRegressor
        size = dict(n_estimators=30, max_depth=4) if SMALL else {}
        GradientBoostingRegressor(random_state=0, **size).fit(X, t).predict(X[-1:])
    elif model == "rf":
        from sklearn.ensemble import RandomForestRegressor
        size = dict(n_estimators=30) if SMALL else {}
        RandomForestRegressor(n_jobs=2, random_state=0, **size).fit(X, t).predict(X[-1:])
    elif model == "et_loky":
        from joblib import Parallel, delayed
        halves = Parallel(n_jobs=2, backend="loky")(delayed(fit_half)(X, t, s) for s in (0, 1))
        np.mean([h.predict(X[-1:]) for h in halves])
    else:
        raise ValueError(f"unknown model {model}")


prof_worker.serve(fit)
