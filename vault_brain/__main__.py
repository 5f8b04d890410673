import sys

from vault_brain.entry import main

sys.exit(main())
