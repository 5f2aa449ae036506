-- forecast_metadata: one row per fit of a production run, the table prof-harvest(1) reads
-- (as JSON Lines rows, or in the warehouse through prof-harvest --emit-sql postgres|duckdb) and
-- prof_record.py writes. Standard SQL: PostgreSQL and DuckDB both take it as it is. NULL always
-- means "not measured", never 0. Units are in the column names.
CREATE TABLE IF NOT EXISTS forecast_metadata (
  run_id             text NOT NULL,     -- the run the fit belongs to: one profile per run
  ts_id              text NOT NULL,     -- the series fitted
  model_type         text NOT NULL,     -- the model fitted (ets, theta, lgbm, ...)
  family             text,              -- its family; NULL: --family-map, else the model name
  n_obs              bigint,            -- the series' length: the cost curve's x
  fit_seconds        double precision,  -- wall clock of the fit; NULL when it did not run
  cpu_seconds        double precision,  -- user + system CPU of the fit
  process_rss_bytes  bigint,            -- resident-set high-water mark: what a slot must hold
  peak_rss_bytes     bigint,            -- memory the fit added over what the process held
  peak_gpu_bytes     bigint,            -- peak device memory; 0 = measured none
  intraop_threads    integer,           -- the BLAS/OpenMP thread cap the fit ran under
  memory_limit_bytes bigint,            -- the container's memory limit (an OOM kill's floor)
  fold_id            text,              -- non-empty: a cross-validation fold's fit (skipped)
  ensemble_id        text,              -- non-empty: an ensemble member's fit (skipped)
  rss_method         text,              -- how memory and CPU were read: proc (prof_record.py:
                                        -- the fitting process only), cgroup-v2 or cgroup-v1 (the
                                        -- fit's whole process tree), rusage; NULL: not recorded
  host               text,              -- where it ran (prof_record.py writes it; not read)
  finished_at        timestamp with time zone,  -- end of the fit; the profile's measured_at
  error              text               -- NULL, or why the fit failed (OOMKilled, MemoryError ...)
);
