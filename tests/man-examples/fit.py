"""The per-cell fit script the man pages' `prof-measure -- python3 fit.py TS_ID MODEL` examples
run: fits MODEL on series TS_ID of the demo panel (testdata/inputs/panel.jsonl), once, and exits
0; an unknown series or model raises, so the fit is measured as failed."""

import os
import sys

import pandas as pd

sys.path.insert(0, os.environ["PROF_DEMO_SCRIPTS"])
import demo_worker  # noqa: E402

ts_id, model_type = sys.argv[1], sys.argv[2]
y, period = demo_worker.SERIES[ts_id]
demo_worker.fit_model(model_type, pd.Series(y), period)
