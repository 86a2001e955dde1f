"""`python -m bench [NAME ...]`: run the benches (all, or those named) in sequence, then a summary.

Names: generate, server, storage, codec, stack, engine, chain, attack, tls, rbac, celcost, security, metrics, crd, gc,
aggregation, admission. Each bench prints its own detail table as it goes; the summary repeats the headline figures with their targets. The exit status is 0 even when a target is
missed: the machines are noisy, so a verdict is something to read, not to gate on.

`python -m bench compare [REF] [options]` runs this work tree's server against REF's (bench/compare.py).
`python -m bench kube [options]` runs it against kube-apiserver, side by side on one etcd (bench/kube.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from bench import (
    admission_bench,
    aggregation_bench,
    attack_bench,
    celcost_bench,
    chain_bench,
    codec_bench,
    compare,
    crd_bench,
    engine_bench,
    gc_bench,
    generate_bench,
    kube,
    metrics_bench,
    rbac_bench,
    security_bench,
    server_bench,
    stack_bench,
    storage_bench,
    tls_bench,
)
from bench.common import Row, print_rows

BENCHES: dict[str, Callable[[], list[Row]]] = {
    "generate": generate_bench.run,
    "server": server_bench.run,
    "storage": storage_bench.run,
    "codec": codec_bench.run,
    "stack": stack_bench.run,
    "engine": engine_bench.run,
    "chain": chain_bench.run,
    "attack": attack_bench.run,
    "tls": tls_bench.run,
    "rbac": rbac_bench.run,
    "celcost": celcost_bench.run,
    "metrics": metrics_bench.run,
    "security": security_bench.run,
    "aggregation": aggregation_bench.run,
    "crd": crd_bench.run,
    "admission": admission_bench.run,
    "gc": gc_bench.run,
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"]:  # takes a ref and options of its own
        return compare.main(argv[1:])
    if argv[:1] == ["kube"]:
        return kube.main(argv[1:])
    unknown = [name for name in argv if name not in BENCHES]
    if unknown:
        print(
            f"unknown bench(es) {', '.join(unknown)}; choose from {', '.join(BENCHES)}",
            file=sys.stderr,
        )
        return 2
    rows: list[Row] = []
    started = time.perf_counter()
    for name in argv or list(BENCHES):
        print(f"== {name} ==", flush=True)
        bench_started = time.perf_counter()
        rows.extend(BENCHES[name]())
        print(f"   ({time.perf_counter() - bench_started:.1f}s)\n", flush=True)
    print(
        f"== summary ({time.perf_counter() - started:.0f}s; ratios are same-run, medians of interleaved rounds) =="
    )
    print_rows(rows)
    missed = [row for row in rows if row.met is False]
    if missed:
        print(
            f"{len(missed)} target(s) missed: " + "; ".join(f"{r.bench} {r.metric}" for r in missed)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
