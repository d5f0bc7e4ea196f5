import sys

from harmonium.cli.main import main

sys.exit(main())
