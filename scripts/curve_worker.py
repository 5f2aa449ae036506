"""A user's own warm worker for the cost-curve check: statsmodels ExponentialSmoothing (ets),
ARIMA (arima) and Theta (theta) fits on the real panel (testdata/inputs/panel.jsonl), plus a
model that holds a 300 MB array while it fits (big) and one that always raises (broken).

    prof-sample --panel testdata/inputs/panel.jsonl --model ets:statistical ... --mode always \
      | PYTHONPATH=python prof-measure --worker 'python3 scripts/curve_worker.py' --ready

The series are the demo's (scripts/demo_worker.py loads them from statsmodels.datasets).
"""

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from statsmodels.tsa.arima.model import ARIMA  # noqa: E402
from statsmodels.tsa.forecasting.theta import ThetaModel  # noqa: E402
from statsmodels.tsa.holtwinters import ExponentialSmoothing  # noqa: E402

import prof_worker  # noqa: E402
from demo_worker import SERIES  # noqa: E402

warnings.simplefilter("ignore")


def fit(cell):
    y, period = SERIES[cell["ts_id"]]
    y = pd.Series(y)
    seasonal = period > 1 and len(y) >= 2 * period
    model = cell["model_type"]
    if model == "ets":
        ExponentialSmoothing(y, trend="add", seasonal="add" if seasonal else None,
                             seasonal_periods=period if seasonal else None).fit()
    elif model == "arima":
        ARIMA(y, order=(1, 1, 1)).fit()
    elif model == "theta":
        ThetaModel(y, period=max(period, 1), deseasonalize=seasonal).fit()
    elif model == "big":
        held = np.ones(300 * 1024 * 1024 // 8)
        ExponentialSmoothing(y).fit()
        del held
    elif model == "broken":
        raise RuntimeError(f"broken always fails (series {cell['ts_id']}, {len(y)} observations)")
    else:
        raise ValueError(f"unknown model_type {model!r}")


if __name__ == "__main__":
    prof_worker.serve(fit)
