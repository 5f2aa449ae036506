# Writes warehouse rows for the aggregate tests: three runs of random rows over every rule of
# the harvest (fold and ensemble ids, families null, '' and several per model, NaN and
# infinite clocks, error texts of each OOM kind, memory limits, thread caps, lengths past
# 2^32, ts_ids that sort differently by locale). argv: seed [many-lengths] [rows per run].
import json, random, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
nolen = len(sys.argv) > 2 and sys.argv[2] == 'many-lengths'
per_run = int(sys.argv[3]) if len(sys.argv) > 3 else 300
models = ['arima', 'theta', 'lgbm', 'Nbeats', 'ets', 'tft']
fams = {'arima': 'statistical', 'theta': 'statistical', 'lgbm': 'ml'}
series = ['s%03d' % i for i in range(150)] + ['Zeta', 'alpha', 'a_b', 'a-b', 'é', 'E', 'ß9', "o'neil"]
errs = [None, None, None, '', 'OOMKilled', 'Killed', 'exit 137', 'CUDA out of memory: tried', 'ValueError: bad', 'MemoryError', 'signal 9 received', 'torch.cuda.OutOfMemoryError x']
for run in ['nightly-41', 'nightly-42', 'r3']:
    for i in range(per_run):
        m = random.choice(models)
        r = {'run_id': run, 'ts_id': random.choice(series), 'model_type': m}
        f = random.random()
        if f < 0.6 and m in fams: r['family'] = fams[m]
        elif f < 0.65: r['family'] = ''
        elif f < 0.68: r['family'] = 'other'
        elif f < 0.8: r['family'] = None
        lens = [24, 48, 96, 120, 365, 1000] if m != 'ets' else list(range(10, 10 + (40 if nolen else 20)))
        r['n_obs'] = random.choice(lens + [None, 0, 5000000000] if random.random() < 0.1 else lens)
        fs = random.choice([0.5, 0.25, 1.5, 2.0, 0.001, 0.0005, 3.7, 10.0, 0.1, 0.3]) * random.choice([1, 1, 1.1, 1 / 3])
        if random.random() < 0.05: fs = random.choice([None, 0, -1, float('nan'), float('inf')])
        r['fit_seconds'] = fs
        r['cpu_seconds'] = random.choice([None, 0.2, 1.0, 3.3, 7.5, 0.05, 1e-9]) if random.random() < 0.9 else float('nan')
        r['process_rss_bytes'] = random.choice([None, 0, 1 << 20, 123456789, str(18446744073709551615 - 5)])
        r['peak_rss_bytes'] = random.choice([None, 0, 5 << 20, 98765432])
        r['peak_gpu_bytes'] = random.choice([None, 0, 1 << 30, 3 << 30]) if m in ('tft', 'Nbeats') else None
        r['intraop_threads'] = random.choice([1, 1, 1, 4, None]) if m != 'theta' else 1
        r['memory_limit_bytes'] = random.choice([None, 1 << 30, 2 << 30])
        r['fold_id'] = random.choice([None] * 12 + [1, 0])
        r['ensemble_id'] = random.choice([None] * 12 + ['', 'e1'])
        r['finished_at'] = random.choice([None, '2026-11-27T02:%02d:%02d.%06dZ' % (random.randrange(60), random.randrange(60), random.randrange(10**6))])
        r['error'] = random.choice(errs) if random.random() < 0.3 else None
        for k in ('fit_seconds', 'cpu_seconds'):
            if isinstance(r[k], float) and (r[k] != r[k] or r[k] in (float('inf'), float('-inf'))): r[k] = {True: 'NaN'}.get(r[k] != r[k], 'Infinity')
        s = json.dumps(r)
        print(s)
