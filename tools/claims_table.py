"""Print a reproduction's claims.json as the Markdown table docs/papers/*.md carry:

    .venv/bin/python tools/claims_table.py out/lelli2011/claims.json
"""

import sys

from rtsched.reproduce.claims import markdown

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(markdown(sys.argv[1]))
