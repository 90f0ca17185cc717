"""report_runs.py — our runs as `scaling report CSV --runs` reports them (their steady medians counted by
study/study.c, never here), for the benchmark scripts' summaries and sweeps.

As a module: runs(BIN, CSV) -> a list of dicts, one per reported run ([] where CSV does not exist).
As a command: report_runs.py BIN CSV FIELD max|last [COLUMN=VALUE ...] prints FIELD of the matching runs (the largest
as a number, or the last one's), or nothing where none matches.
"""
import csv, os, subprocess, sys


def runs(binary, path):
    if not os.path.exists(path):
        return []
    p = subprocess.run([binary, "report", path, "--runs"], stdout=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"report_runs.py: {binary} report {path} --runs: exit {p.returncode}")
    return list(csv.DictReader(p.stdout.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


if __name__ == "__main__":
    binary, path, field, how = sys.argv[1:5]
    want = dict(kv.split("=", 1) for kv in sys.argv[5:])
    vals = [r[field] for r in runs(binary, path) if r[field] and all(r[k] == v for k, v in want.items())]
    if vals:
        print(max(float(v) for v in vals) if how == "max" else vals[-1])
