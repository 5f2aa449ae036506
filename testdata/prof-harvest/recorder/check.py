"""Compare prof-measure's fit records with the rows prof_record wrote for the same fits."""
import json
import sys

fits = {f["ts_id"]: f for f in map(json.loads, open(sys.argv[1]))}
rows = {r["ts_id"]: r for r in map(json.loads, open(sys.argv[2]))}
MiB = 1 << 20
for ts in sorted(fits):
    f, r = fits[ts], rows[ts]
    checks = {
        # the recorder's window sits inside prof-measure's (which adds the reply round trip)
        "fit_seconds": 0 < r["fit_seconds"] <= f["wall_s"] and f["wall_s"] - r["fit_seconds"] < 0.005 + 0.1 * f["wall_s"],
        "cpu_seconds": abs(f["cpu_s"] - r["cpu_seconds"]) < 0.01 + 0.1 * f["cpu_s"],
        "process_rss_bytes": abs(f["process_rss_bytes"] - r["process_rss_bytes"]) <= 0.02 * f["process_rss_bytes"],
        "peak_rss_bytes": abs(f["peak_rss_bytes"] - r["peak_rss_bytes"]) <= 2 * MiB + 0.05 * f["peak_rss_bytes"],
        "intraop_threads": f["intraop_threads"] == r["intraop_threads"] == 1,
    }
    bad = [k for k, ok in checks.items() if not ok]
    print(ts, "agree" if not bad else "DISAGREE on " + ", ".join(bad))
    if bad:
        print("  prof-measure:", {k: f.get(k) for k in ("wall_s", "cpu_s", "process_rss_bytes", "peak_rss_bytes")}, file=sys.stderr)
        print("  prof_record: ", {k: r.get(k) for k in ("fit_seconds", "cpu_seconds", "process_rss_bytes", "peak_rss_bytes")}, file=sys.stderr)
