import sys

from attnsim.cli import main

sys.exit(main())
