import sys

from scheduling.cli import main

sys.exit(main())
