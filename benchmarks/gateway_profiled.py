"""``python -m providers …`` under cProfile on the CPU clock, for ``gateway.py --profile``.

``python -m benchmarks.gateway_profiled OUT serve --config … --port …``. cProfile's command line
times with the wall clock: on 2 shared cores, time the process spends waiting for a CPU then lands
on whatever function was running. ``time.process_time`` counts only the process's own CPU, the
figure the benchmark reports. The profile is written to ``OUT`` when the server stops (on SIGINT:
uvicorn re-raises it after its shutdown, and the ``finally`` below still runs).
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, *arguments = sys.argv[1:]
    sys.argv = ["providers", *arguments]
    profiler = cProfile.Profile(time.process_time)
    try:
        profiler.runcall(runpy.run_module, "providers", run_name="__main__", alter_sys=True)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
