"""``python -m analysis.paper.build``: the build's command line
(:func:`analysis.paper.build.cli.main`)."""

import gc
import sys

from analysis.paper.build.cli import main

status = main()
# The process ends here: leave its heap out of the interpreter's final garbage collection,
# which would walk the whole analysis stack (about a second).
gc.freeze()
sys.exit(status)
