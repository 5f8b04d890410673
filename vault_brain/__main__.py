"""`python -m vault_brain`: the `vb` command line."""

import sys

from vault_brain.entry import main

if __name__ == "__main__":
    sys.exit(main())
