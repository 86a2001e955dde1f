"""apiforge's benchmarks: `python -m bench` (or `make bench`) runs them all and prints a summary.

Each bench compares variants side by side in one run, interleaved over a few rounds, and reports
medians and ratios: the machines this runs on are shared and noisy, so only same-run ratios hold.
"""
