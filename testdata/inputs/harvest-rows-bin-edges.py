# Warehouse rows whose cost curves sit on the binning rule's edges (curve.hpp), for the
# aggregate goldens: per run, a model with exactly 32 distinct lengths (one point per length),
# one with 33 whose bins of ceil(106 / 32) = 4 fits each end inside a run of one length (ties
# across every bin edge, carried into the next bin), one with 40 lengths of uneven counts, one
# length only, and lengths no curve holds (null, above 2^32). Deterministic. No arguments.
import json, random
random.seed(5)
rows = []
def fit(run, model, n, wall, cpu=None):
    rows.append({'run_id': run, 'ts_id': 's%04d' % len(rows), 'model_type': model, 'family': 'stat',
                 'n_obs': n, 'fit_seconds': wall, 'cpu_seconds': cpu, 'finished_at': '2026-11-28T00:00:01Z'})
for run in ['edge-a', 'edge-b']:
    for i in range(32):
        for k in range(1 + i % 4):
            fit(run, 'm32', 10 * (i + 1), round(0.01 * (i + 1) + 0.001 * k, 6), 0.02 * (i + 1) if k else None)
    for n in range(1, 34):  # 32 lengths of 3 fits, length 5 of 10: 106 fits
        for k in range(10 if n == 5 else 3):
            fit(run, 'm33', n, [0.5, 0.25, 0.5, 0.125][k % 4] * n, None if n % 7 == 0 else 0.1 * n + k)
    for n in range(100, 140):
        for k in range(1 + (n * 7) % 5):
            fit(run, 'uneven', n, round(random.uniform(0.1, 2.0), 4), round(random.uniform(0.1, 4.0), 4))
    fit(run, 'one', 50, 0.2)
    fit(run, 'one', 50, 0.4)
    fit(run, 'nolen', None, 0.3)
    fit(run, 'nolen', 2 ** 33, 0.4)
for r in rows:
    print(json.dumps(r))
