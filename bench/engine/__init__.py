"""The engine bench (``python -m bench.engine_bench``), one job per module.

- ``settings``: sizes, durations, targets, the servers and the phase names;
- ``plainhttp``: one-off requests over a fresh connection (setup and checks, not load);
- ``sample``: what one phase of one round measured, and interleaved rounds;
- ``raw``: the raw ceilings: aetcd's CAS, PUT and GET, and sqlite3's point read;
- ``updates``: the load generator of UPDATE (PUTs carrying each object's latest resourceVersion);
- ``servers``: the etcd, the servers and the data of one run (setup and teardown);
- ``writes``, ``lists``, ``fanout``: the phases of each kind;
- ``report``: the tables and summary rows;
- ``profiling``, ``sweeps``: the diagnostics (``--profile``, ``--fan-sweep``, ``--write-sweep``).
"""
