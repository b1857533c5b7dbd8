"""A Python program that never imports torch: saturate must leave it alone (no saturate module loaded)."""
import sys
import time

loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("saturate", "torch"))
print("modules:", loaded or "none", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 3)
