import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
