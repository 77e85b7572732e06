import sys

from graphops.cli import main

sys.exit(main())
