"""Another build's engine module beside the imported eraboost's, for the
scripts that time two builds in turn in one process (``--against DIR``)."""

import glob
import importlib.machinery
import importlib.util
import os


def load_engine_module(directory, module, alias):
    """The extension ``eraboost._engine.<module>`` of the eraboost installed
    in ``directory`` (``pip install --target DIR .``), imported under the
    module name ``<alias>.<module>`` (its init function is found by the last
    part of the name), so that it can live beside the imported eraboost's.
    Its Python imports are the imported eraboost's."""
    pattern = os.path.join(directory, "eraboost", "_engine", f"{module}*")
    found = [path for path in glob.glob(pattern) if path.endswith((".so", ".pyd"))]
    if not found:
        raise SystemExit(f"no eraboost {module} module under {directory}")
    name = f"{alias}.{module}"
    loader = importlib.machinery.ExtensionFileLoader(name, found[0])
    spec = importlib.util.spec_from_file_location(name, found[0], loader=loader)
    loaded = importlib.util.module_from_spec(spec)
    loader.exec_module(loaded)
    return loaded


def add_against_option(parser):
    """The scripts' ``--against DIR`` option (repeatable)."""
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="DIR",
        help="another build's install folder, timed in turn in this process",
    )
