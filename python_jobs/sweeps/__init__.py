"""Sweeps (`finrag sweep <grid.yaml>`): a grid of run configurations over one dataset, run as the verbs run them and
landed with the sweep's own rows (lake tables sweeps and sweep_runs), so the marts can say which settings are best
and which parameter moves a metric. grid.py reads and checks the grid file; runs.py plans, shards and runs it."""
