"""A production-style nightly job: fits every series of the panel with two models, each fit
wrapped in prof_record, and writes the rows it returns (JSON Lines on stdout) for the
warehouse load. SLOWDOWN multiplies the "arima" model's work: a deliberately slower build."""
import json
import os
import sys
import time

import prof_record

run_id, panel = sys.argv[1], sys.argv[2]
slowdown = float(os.environ.get("SLOWDOWN", "1"))
out = sys.stdout


def emit(row):
    out.write(json.dumps(row) + "\n")


for line in open(panel):
    series = json.loads(line)
    for model, family, cost in (("ets", "statistical", 1.0), ("arima", "statistical", 2.0 * slowdown)):
        with prof_record.fit(series["ts_id"], model, family=family, n_obs=series["n_obs"], run_id=run_id, sink=emit):
            data = bytearray(series["n_obs"] << 10)  # 1 KiB per observation, touched
            for i in range(0, len(data), 4096):
                data[i] = 1
            until = time.process_time() + 0.02 * cost  # 20 ms of CPU per unit of cost
            while time.process_time() < until:
                pass
